#include "providers/vsphere/milestone_tracker.hpp"

#include <algorithm>
#include <stdexcept>

namespace bootstorm::vsphere {

MilestoneTracker::MilestoneTracker(std::vector<api::Milestone> tracked,
                                   std::chrono::steady_clock::time_point baseline)
    : tracked_(std::move(tracked)), baseline_(baseline) {}

void MilestoneTracker::add_vm(const std::string& vm,
                              std::optional<std::chrono::steady_clock::time_point> baseline) {
  vms_.try_emplace(vm, Vm{baseline.value_or(baseline_), std::vector<State>(tracked_.size())});
}

std::size_t MilestoneTracker::index_of(api::Milestone m) const {
  auto it = std::find(tracked_.begin(), tracked_.end(), m);
  if (it == tracked_.end()) throw std::logic_error("MilestoneTracker: milestone not tracked");
  return static_cast<std::size_t>(it - tracked_.begin());
}

void MilestoneTracker::negative(const std::string& vm, api::Milestone m, const Probe& probe) {
  auto it = vms_.find(vm);
  if (it == vms_.end()) return;
  for (std::size_t i = index_of(m); i < tracked_.size(); ++i) {
    auto& s = it->second.states[i];
    if (s.reached) continue;
    if (!s.last_negative_sent || *s.last_negative_sent < probe.sent) s.last_negative_sent = probe.sent;
  }
}

std::vector<api::MilestoneEvent> MilestoneTracker::positive(const std::string& vm, api::Milestone m,
                                                            const Probe& probe, const std::string& detail) {
  std::vector<api::MilestoneEvent> events;
  auto it = vms_.find(vm);
  if (it == vms_.end()) return events;
  const std::size_t idx = index_of(m);
  if (it->second.states[idx].reached) return events;
  for (std::size_t i = 0; i <= idx; ++i) {
    auto& s = it->second.states[i];
    if (s.reached) continue;
    s.reached = true;
    const auto lower = s.last_negative_sent.value_or(it->second.baseline);
    api::MilestoneEvent e;
    e.vm = vm;
    e.milestone = tracked_[i];
    e.observed_mono = probe.arrived;
    e.observed_wall = probe.arrived_wall;
    e.resolution_s = std::max(0.0, std::chrono::duration<double>(probe.arrived - lower).count());
    e.source = api::Source::poll;
    if (i == idx) e.detail = detail;
    events.push_back(std::move(e));
  }
  return events;
}

bool MilestoneTracker::reached(const std::string& vm, api::Milestone m) const {
  auto it = vms_.find(vm);
  return it != vms_.end() && it->second.states[index_of(m)].reached;
}

std::optional<api::Milestone> MilestoneTracker::next_pending(const std::string& vm) const {
  auto it = vms_.find(vm);
  if (it == vms_.end()) return std::nullopt;
  for (std::size_t i = 0; i < tracked_.size(); ++i)
    if (!it->second.states[i].reached) return tracked_[i];
  return std::nullopt;
}

bool MilestoneTracker::all_reached() const {
  return pending_vms() == 0;
}

std::size_t MilestoneTracker::pending_vms() const {
  std::size_t n = 0;
  for (const auto& [name, vm] : vms_)
    if (!vm.states.empty() && !vm.states.back().reached) ++n;
  return n;
}

}  // namespace bootstorm::vsphere
