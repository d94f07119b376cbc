#pragma once
// Runs coroutine test bodies on an io_context over real loopback sockets, with a watchdog so that a hang
// fails the test instead of blocking the suite.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <exception>

#include "protocol/http/client.hpp"
#include "protocol/http/server.hpp"

// gtest's ASSERT_* macros `return`, which a coroutine cannot do.
#define CO_ASSERT(condition)                             \
  if (!(condition)) {                                    \
    ADD_FAILURE() << "assertion failed: " << #condition; \
    co_return;                                           \
  } else                                                 \
    (void)0

namespace bootstorm::http::test {

namespace net = boost::asio;
using namespace std::chrono_literals;

// Runs `body` (a callable returning awaitable<void>) to completion; fails the test after `limit`.
template <class Body>
void run(net::io_context& io, Body body, std::chrono::milliseconds limit = 10s) {
  bool done = false;
  std::exception_ptr failure;
  net::steady_timer watchdog(io, limit);
  watchdog.async_wait([&](boost::system::error_code ec) {
    if (!ec) io.stop();
  });
  net::co_spawn(io, std::move(body), [&](std::exception_ptr e) {
    failure = e;
    done = true;
    watchdog.cancel();
    io.stop();
  });
  io.restart();
  io.run();
  if (failure) std::rethrow_exception(failure);
  EXPECT_TRUE(done) << "test body did not finish within " << limit.count() << " ms";
}

inline net::awaitable<void> sleep_for(std::chrono::milliseconds delay) {
  net::steady_timer timer(co_await net::this_coro::executor);
  timer.expires_after(delay);
  co_await timer.async_wait(net::use_awaitable);
}

inline Request with_timeout(Request request, std::chrono::milliseconds timeout) {
  request.timeout = timeout;
  return request;
}

inline Request as_idempotent(Request request) {
  request.idempotent = true;
  return request;
}

// Sends `n` GET / at once (each in its own coroutine) and waits for all of them; returns how many were
// answered 200 on a reused (pooled or prewarmed) connection.
inline net::awaitable<int> concurrent_gets_on_reused_connections(Client& client, int n) {
  auto executor = co_await net::this_coro::executor;
  int reused = 0, finished = 0;
  for (int i = 0; i < n; ++i) {
    net::co_spawn(
        executor,
        [&]() -> net::awaitable<void> {
          auto response = co_await client.request(Request("GET", "/"));
          if (response && response->status == 200 && response->reused_connection) ++reused;
          ++finished;
        },
        net::detached);
  }
  while (finished < n) co_await sleep_for(std::chrono::milliseconds(5));
  co_return reused;
}

inline ServerResponse text(int status, std::string body) {
  ServerResponse response;
  response.status = status;
  response.body = std::move(body);
  response.headers.emplace_back("Content-Type", "text/plain");
  return response;
}

}  // namespace bootstorm::http::test
