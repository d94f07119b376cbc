#pragma once
// StartBarrier: the storm's trigger. Sessions and connections are opened first (Provider::prepare_storm),
// then every start request is released at one instant (simultaneous) or on a fixed schedule (ramp,
// perSecond). Up to `max_concurrent` starts are in flight at once (storm.startConcurrency; by default every
// start) — vCenter's power start blocks until the VM is on, so starts must overlap, never run one after
// another. prepare_storm is told how many will be in flight. start_requested is the instant each request
// was completely written (StartResult::written_mono); the fire skew is last minus first. Retries are the
// provider's job.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "providers/api/provider.hpp"

namespace bootstorm::engine {

struct BarrierOptions {
  bool ramp = false;      // false: simultaneous
  double per_second = 0;  // ramp: starts released per second
  std::size_t max_concurrent = 64;
  // Open at this wall-clock instant (CLOCK_REALTIME, e.g. --start-at shared by the shards of a run) instead
  // of right after prepare_storm. The wait runs on the steady clock and is re-aimed at the wall-clock target
  // at least every second, so a clock step or slew during a long wait is followed.
  std::optional<std::chrono::system_clock::time_point> release_at_wall;
};

struct FireReport {
  std::size_t released = 0;  // start calls made
  std::size_t succeeded = 0;
  std::size_t failed = 0;
  std::size_t not_released = 0;  // cancelled before their turn
  std::optional<std::chrono::steady_clock::time_point> first_written, last_written;
  std::chrono::system_clock::time_point first_written_wall{};
  std::chrono::steady_clock::time_point released_at{};    // the instant the barrier opened
  std::chrono::system_clock::time_point released_wall{};  // CLOCK_REALTIME when the barrier opened
  double fire_skew_ms = 0;                                // last_written - first_written
  // With release_at_wall: how late (positive) or early the barrier opened, and the first start request was
  // written, measured on CLOCK_REALTIME against the target.
  std::optional<double> release_offset_ms, first_written_offset_ms;
  std::size_t peak_in_flight = 0;
};

// Start requests in flight at once for a burst of `starts`: storm.startConcurrency when the plan sets it
// (> 0); otherwise every start, unless the platform caps its bursts (Capabilities::start_burst_limit, not
// for batched starts: one PowerOnMultiVM call carries them all). apiBudget.maxConcurrent does not apply: a
// burst held to it fires in waves, one answer time apart.
std::size_t burst_concurrency(int plan_start_concurrency, const api::Capabilities& caps, std::size_t starts);

using StartCallback = std::function<void(const api::VmHandle& vm, const Expected<api::StartResult>& result)>;

class StartBarrier {
 public:
  StartBarrier(api::Provider& provider, BarrierOptions options) : provider_(provider), options_(options) {}

  // prepare_storm(vms.size()), then (with release_at_wall) wait for the instant, then release. `on_result`
  // runs for every VM as its start completes (in completion order; Error cancelled for VMs not released
  // because `cancel` fired). Completes when every start call returned. Error only when prepare_storm failed
  // (nothing was started then).
  boost::asio::awaitable<Expected<FireReport>> fire(const std::vector<api::VmHandle>& vms,
                                                    StartCallback on_result, CancelSignal cancel);

  // Release offset of the i-th VM (0-based) relative to the barrier opening.
  std::chrono::steady_clock::duration release_offset(std::size_t index) const;

 private:
  api::Provider& provider_;
  BarrierOptions options_;
};

}  // namespace bootstorm::engine
