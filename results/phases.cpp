#include "results/phases.hpp"

#include <algorithm>

namespace bootstorm::results {

namespace {

// The milestone phase `info` ends at for a run whose ready milestone is `ready`; unset when the phase is not
// part of the boot (it ends after ready, or it is the ready phase and ready is not after the guest agent).
std::optional<api::Milestone> end_of(const PhaseInfo& info, api::Milestone ready) {
  if (info.phase == Phase::ready) {
    if (ready <= api::Milestone::guest_agent) return std::nullopt;
    return ready;
  }
  if (info.ends_at > ready) return std::nullopt;
  return info.ends_at;
}

}  // namespace

const PhaseInfo& phase_info(Phase phase) {
  return kPhases[static_cast<std::size_t>(phase)];
}

std::optional<Phase> phase_from_key(std::string_view key) {
  for (const auto& p : kPhases)
    if (p.key == key) return p.phase;
  return std::nullopt;
}

std::array<std::optional<double>, kPhaseCount> vm_phases(const VmRecord& vm, api::Milestone ready) {
  std::array<std::optional<double>, kPhaseCount> out{};
  if (!vm.ready_s) return out;
  const double boot = *vm.ready_s;
  double previous = 0;
  for (const auto& info : kPhases) {
    const auto end = end_of(info, ready);
    if (!end) continue;
    std::optional<double> at;
    if (*end == ready) {
      at = boot;
    } else if (auto it = vm.milestones.find(*end); it != vm.milestones.end()) {
      at = it->second.offset_s;
    }
    if (!at) continue;
    // Observations out of order (a poll that saw two milestones at once) or after ready count as reached at
    // the previous boundary and at ready: the phases still add up to the boot time.
    const double boundary = std::clamp(*at, previous, std::max(previous, boot));
    out[static_cast<std::size_t>(info.phase)] = boundary - previous;
    previous = boundary;
  }
  return out;
}

std::vector<PhaseStats> phase_stats(const std::vector<const VmRecord*>& vms, api::Milestone ready) {
  std::array<std::vector<double>, kPhaseCount> values;
  std::array<double, kPhaseCount> resolution{};
  std::size_t ready_vms = 0;
  for (const auto* vm : vms) {
    if (!vm->ready_s) continue;
    ++ready_vms;
    const auto phases = vm_phases(*vm, ready);
    for (std::size_t i = 0; i < kPhaseCount; ++i) {
      if (!phases[i]) continue;
      values[i].push_back(*phases[i]);
      // A phase is as uncertain as the two observations that bound it.
      double r = 0;
      const auto end = kPhases[i].phase == Phase::ready ? ready : kPhases[i].ends_at;
      if (auto it = vm->milestones.find(end); it != vm->milestones.end()) r = it->second.resolution_s;
      resolution[i] = std::max(resolution[i], r);
    }
  }
  std::vector<PhaseStats> out;
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    if (values[i].empty()) continue;
    PhaseStats p;
    p.phase = kPhases[i].phase;
    double sum = 0;
    for (double v : values[i]) sum += v;
    p.mean_part_s = sum / static_cast<double>(ready_vms);
    p.dist = describe(values[i], ready_vms, resolution[i]);
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<ControlPlaneShare> control_plane_share(const std::vector<const VmRecord*>& vms,
                                                     api::Milestone ready) {
  std::vector<double> before_scheduled, boots;
  for (const auto* vm : vms) {
    if (!vm->ready_s) continue;
    const auto phases = vm_phases(*vm, ready);
    if (!phases[static_cast<std::size_t>(Phase::control_plane)]) continue;
    before_scheduled.push_back(phases[static_cast<std::size_t>(Phase::api)].value_or(0) +
                               *phases[static_cast<std::size_t>(Phase::control_plane)]);
    boots.push_back(*vm->ready_s);
  }
  if (before_scheduled.empty()) return std::nullopt;
  ControlPlaneShare share;
  share.median_s = *median(before_scheduled);
  share.median_boot_s = *median(boots);
  for (const auto& p : phase_stats(vms, ready)) {
    if (phase_info(p.phase).control_plane || !p.dist.p50) continue;
    if (*p.dist.p50 > share.largest_other_median_s) {
      share.largest_other_median_s = *p.dist.p50;
      share.largest_other = p.phase;
    }
  }
  share.delayed = share.median_s > share.largest_other_median_s;
  return share;
}

}  // namespace bootstorm::results
