#include "providers/vsphere/rate_limiter.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <stdexcept>

namespace bootstorm::vsphere {

namespace asio = boost::asio;

TokenBucket::TokenBucket(double rate, double burst, Clock::time_point now)
    : rate_(rate), burst_(std::max(1.0, burst)), tokens_(std::max(1.0, burst)), last_(now) {
  if (!(rate > 0)) throw std::invalid_argument("TokenBucket: rate must be > 0");
}

void TokenBucket::refill(Clock::time_point now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
  last_ = now;
}

double TokenBucket::tokens(Clock::time_point now) {
  refill(now);
  return tokens_;
}

TokenBucket::Clock::duration TokenBucket::reserve(Clock::time_point now) {
  refill(now);
  tokens_ -= 1.0;
  if (tokens_ >= 0) return Clock::duration::zero();
  // The deficit is refilled at `rate` tokens per second.
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(-tokens_ / rate_));
}

void TokenBucket::charge(Clock::time_point now) {
  refill(now);
  tokens_ = std::max(tokens_ - 1.0, -rate_);
}

RateLimiter::RateLimiter(asio::any_io_executor executor, double rate, double burst)
    : executor_(std::move(executor)), bucket_(rate, burst, TokenBucket::Clock::now()) {}

asio::awaitable<void> RateLimiter::acquire() {
  const auto ready = TokenBucket::Clock::now() + bucket_.reserve(TokenBucket::Clock::now());
  ++acquired_;
  // Sleep in slices so that a stop request is noticed within 200 ms even after a long debt.
  constexpr auto kSlice = std::chrono::milliseconds(200);
  asio::steady_timer timer(executor_);
  for (auto now = TokenBucket::Clock::now(); now < ready; now = TokenBucket::Clock::now()) {
    if (stop_flag_ && *stop_flag_) co_return;
    timer.expires_at(std::min<TokenBucket::Clock::time_point>(ready, now + kSlice));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

struct AsyncSemaphore::Waiter {
  explicit Waiter(asio::any_io_executor ex) : timer(ex, asio::steady_timer::time_point::max()) {}
  asio::steady_timer timer;
  bool granted = false;
};

AsyncSemaphore::AsyncSemaphore(asio::any_io_executor executor, std::size_t permits)
    : executor_(std::move(executor)), permits_(permits) {}

asio::awaitable<void> AsyncSemaphore::acquire() {
  if (permits_ > 0 && waiters_.empty()) {
    --permits_;
    co_return;
  }
  auto waiter = std::make_shared<Waiter>(executor_);
  waiters_.push_back(waiter);
  while (!waiter->granted) {
    co_await waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

void AsyncSemaphore::release() {
  if (!waiters_.empty()) {
    auto next = waiters_.front();
    waiters_.pop_front();
    next->granted = true;  // the permit passes directly to the waiter
    next->timer.cancel();
    return;
  }
  ++permits_;
}

}  // namespace bootstorm::vsphere
