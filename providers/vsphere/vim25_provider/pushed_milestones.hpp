#pragma once
// Turns the PropertyCollector's pushed VM changes into milestone events — pure logic, no I/O.
//
// The observation filter watches runtime.powerState (poweredOn: running), guest.toolsRunningStatus
// (guestToolsRunning: guest_agent), guest.ipAddress and guest.net (an address: ip_assigned) and runtime.host
// (where the VM runs). A change carried by the answer to WaitForUpdatesEx call k is stamped with that
// answer's arrival. When did it really happen? The server built the answer to call k-1 without it, and it
// built that answer after call k-1 was sent; so the change happened after call k-1 was sent, and no earlier
// than the VM's own power start. Its resolution is the width of that interval:
//   arrival(k) - max(sent(k-1), start written).
// In a storm the calls come back to back, and that is about two round trips; a quiet call answers empty
// after maxWaitSeconds, which bounds it after a quiet spell. An object entering the filter (the first answer,
// or the first after the collector was made again) shows state of any age: only the VM's power start bounds
// it. The server's own time to publish a change is not part of it (the platform's latency, as for a
// Kubernetes watch).
//
// A later milestone implies the earlier ones (Tools cannot run in a powered-off VM): they are reported with
// it. A milestone is reported once per VM.
//
// A VM already on in an answer read before any start of the storm was sent (the filter's initial state)
// booted before its start: none of its milestones is reported, ever, and it is not waited for. Its power-on
// fails on vCenter (InvalidPowerState), which says why; the observer names such VMs.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/vim25/types.hpp"
#include "providers/api/milestone.hpp"

namespace bootstorm::vsphere::vim25 {

// One answer of WaitForUpdatesEx as the client saw it.
struct UpdateWindow {
  std::chrono::steady_clock::time_point previous_sent{};  // when the call before this one was sent
  std::chrono::steady_clock::time_point arrived{};
  std::chrono::system_clock::time_point arrived_wall{};
  // The answer was read before any of the storm's starts was sent: its states predate the storm.
  bool before_starts = false;
};

// A VM that runs on another host than planned (DRS placed or moved it).
struct HostMove {
  std::string vm;
  std::string planned_host_id;
  std::string host_id;
};

class PushedMilestones {
 public:
  // `began`: when observation began (the lower bound for a VM whose start time is unknown).
  explicit PushedMilestones(std::chrono::steady_clock::time_point began) : began_(began) {}

  // A VM to follow: its name, its managed object id, the host the plan put it on (a HostSystem id, "" when
  // unknown) and when its power start was written, if known.
  void add_vm(const std::string& name, const std::string& id, const std::string& planned_host_id,
              std::optional<std::chrono::steady_clock::time_point> start_written = std::nullopt);
  // The power start of a VM was written (a tighter lower bound than `began`).
  void start_written(const std::string& id, std::chrono::steady_clock::time_point at);

  // The events an update set carries, in boot order per VM.
  std::vector<api::MilestoneEvent> apply(const UpdateSet& set, const UpdateWindow& window);
  // Hosts that differ from the plan, each reported once.
  std::vector<HostMove> take_moves();
  // The VMs found on before the storm's starts (by name), each reported once.
  std::vector<std::string> take_already_on();

  bool all_reached() const;
  std::size_t pending_vms() const;
  bool reached(const std::string& id, api::Milestone m) const;

  static constexpr std::array<api::Milestone, 3> kObserved = {
      api::Milestone::running, api::Milestone::guest_agent, api::Milestone::ip_assigned};

 private:
  struct Vm {
    std::string name;
    std::string planned_host;
    std::string host;
    bool move_reported = false;
    bool on_before_start = false;
    std::optional<std::chrono::steady_clock::time_point> start_written;
    std::array<bool, 3> reached{};
  };
  std::chrono::steady_clock::time_point began_;
  std::map<std::string, Vm> vms_;  // by managed object id
  std::vector<HostMove> moves_;
  std::vector<std::string> already_on_;
};

}  // namespace bootstorm::vsphere::vim25
