#include "orchestrator/engine/timeline.hpp"

#include <fmt/format.h>

namespace bootstorm::engine {

MilestoneTimeline::MilestoneTimeline(api::Milestone ready_signal, Listener listener)
    : ready_signal_(ready_signal), listener_(std::move(listener)) {}

void MilestoneTimeline::add_vm(const std::string& name) {
  vms_.try_emplace(name);
}

void MilestoneTimeline::set_started(const std::string& name,
                                    std::chrono::steady_clock::time_point written_mono,
                                    std::chrono::system_clock::time_point written_wall) {
  auto it = vms_.find(name);
  if (it == vms_.end() || it->second.start_mono) return;
  Vm& vm = it->second;
  vm.start_mono = written_mono;
  if (vm.state == VmState::waiting) vm.state = VmState::started;
  api::MilestoneEvent start;
  start.vm = name;
  start.milestone = api::Milestone::start_requested;
  start.observed_mono = written_mono;
  start.observed_wall = written_wall;
  start.resolution_s = 0;
  start.source = api::Source::client;
  accept(name, vm, start);
  auto held = std::move(vm.held);
  vm.held.clear();
  for (auto& ev : held) accept(name, vm, ev);
}

bool MilestoneTimeline::observe(const api::MilestoneEvent& event) {
  auto it = vms_.find(event.vm);
  if (it == vms_.end()) return false;
  Vm& vm = it->second;
  if (vm.state == VmState::failed) return false;
  if (vm.entries.count(event.milestone)) return false;
  if (!vm.start_mono) {
    for (auto& h : vm.held)
      if (h.milestone == event.milestone) return false;
    vm.held.push_back(event);
    return true;
  }
  accept(event.vm, vm, event);
  return true;
}

void MilestoneTimeline::accept(const std::string& name, Vm& vm, const api::MilestoneEvent& event) {
  if (vm.entries.count(event.milestone)) return;
  TimelineEntry e;
  e.milestone = event.milestone;
  e.offset_s = std::chrono::duration<double>(event.observed_mono - *vm.start_mono).count();
  e.resolution_s = event.resolution_s;
  e.source = event.source;
  e.wall = event.observed_wall;
  e.mono = event.observed_mono;
  e.detail = event.detail;
  auto& stored = vm.entries.emplace(event.milestone, std::move(e)).first->second;
  if (event.milestone == ready_signal_ && vm.state != VmState::failed) vm.state = VmState::ready;
  if (listener_) listener_(name, stored);
}

void MilestoneTimeline::fail(const std::string& name, const std::string& reason) {
  auto it = vms_.find(name);
  if (it == vms_.end()) return;
  if (it->second.state == VmState::ready || it->second.state == VmState::failed) return;
  it->second.state = VmState::failed;
  it->second.reason = reason;
  it->second.held.clear();
}

std::vector<std::pair<std::string, std::string>> MilestoneTimeline::expire(
    std::chrono::steady_clock::time_point now, std::chrono::steady_clock::duration timeout) {
  std::vector<std::pair<std::string, std::string>> failed;
  const double timeout_s = std::chrono::duration<double>(timeout).count();
  for (auto& [name, vm] : vms_) {
    if (vm.state != VmState::started || !vm.start_mono) continue;
    if (now - *vm.start_mono < timeout) continue;
    std::string reason = fmt::format("timeout waiting for {} after {:g} s (last seen: {})",
                                     api::to_string(ready_signal_), timeout_s, last_seen(name));
    vm.state = VmState::failed;
    vm.reason = reason;
    failed.emplace_back(name, std::move(reason));
  }
  return failed;
}

std::string MilestoneTimeline::last_seen(const std::string& name) const {
  auto it = vms_.find(name);
  if (it == vms_.end()) return "nothing";
  const TimelineEntry* latest = nullptr;
  for (auto& [m, e] : it->second.entries) {
    if (!latest || e.offset_s > latest->offset_s ||
        (e.offset_s == latest->offset_s && static_cast<int>(m) > static_cast<int>(latest->milestone)))
      latest = &e;
  }
  if (!latest) return "nothing";
  return fmt::format("{} at {:.1f} s", api::to_string(latest->milestone), latest->offset_s);
}

VmState MilestoneTimeline::state(const std::string& name) const {
  auto it = vms_.find(name);
  return it == vms_.end() ? VmState::failed : it->second.state;
}

bool MilestoneTimeline::finished() const {
  for (auto& [_, vm] : vms_)
    if (vm.state != VmState::ready && vm.state != VmState::failed) return false;
  return true;
}

std::size_t MilestoneTimeline::count(VmState s) const {
  std::size_t n = 0;
  for (auto& [_, vm] : vms_)
    if (vm.state == s) ++n;
  return n;
}

std::optional<TimelineEntry> MilestoneTimeline::entry(const std::string& name, api::Milestone m) const {
  auto it = vms_.find(name);
  if (it == vms_.end()) return std::nullopt;
  auto e = it->second.entries.find(m);
  if (e == it->second.entries.end()) return std::nullopt;
  return e->second;
}

std::optional<std::chrono::steady_clock::time_point> MilestoneTimeline::started_at(
    const std::string& name) const {
  auto it = vms_.find(name);
  if (it == vms_.end()) return std::nullopt;
  return it->second.start_mono;
}

const std::string& MilestoneTimeline::reason(const std::string& name) const {
  static const std::string empty;
  auto it = vms_.find(name);
  return it == vms_.end() ? empty : it->second.reason;
}

}  // namespace bootstorm::engine
