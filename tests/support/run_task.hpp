#pragma once
// Runs one coroutine to completion on a test's io_context and returns its result (or rethrows what it
// threw). It stops as soon as the task is done, so servers and background loops sharing the io_context do
// not keep it running; work they left behind runs on the next call.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>

namespace bootstorm::testing {

namespace detail {
inline void drive(boost::asio::io_context& io, const bool& done, const std::exception_ptr& error) {
  io.restart();
  while (!done && io.run_one()) {
  }
  if (error) std::rethrow_exception(error);
  if (!done) throw std::logic_error("run_task: the io_context ran out of work before the task finished");
}
}  // namespace detail

template <class T>
T run_task(boost::asio::io_context& io, boost::asio::awaitable<T> task) {
  std::optional<T> out;
  bool done = false;
  std::exception_ptr error;
  boost::asio::co_spawn(
      io, [&]() -> boost::asio::awaitable<void> { out.emplace(co_await std::move(task)); },
      [&](std::exception_ptr e) {
        error = e;
        done = true;
      });
  detail::drive(io, done, error);
  return std::move(*out);
}

inline void run_task(boost::asio::io_context& io, boost::asio::awaitable<void> task) {
  bool done = false;
  std::exception_ptr error;
  boost::asio::co_spawn(io, std::move(task), [&](std::exception_ptr e) {
    error = e;
    done = true;
  });
  detail::drive(io, done, error);
}

}  // namespace bootstorm::testing
