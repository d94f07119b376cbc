#include "common/async/token_bucket.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <stdexcept>

namespace bootstorm::async {

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

bool TokenBucket::try_take(Clock::time_point now) {
  refill(now);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

bool TokenBucket::full(Clock::time_point now) {
  refill(now);
  return tokens_ >= burst_;
}

void TokenBucket::charge(Clock::time_point now) {
  refill(now);
  tokens_ = std::max(tokens_ - 1.0, -rate_);
}

RateLimiter::RateLimiter(asio::any_io_executor executor, double rate, double burst)
    : executor_(std::move(executor)) {
  if (rate > 0) bucket_.emplace(rate, burst, TokenBucket::Clock::now());
}

void RateLimiter::charge() {
  if (bucket_) bucket_->charge(TokenBucket::Clock::now());
}

asio::awaitable<void> RateLimiter::acquire() {
  ++acquired_;
  if (!bucket_) co_return;
  const auto now = TokenBucket::Clock::now();
  const auto ready = now + bucket_->reserve(now);
  constexpr auto kSlice = std::chrono::milliseconds(200);
  asio::steady_timer timer(executor_);
  for (auto t = TokenBucket::Clock::now(); t < ready; t = TokenBucket::Clock::now()) {
    if (stop_flag_ && *stop_flag_) co_return;
    timer.expires_at(stop_flag_ ? std::min<TokenBucket::Clock::time_point>(ready, t + kSlice) : ready);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

asio::awaitable<void> pay_for_call(RateLimiter* limiter, CallPacing pacing) {
  if (!limiter || pacing.prepaid) co_return;
  if (pacing.urgent) {
    limiter->charge();
  } else {
    co_await limiter->acquire();
  }
}

}  // namespace bootstorm::async
