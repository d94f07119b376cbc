#pragma once
// Resolution bookkeeping for polled milestones.
//
// Every poll is a probe with two instants: when its request was sent and when its answer arrived. A negative
// answer means the milestone had not happened when the server answered, so not before the request was sent;
// a positive answer means it had happened by the time the answer arrived. So the true instant lies in
// [last negative request sent, first positive answer arrived]: the event is stamped with the positive
// answer's arrival and its resolution is the width of that interval.
//
// Milestones are ordered (running < guest_agent < ip_assigned): a negative for one is a negative for every
// later one (vCenter answers 503 for the guest identity until Tools runs, Tools cannot run in a powered-off
// VM), and a positive for one is a positive for every earlier one not yet seen.
//
// Until a VM has a negative observation, its baseline bounds the interval: the moment its power start was
// written when known (nothing can happen before it), else when observe() began.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "providers/api/milestone.hpp"

namespace bootstorm::vsphere {

struct Probe {
  std::chrono::steady_clock::time_point sent{};
  std::chrono::steady_clock::time_point arrived{};
  std::chrono::system_clock::time_point arrived_wall{};
};

class MilestoneTracker {
 public:
  // `tracked` in boot order, e.g. {running, guest_agent, ip_assigned}.
  MilestoneTracker(std::vector<api::Milestone> tracked, std::chrono::steady_clock::time_point baseline);

  // `baseline`: when the VM's start request was written, if known (else the tracker's baseline).
  void add_vm(const std::string& vm,
              std::optional<std::chrono::steady_clock::time_point> baseline = std::nullopt);

  // Records a negative answer for `m` (and every later tracked milestone not yet reached).
  void negative(const std::string& vm, api::Milestone m, const Probe& probe);
  // Records a positive answer; returns the events it produces (for `m` and any earlier milestone not yet
  // reached), in boot order. Empty when `m` was already reached.
  std::vector<api::MilestoneEvent> positive(const std::string& vm, api::Milestone m, const Probe& probe,
                                            const std::string& detail = {});

  bool reached(const std::string& vm, api::Milestone m) const;
  // The first tracked milestone `vm` has not reached; nullopt when it reached them all.
  std::optional<api::Milestone> next_pending(const std::string& vm) const;
  bool all_reached() const;
  std::size_t pending_vms() const;

 private:
  struct State {
    bool reached = false;
    std::optional<std::chrono::steady_clock::time_point> last_negative_sent;
  };
  std::size_t index_of(api::Milestone m) const;
  std::vector<api::Milestone> tracked_;
  std::chrono::steady_clock::time_point baseline_;
  struct Vm {
    std::chrono::steady_clock::time_point baseline;
    std::vector<State> states;
  };
  std::map<std::string, Vm> vms_;
};

}  // namespace bootstorm::vsphere
