#pragma once
// StartBarrier: the storm's trigger. Sessions and connections are opened first (Provider::prepare_storm),
// then every start request is released at one instant (simultaneous) or on a fixed schedule (ramp,
// perSecond). Up to `max_concurrent` starts are in flight at once — vCenter's power start blocks until the
// VM is on, so starts must overlap, never run one after another. start_requested is the instant each request
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
};

struct FireReport {
  std::size_t released = 0;  // start calls made
  std::size_t succeeded = 0;
  std::size_t failed = 0;
  std::size_t not_released = 0;  // cancelled before their turn
  std::optional<std::chrono::steady_clock::time_point> first_written, last_written;
  std::chrono::system_clock::time_point first_written_wall{};
  std::chrono::steady_clock::time_point released_at{};  // the instant the barrier opened
  double fire_skew_ms = 0;                              // last_written - first_written
  std::size_t peak_in_flight = 0;
};

using StartCallback = std::function<void(const api::VmHandle& vm, const Expected<api::StartResult>& result)>;

class StartBarrier {
 public:
  StartBarrier(api::Provider& provider, BarrierOptions options) : provider_(provider), options_(options) {}

  // prepare_storm(vms.size()), then release. `on_result` runs for every VM as its start completes (in
  // completion order; Error cancelled for VMs not released because `cancel` fired). Completes when every
  // start call returned. Error only when prepare_storm failed (nothing was started then).
  boost::asio::awaitable<Expected<FireReport>> fire(const std::vector<api::VmHandle>& vms,
                                                    StartCallback on_result, CancelSignal cancel);

  // Release offset of the i-th VM (0-based) relative to the barrier opening.
  std::chrono::steady_clock::duration release_offset(std::size_t index) const;

 private:
  api::Provider& provider_;
  BarrierOptions options_;
};

}  // namespace bootstorm::engine
