#pragma once
// Per-VM milestone timeline of one storm. Observations arrive from several sources (provider watch/poll,
// beacon, TCP probe, the start call itself); the first observation of each milestone wins, later duplicates
// are ignored, and nothing is inferred (guest_agent does not imply running). Offsets are measured on the
// steady clock from the VM's start_requested; observations that arrive before start_requested is known (a
// watch can report "running" before vCenter's blocking start call returns) are held back and resolved when
// it is.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "providers/api/milestone.hpp"

namespace bootstorm::engine {

struct TimelineEntry {
  api::Milestone milestone = api::Milestone::running;
  double offset_s = 0;  // observed_mono - start_requested_mono
  double resolution_s = 0;
  api::Source source = api::Source::api;
  std::chrono::system_clock::time_point wall{};
  std::chrono::steady_clock::time_point mono{};
  std::string detail;
};

enum class VmState { waiting, started, ready, failed };

class MilestoneTimeline {
 public:
  // Called once for every accepted (first) observation, with its offset resolved.
  using Listener = std::function<void(const std::string& vm, const TimelineEntry& entry)>;

  MilestoneTimeline(api::Milestone ready_signal, Listener listener);

  // VMs of this storm (names). Events for other names are ignored.
  void add_vm(const std::string& name);
  // Start request written: fixes the origin of every offset (and records start_requested, source client).
  void set_started(const std::string& name, std::chrono::steady_clock::time_point written_mono,
                   std::chrono::system_clock::time_point written_wall);
  // Records an observation. Returns true when it was the first of its milestone for that VM (accepted now or
  // held until start_requested is known).
  bool observe(const api::MilestoneEvent& event);
  // Marks a VM failed (start failed, timeout); later observations of it are ignored. No-op once ready/failed.
  void fail(const std::string& name, const std::string& reason);

  // Marks every VM that is neither ready nor failed and whose start is older than `timeout` as failed with
  // "timeout waiting for <signal> after N s (last seen: <milestone> at X s)". Returns the VMs it failed.
  std::vector<std::pair<std::string, std::string>> expire(std::chrono::steady_clock::time_point now,
                                                          std::chrono::steady_clock::duration timeout);

  VmState state(const std::string& name) const;
  bool finished() const;  // every VM ready or failed
  std::size_t count(VmState s) const;
  std::size_t size() const { return vms_.size(); }
  std::optional<TimelineEntry> entry(const std::string& name, api::Milestone m) const;
  std::optional<std::chrono::steady_clock::time_point> started_at(const std::string& name) const;
  const std::string& reason(const std::string& name) const;
  api::Milestone ready_signal() const { return ready_signal_; }
  // Description of the latest milestone seen, e.g. "running at 12.3 s" ("nothing" when none).
  std::string last_seen(const std::string& name) const;

 private:
  struct Vm {
    VmState state = VmState::waiting;
    std::optional<std::chrono::steady_clock::time_point> start_mono;
    std::map<api::Milestone, TimelineEntry> entries;
    std::vector<api::MilestoneEvent> held;  // before start_requested was known
    std::string reason;
  };
  void accept(const std::string& name, Vm& vm, const api::MilestoneEvent& event);

  api::Milestone ready_signal_;
  Listener listener_;
  std::map<std::string, Vm> vms_;
};

}  // namespace bootstorm::engine
