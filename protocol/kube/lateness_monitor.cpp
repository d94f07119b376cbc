// Lateness bound of watch lines (see lateness_monitor.hpp).
#include "protocol/kube/lateness_monitor.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace bootstorm::kube {
namespace asio = boost::asio;

LatenessMonitor::LatenessMonitor(asio::any_io_executor executor, bool other_thread)
    : timer_(std::move(executor)), other_thread_(other_thread) {}

void LatenessMonitor::start() {
  auto self = shared_from_this();
  asio::co_spawn(
      timer_.get_executor(),
      [self]() -> asio::awaitable<void> {
        while (!self->stopped_) {
          self->due_ = Clock::now() + kProbePeriod;
          self->timer_.expires_at(self->due_);
          co_await self->timer_.async_wait(asio::as_tuple(asio::use_awaitable));
          if (self->stopped_) break;
          const auto ran = Clock::now();
          self->record(ran, ran - self->due_);
        }
      },
      asio::detached);
}

void LatenessMonitor::stop() {
  if (!other_thread_) {
    stopped_ = true;
    timer_.cancel();
    return;
  }
  asio::post(timer_.get_executor(), [self = shared_from_this()] {
    self->stopped_ = true;
    self->timer_.cancel();
  });
}

double LatenessMonitor::line_started(Clock::time_point at) {
  auto queueing = std::max(Clock::duration::zero(), at - due_);
  for (const auto& [when, lag] : recent_) {
    if (at - when <= kProbeWindow) queueing = std::max(queueing, lag);
  }
  if (!in_backlog_ || at - last_line_end_ > 2 * queueing + kGapMargin) backlog_start_ = at;
  in_backlog_ = true;
  return std::chrono::duration<double>(2 * queueing + (at - backlog_start_)).count();
}

void LatenessMonitor::record(Clock::time_point ran, Clock::duration lag) {
  // Sliding-window maximum: drop entries that are older than the window or dominated by the new one.
  while (!recent_.empty() && (ran - recent_.front().first > kProbeWindow)) recent_.pop_front();
  while (!recent_.empty() && recent_.back().second <= lag) recent_.pop_back();
  recent_.emplace_back(ran, lag);
}

}  // namespace bootstorm::kube
