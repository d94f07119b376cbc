#pragma once
// The request budget: a token bucket on an injected clock (pure arithmetic, unit-testable without timers)
// and RateLimiter, its coroutine face that sleeps until a reserved token has been refilled.
//
// Reservation model: each request takes one token, possibly driving the balance negative, and is told how
// long to wait until its token has been refilled. Over any window of length T the requests released are
// <= burst + rate * T.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

namespace bootstorm::async {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  // rate > 0 tokens/s (std::invalid_argument otherwise); burst >= 1 tokens. Starts full.
  TokenBucket(double rate, double burst, Clock::time_point now);

  // Takes one token; returns how long the caller must wait before sending (zero when a token was there).
  Clock::duration reserve(Clock::time_point now);
  // Takes one token without waiting, for requests that must not queue behind thousands of paced ones (the
  // storm's power starts, a watch's list): later reservations wait longer, so the average rate stays within
  // the budget. The debt is capped at one second of budget so that a burst of thousands of such requests
  // does not silence the paced ones for minutes.
  void charge(Clock::time_point now);
  // Takes one token only if one is there; false, and nothing taken, when the bucket is short (a request to
  // refuse rather than delay: the beacon listener's failed requests per address).
  bool try_take(Clock::time_point now);
  // Refilled to its burst: a bucket in this state behaves like a new one.
  bool full(Clock::time_point now);

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

// One executor, no locks. A rate <= 0 means no budget: acquire() never waits.
class RateLimiter {
 public:
  RateLimiter(boost::asio::any_io_executor executor, double rate, double burst = 1.0);
  // Waits for a token. Returns early (without a token) once the stop flag is true: checked every 200 ms, so
  // a stop is noticed promptly even behind a long debt.
  boost::asio::awaitable<void> acquire();
  void charge();
  void set_stop_flag(std::shared_ptr<const bool> flag) { stop_flag_ = std::move(flag); }
  std::uint64_t acquired() const { return acquired_; }
  // 0 when there is no budget.
  double rate() const { return bucket_ ? bucket_->rate() : 0.0; }

 private:
  boost::asio::any_io_executor executor_;
  std::optional<TokenBucket> bucket_;
  std::shared_ptr<const bool> stop_flag_;
  std::uint64_t acquired_ = 0;
};

// How one API call meets an active limiter. An `urgent` call (the storm's power starts) takes its token
// without waiting, so the start barrier is never delayed and later calls pay for it; a `prepaid` call already
// took its token (e.g. before it was spawned). Call options of the API clients derive from it.
struct CallPacing {
  bool urgent = false;
  bool prepaid = false;
};

// The budget step of one API call (`limiter` nullptr: no budget).
boost::asio::awaitable<void> pay_for_call(RateLimiter* limiter, CallPacing pacing);

}  // namespace bootstorm::async
