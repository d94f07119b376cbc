// Pushed VM changes -> milestone events (see pushed_milestones.hpp).
#include "providers/vsphere/vim25_provider/pushed_milestones.hpp"

#include <algorithm>

namespace bootstorm::vsphere::vim25 {

namespace {

// The address a changed property gives, "" when none.
std::string address_of(const PropertyChange& change) {
  if (!change.value) return {};
  if (change.name == "guest.ipAddress") return change.value->text;
  if (change.name == "guest.net") {
    for (const Value* nic : change.value->all("GuestNicInfo")) {
      const std::string ip = nic->field_text("ipAddress");
      if (!ip.empty()) return ip;
    }
  }
  return {};
}

}  // namespace

void PushedMilestones::add_vm(const std::string& name, const std::string& id,
                              const std::string& planned_host_id,
                              std::optional<std::chrono::steady_clock::time_point> start_written) {
  Vm& vm = vms_[id];
  vm.name = name;
  vm.planned_host = planned_host_id;
  if (start_written) vm.start_written = start_written;
}

void PushedMilestones::start_written(const std::string& id, std::chrono::steady_clock::time_point at) {
  if (auto it = vms_.find(id); it != vms_.end()) it->second.start_written = at;
}

std::vector<api::MilestoneEvent> PushedMilestones::apply(const UpdateSet& set, const UpdateWindow& window) {
  std::vector<api::MilestoneEvent> events;
  for (const auto& filter : set.filters) {
    for (const auto& object : filter.objects) {
      auto it = vms_.find(object.obj.value);
      if (it == vms_.end() || object.kind == "leave") continue;
      Vm& vm = it->second;
      if (vm.on_before_start) continue;
      // The furthest milestone this change shows, and its detail.
      int furthest = -1;
      std::string ip;
      for (const auto& change : object.changes) {
        if (!change.value) continue;
        if (change.name == "runtime.host") {
          vm.host = change.value->text;
          if (!vm.planned_host.empty() && vm.host != vm.planned_host && !vm.move_reported) {
            vm.move_reported = true;
            moves_.push_back({vm.name, vm.planned_host, vm.host});
          }
        } else if (change.name == "runtime.powerState" && change.value->text == "poweredOn") {
          furthest = std::max(furthest, 0);
        } else if (change.name == "guest.toolsRunningStatus" && change.value->text == "guestToolsRunning") {
          furthest = std::max(furthest, 1);
        } else if (std::string address = address_of(change); !address.empty()) {
          furthest = 2;
          ip = address;
        }
      }
      if (furthest < 0) continue;
      if (window.before_starts) {
        vm.on_before_start = true;
        already_on_.push_back(vm.name);
        continue;
      }
      // An object entering the filter shows its state as it is, however old: only the start bounds it.
      const auto floor = vm.start_written.value_or(began_);
      const auto lower = object.kind == "enter" ? floor : std::max(window.previous_sent, floor);
      const double resolution = std::max(0.0, std::chrono::duration<double>(window.arrived - lower).count());
      for (int i = 0; i <= furthest; ++i) {
        if (vm.reached[static_cast<std::size_t>(i)]) continue;
        vm.reached[static_cast<std::size_t>(i)] = true;
        api::MilestoneEvent ev;
        ev.vm = vm.name;
        ev.milestone = kObserved[static_cast<std::size_t>(i)];
        ev.observed_mono = window.arrived;
        ev.observed_wall = window.arrived_wall;
        ev.resolution_s = resolution;
        ev.source = api::Source::watch;
        if (ev.milestone == api::Milestone::ip_assigned) ev.detail = ip;
        events.push_back(std::move(ev));
      }
    }
  }
  return events;
}

std::vector<HostMove> PushedMilestones::take_moves() {
  return std::exchange(moves_, {});
}

std::vector<std::string> PushedMilestones::take_already_on() {
  return std::exchange(already_on_, {});
}

bool PushedMilestones::reached(const std::string& id, api::Milestone m) const {
  auto it = vms_.find(id);
  if (it == vms_.end()) return false;
  for (std::size_t i = 0; i < kObserved.size(); ++i)
    if (kObserved[i] == m) return it->second.reached[i];
  return false;
}

bool PushedMilestones::all_reached() const {
  return pending_vms() == 0;
}

std::size_t PushedMilestones::pending_vms() const {
  return static_cast<std::size_t>(std::count_if(vms_.begin(), vms_.end(), [](const auto& entry) {
    const auto& r = entry.second.reached;
    return !entry.second.on_before_start && !(r[0] && r[1] && r[2]);
  }));
}

}  // namespace bootstorm::vsphere::vim25
