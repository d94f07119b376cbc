// The lab's clock: the event queue, the loop that interleaves events with flow completions, and in real
// mode the asio timer that drives it from the wall clock.

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <cassert>
#include <chrono>

#include "simulator/model/detail/lab_impl.hpp"

namespace bootstorm::sim::model {

double Lab::Impl::real_now() const {
  return start_unix + std::chrono::duration<double>(std::chrono::steady_clock::now() - anchor).count();
}

std::uint64_t Lab::Impl::schedule_at(double time, std::function<void()> fn) {
  const std::uint64_t id = next_event++;
  events.push(Event{std::max(time, now_), id});
  event_fns.emplace(id, std::move(fn));
  return id;
}

double Lab::Impl::next_event_time() {
  while (!events.empty() && !event_fns.count(events.top().seq)) events.pop();
  return events.empty() ? kInf : events.top().time;
}

void Lab::Impl::process_until(double until) {
  if (processing) return;
  processing = true;
  for (;;) {
    if (dirty) recompute();
    const double t = std::min(next_event_time(), next_flow_time);
    if (t > until) break;
    const double at = std::max(t, now_);
    settle(at);
    now_ = at;
    if (next_flow_time <= now_) complete_due_flows();
    while (next_event_time() <= now_) {
      const std::uint64_t seq = events.top().seq;
      events.pop();
      auto it = event_fns.find(seq);
      std::function<void()> fn = std::move(it->second);
      event_fns.erase(it);
      ++stats.events_processed;
      fn();
    }
  }
  if (until > now_ && until < kInf) {
    settle(until);
    now_ = until;
  }
  processing = false;
}

void Lab::Impl::catch_up() {
  if (!virtual_mode && !processing) process_until(real_now() + 1e-6);
}

void Lab::Impl::after_mutation() {
  if (virtual_mode || processing) return;
  process_until(now_);
  arm_timer();
}

void Lab::Impl::arm_timer() {
  if (virtual_mode || !timer) return;
  if (dirty) recompute();
  const double next = std::min(next_event_time(), next_flow_time);
  timer->cancel();
  if (next == kInf) return;
  const auto delay = std::chrono::duration<double>(std::max(0.0, next - start_unix));
  timer->expires_at(anchor + std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay));
  timer->async_wait([this, alive = alive](const boost::system::error_code& ec) {
    if (ec || !*alive) return;
    process_until(real_now() + 1e-6);
    arm_timer();
  });
}

void Lab::shutdown() {
  Impl& m = *impl_;
  *m.alive = false;
  m.alive = std::make_shared<bool>(true);  // a new token for a later restart of the timer
  if (m.timer) m.timer->cancel();
  m.event_fns.clear();
  while (!m.events.empty()) m.events.pop();
}

double Lab::now() const {
  return impl_->virtual_mode ? impl_->now_ : impl_->real_now();
}

void Lab::run_until(double until) {
  assert(impl_->virtual_mode && "run_until is for virtual time");
  impl_->process_until(until);
}

void Lab::advance(double seconds) {
  run_until(impl_->now_ + seconds);
}

bool Lab::run_until_idle(double deadline) {
  Impl& m = *impl_;
  assert(m.virtual_mode && "run_until_idle is for virtual time");
  for (;;) {
    if (m.dirty) m.recompute();
    const double next = std::min(m.next_event_time(), m.next_flow_time);
    if (next == kInf) return true;
    if (next > deadline) {
      m.process_until(deadline);
      return false;
    }
    m.process_until(next);
  }
}

std::uint64_t Lab::schedule(double delay_s, std::function<void()> fn) {
  impl_->catch_up();
  const auto id = impl_->schedule_at(impl_->now_ + std::max(0.0, delay_s), std::move(fn));
  impl_->after_mutation();
  return id;
}

void Lab::cancel_scheduled(std::uint64_t handle) {
  impl_->cancel_event(handle);
}

}  // namespace bootstorm::sim::model
