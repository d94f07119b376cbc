#pragma once
// Bounded fan-out: runs `fn(item)` for every item with at most `limit` in flight, on the caller's executor,
// and returns when all have finished. Items start in order. An exception from one item is logged with `what`
// and does not stop the others (expected failures travel as values; an exception here is a bug, and one bug
// must not abandon the rest of a cleanup).
//
// `limit` workers pull the next index from a shared cursor, so 10,000 items cost `limit` coroutine frames,
// not 10,000 parked on a semaphore.
#include <algorithm>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <cstddef>
#include <exception>
#include <memory>
#include <ranges>
#include <string>
#include <utility>

#include "common/async/wait_group.hpp"

namespace bootstorm::async {

// Logs what a spawned task's completion handler received, if anything: "<what> failed unexpectedly: ...".
void log_task_exception(std::exception_ptr e, const std::string& what);

template <std::ranges::random_access_range Range, class Fn>
boost::asio::awaitable<void> bounded_for_each(Range& items, std::size_t limit, Fn fn, std::string what) {
  auto ex = co_await boost::asio::this_coro::executor;
  const auto n = static_cast<std::size_t>(std::ranges::size(items));
  if (n == 0) co_return;
  const std::size_t workers = std::min(n, std::max<std::size_t>(1, limit));
  std::size_t next = 0;
  WaitGroup group(ex);
  auto worker = [&]() -> boost::asio::awaitable<void> {
    while (next < n) {
      auto& item = std::ranges::begin(items)[static_cast<std::ptrdiff_t>(next++)];
      try {
        co_await fn(item);
      } catch (...) {
        log_task_exception(std::current_exception(), what);
      }
    }
  };
  for (std::size_t w = 0; w < workers; ++w) {
    group.add();
    boost::asio::co_spawn(ex, worker(), [&group, &what](std::exception_ptr e) {
      log_task_exception(e, what);
      group.done();
    });
  }
  co_await group.wait();
}

}  // namespace bootstorm::async
