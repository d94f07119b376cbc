#pragma once
// Small coroutine building blocks for the engine, all single-threaded (used from the engine's executor only):
// a FIFO semaphore that bounds how many operations are in flight, a wait group that lets a coroutine wait for
// spawned tasks, and a cancellable sleep.
#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>

#include "common/cancel.hpp"

namespace bootstorm::engine {

namespace asio = boost::asio;

// Bounds concurrency: acquire() suspends while `capacity` permits are taken; release() hands the permit to
// the longest waiter (FIFO), so a burst of acquirers proceeds in the order it arrived.
class AsyncSemaphore {
 public:
  AsyncSemaphore(asio::any_io_executor executor, std::size_t capacity)
      : executor_(std::move(executor)), available_(capacity == 0 ? 1 : capacity) {}

  asio::awaitable<void> acquire() {
    if (available_ > 0 && waiters_.empty()) {
      --available_;
      co_return;
    }
    auto waiter = std::make_shared<Waiter>(executor_);
    waiters_.push_back(waiter);
    while (!waiter->granted) co_await waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }

  void release() {
    while (!waiters_.empty()) {
      auto waiter = waiters_.front();
      waiters_.pop_front();
      waiter->granted = true;
      waiter->timer.cancel();
      return;
    }
    ++available_;
  }

  std::size_t waiting() const { return waiters_.size(); }

 private:
  struct Waiter {
    explicit Waiter(const asio::any_io_executor& ex)
        : timer(ex, std::chrono::steady_clock::time_point::max()) {}
    asio::steady_timer timer;
    bool granted = false;
  };
  asio::any_io_executor executor_;
  std::size_t available_;
  std::deque<std::shared_ptr<Waiter>> waiters_;
};

// RAII permit for AsyncSemaphore (release on scope exit, also when the coroutine frame is destroyed).
class Permit {
 public:
  explicit Permit(AsyncSemaphore& sem) : sem_(&sem) {}
  Permit(Permit&& other) noexcept : sem_(other.sem_) { other.sem_ = nullptr; }
  Permit(const Permit&) = delete;
  Permit& operator=(const Permit&) = delete;
  ~Permit() {
    if (sem_) sem_->release();
  }

 private:
  AsyncSemaphore* sem_;
};

// Counts outstanding tasks; wait() resumes when the count is back to zero (or the deadline passes).
class WaitGroup {
 public:
  explicit WaitGroup(asio::any_io_executor executor)
      : timer_(std::make_shared<asio::steady_timer>(executor, std::chrono::steady_clock::time_point::max())) {
  }

  void add(std::size_t n = 1) { count_ += n; }
  void done() {
    if (count_ > 0 && --count_ == 0) timer_->cancel();
  }
  std::size_t outstanding() const { return count_; }

  // True when every task finished, false when `deadline` came first.
  asio::awaitable<bool> wait(
      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    while (count_ > 0) {
      if (std::chrono::steady_clock::now() >= deadline) co_return false;
      // Re-arm with the deadline; done() cancels the wait when the count reaches zero.
      auto shared = timer_;
      shared->expires_at(deadline);
      co_await shared->async_wait(asio::as_tuple(asio::use_awaitable));
    }
    co_return true;
  }

 private:
  std::shared_ptr<asio::steady_timer> timer_;
  std::size_t count_ = 0;
};

// Sleeps until `until` or until `cancel` fires; returns false when cancelled.
inline asio::awaitable<bool> sleep_until(std::chrono::steady_clock::time_point until, CancelSignal cancel) {
  if (cancel.cancelled()) co_return false;
  auto ex = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(ex, until);
  std::weak_ptr<asio::steady_timer> weak = timer;
  // CancelSignal callbacks may run on another thread (signal handler thread): post the cancel to our
  // executor.
  cancel.subscribe([weak, ex] {
    asio::post(ex, [weak] {
      if (auto t = weak.lock()) t->cancel();
    });
  });
  co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  co_return !cancel.cancelled();
}

inline asio::awaitable<bool> sleep_for(std::chrono::steady_clock::duration d, CancelSignal cancel) {
  return sleep_until(std::chrono::steady_clock::now() + d, std::move(cancel));
}

// Sleeps `d` in short slices, checking `cancel` between them. For loops that sleep many times: unlike
// sleep_until it leaves no callback behind in the CancelSignal.
inline asio::awaitable<bool> sleep_checking(
    std::chrono::steady_clock::duration d, CancelSignal cancel,
    std::chrono::steady_clock::duration slice = std::chrono::milliseconds(50)) {
  auto ex = co_await asio::this_coro::executor;
  const auto until = std::chrono::steady_clock::now() + d;
  asio::steady_timer timer(ex);
  while (!cancel.cancelled()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= until) co_return true;
    timer.expires_at(std::min(until, now + slice));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  co_return false;
}

}  // namespace bootstorm::engine
