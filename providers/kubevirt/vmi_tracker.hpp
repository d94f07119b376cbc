#pragma once
// Turns VirtualMachineInstance states seen by a list + watch into milestone events — pure logic, no I/O, so
// that the reconciliation rules are unit-tested on their own.
//
// Timing rules:
//  * A watch event delivered promptly is stamped with the client's clocks at the moment its line was handed
//    to the provider (source watch). Its resolution is max(0.001 s, the bound the provider measured on how
//    long the line may have waited in this process before that moment: the event loop's queueing delay and
//    the decoding of earlier lines of the same read — see LatenessMonitor in kubevirt_provider.cpp). The
//    time the API server took to publish the change is not part of it (the platform's own latency).
//  * A state found by a (re-)list, or replayed by a watch right after a reconnect, may be late. Milestones
//  that
//    the object carries a timestamp for (status.phaseTransitionTimestamps for scheduled/running, the
//    AgentConnected condition's lastTransitionTime for guest_agent) are recovered from it: the API truncates
//    to whole seconds, so the milestone happened in [T, T+1 s) — it is reported at min(T + 1 s, arrival) with
//    resolution 1 s, source recovered. Milestones without a timestamp (ip_assigned) are reported at arrival
//    with resolution = arrival - the last moment the stream was known to be healthy, source recovered.
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/kube/client_instant.hpp"
#include "providers/api/milestone.hpp"

namespace bootstorm::kubevirt {

inline constexpr std::array<api::Milestone, 4> kObservedMilestones = {
    api::Milestone::scheduled, api::Milestone::running, api::Milestone::guest_agent,
    api::Milestone::ip_assigned};
inline constexpr double kWatchResolutionS = 0.001;
inline constexpr double kTimestampResolutionS = 1.0;

using kube::ClientInstant;

// What one VMI object says about the milestones (pure decoding of status).
struct VmiStatusView {
  std::string name;
  std::string phase;
  std::string node;
  bool scheduled = false;
  bool running = false;
  bool agent_connected = false;
  std::string ip;
  std::optional<std::chrono::system_clock::time_point> scheduled_at;  // phaseTransitionTimestamps (1 s)
  std::optional<std::chrono::system_clock::time_point> running_at;
  std::optional<std::chrono::system_clock::time_point> agent_at;  // AgentConnected lastTransitionTime
  // PodScheduled=False with reason Unschedulable: the scheduler's message (no node has room, a selector
  // matches nothing, ...). Empty otherwise.
  std::string unschedulable;
};
VmiStatusView view_vmi(const nlohmann::json& vmi);

class VmiTracker {
 public:
  // `vms`: the VM names to follow (VMIs share their VM's name); others are ignored. `since`: when observing
  // began (bounds the resolution of the first list's timestamp-less milestones).
  VmiTracker(const std::vector<std::string>& vms, ClientInstant since);

  // A watch event line arrived at `at`. `catch_up` is true for events replayed right after a reconnect.
  // `lateness_bound_s`: how late `at` may be after the line reached this process (resolution of prompt
  // events, at least kWatchResolutionS).
  std::vector<api::MilestoneEvent> on_watch_object(const nlohmann::json& vmi, ClientInstant at, bool catch_up,
                                                   double lateness_bound_s = 0);
  // A (re-)list answered at `at`.
  std::vector<api::MilestoneEvent> on_listed_object(const nlohmann::json& vmi, ClientInstant at);
  // Any line (event or bookmark) arrived: the stream was healthy at `at`.
  void note_stream_alive(ClientInstant at) { last_alive_ = at; }

  bool complete() const { return reached_count_ == tracked_.size() * kObservedMilestones.size(); }
  bool tracks(const std::string& name) const { return tracked_.count(name) != 0; }
  std::size_t reached(const std::string& name) const;
  std::size_t reached_total() const { return reached_count_; }
  // VMIs that reached a final phase without all milestones (Failed, Succeeded early): for warnings.
  const std::set<std::string>& failed() const { return failed_; }
  // Followed VMIs that the scheduler currently cannot place, with its message: they will not boot unless
  // capacity frees up, so the user is told instead of left waiting for the storm timeout.
  const std::map<std::string, std::string>& unschedulable() const { return unschedulable_; }

 private:
  std::vector<api::MilestoneEvent> apply(const nlohmann::json& vmi, ClientInstant at, bool late,
                                         double lateness_bound_s);

  std::map<std::string, std::array<bool, 4>> tracked_;
  std::size_t reached_count_ = 0;
  ClientInstant last_alive_;
  std::set<std::string> failed_;
  std::map<std::string, std::string> unschedulable_;
};

}  // namespace bootstorm::kubevirt
