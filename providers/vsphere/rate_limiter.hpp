#pragma once
// API budget enforcement for observe(): a token bucket shared by every request the provider makes while
// observing, plus a small async semaphore for the per-host clone limits.
//
// The provider runs on one executor (see providers/api/provider.hpp), so neither class locks.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>

namespace bootstorm::vsphere {

// Pure token-bucket arithmetic on an injected clock (unit-testable without timers). Reservation model: each
// request takes one token, possibly driving the balance negative, and is told how long to wait until its
// token has been refilled. Over any window of length T the requests released are <= burst + rate * T.
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  // rate > 0 tokens/s; burst >= 1 tokens. Starts full.
  TokenBucket(double rate, double burst, Clock::time_point now);

  // Takes one token; returns how long the caller must wait before sending (zero when a token was there).
  Clock::duration reserve(Clock::time_point now);
  // Takes one token without waiting (requests that must not be delayed, e.g. the storm's power starts):
  // later reservations wait longer, so the average rate stays within the budget. The debt is capped at one
  // second of budget so that a storm of thousands of starts does not silence observation for minutes.
  void charge(Clock::time_point now);

  double rate() const { return rate_; }
  double burst() const { return burst_; }
  double tokens(Clock::time_point now);

 private:
  void refill(Clock::time_point now);
  double rate_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

// Async wrapper: acquire() suspends on a steady_timer until the reserved token is available.
class RateLimiter {
 public:
  RateLimiter(boost::asio::any_io_executor executor, double rate, double burst = 1.0);
  // Waits for a token. Returns early (without a token) once *stop_flag is true.
  boost::asio::awaitable<void> acquire();
  void charge() { bucket_.charge(TokenBucket::Clock::now()); }
  void set_stop_flag(std::shared_ptr<const bool> flag) { stop_flag_ = std::move(flag); }
  std::uint64_t acquired() const { return acquired_; }
  double rate() const { return bucket_.rate(); }

 private:
  boost::asio::any_io_executor executor_;
  TokenBucket bucket_;
  std::shared_ptr<const bool> stop_flag_;
  std::uint64_t acquired_ = 0;
};

// Counting semaphore for coroutines on one executor; waiters are released in FIFO order.
class AsyncSemaphore {
 public:
  AsyncSemaphore(boost::asio::any_io_executor executor, std::size_t permits);
  boost::asio::awaitable<void> acquire();
  void release();
  std::size_t available() const { return permits_; }
  std::size_t waiting() const { return waiters_.size(); }

 private:
  struct Waiter;
  boost::asio::any_io_executor executor_;
  std::size_t permits_;
  std::deque<std::shared_ptr<Waiter>> waiters_;
};

// RAII permit for AsyncSemaphore.
class SemaphorePermit {
 public:
  explicit SemaphorePermit(AsyncSemaphore* sem) : sem_(sem) {}
  SemaphorePermit(SemaphorePermit&& other) noexcept : sem_(other.sem_) { other.sem_ = nullptr; }
  SemaphorePermit& operator=(SemaphorePermit&&) = delete;
  ~SemaphorePermit() {
    if (sem_) sem_->release();
  }

 private:
  AsyncSemaphore* sem_;
};

}  // namespace bootstorm::vsphere
