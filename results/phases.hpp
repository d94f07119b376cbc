#pragma once
// Where a boot's time went: each ready VM's boot time split into phases at its milestones, and per scenario
// the distribution of each phase. Pure computation on the run record.
//
//   start_requested -> start_acknowledged  API            (the start call's round trip)
//   -> scheduled                           control plane  (KubeVirt: virt-controller, the scheduler)
//   -> running                             launch         (virt-launcher and qemu; vSphere: the power-on)
//   -> guest_agent                         guest          (the guest's boot, bound by storage and CPU)
//   -> the ready milestone                 ready          (guest agent to ready, when ready comes later)
//
// A phase whose end milestone a VM did not report (vSphere has no `scheduled`) is missing for that VM, and
// its time is in the next phase the VM did report: the phases of a VM always add up to its boot time.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "providers/api/milestone.hpp"
#include "results/descriptive.hpp"
#include "results/run_record.hpp"

namespace bootstorm::results {

enum class Phase { api, control_plane, launch, guest, ready };
inline constexpr std::size_t kPhaseCount = 5;

struct PhaseInfo {
  Phase phase;
  std::string_view key;    // summary.json key: "api", "controlPlane", "launch", "guest", "ready"
  std::string_view label;  // for people: "control plane"
  std::string_view span;   // "start_acknowledged → scheduled"
  // The milestone the phase ends at; the ready phase ends at the run's ready milestone.
  api::Milestone ends_at;
  bool control_plane;  // API and control plane: the platform's control plane, before the VM runs anywhere
};
inline constexpr std::array<PhaseInfo, kPhaseCount> kPhases = {{
    {Phase::api, "api", "API", "start_requested \u2192 start_acknowledged",
     api::Milestone::start_acknowledged, true},
    {Phase::control_plane, "controlPlane", "control plane", "start_acknowledged \u2192 scheduled",
     api::Milestone::scheduled, true},
    {Phase::launch, "launch", "launch / power-on", "\u2192 running", api::Milestone::running, false},
    {Phase::guest, "guest", "guest and storage", "running \u2192 guest_agent", api::Milestone::guest_agent,
     false},
    {Phase::ready, "ready", "guest agent to ready", "guest_agent \u2192 ready", api::Milestone::beacon,
     false},
}};
const PhaseInfo& phase_info(Phase phase);
std::optional<Phase> phase_from_key(std::string_view key);

// One VM's phases in seconds (unset: the VM did not report the phase's end). All unset for a VM that is not
// ready; phases that end after `ready` are unset, and the last reported one ends at the VM's boot time.
std::array<std::optional<double>, kPhaseCount> vm_phases(const VmRecord& vm, api::Milestone ready);

struct PhaseStats {
  Phase phase = Phase::api;
  Distribution dist;  // over the ready VMs that reported the phase (total: the scenario's ready VMs)
  // The phase's seconds summed over the ready VMs, divided by their count: the phase's part of the mean boot
  // time (the parts add up to it). The report's stacked bars draw these.
  double mean_part_s = 0;
};

// The phases of `vms` (a scenario's VMs) that at least one ready VM reported, in boot order.
std::vector<PhaseStats> phase_stats(const std::vector<const VmRecord*>& vms, api::Milestone ready);

// "Delayed by the control plane": the median VM's time before it was scheduled (API + control plane) is
// larger than the median of every other phase. Unset when no VM reported a control-plane phase.
struct ControlPlaneShare {
  double median_s = 0;       // median over the ready VMs of API + control plane
  double median_boot_s = 0;  // median boot time of the same VMs
  Phase largest_other = Phase::guest;
  double largest_other_median_s = 0;
  bool delayed = false;  // median_s > largest_other_median_s
};
std::optional<ControlPlaneShare> control_plane_share(const std::vector<const VmRecord*>& vms,
                                                     api::Milestone ready);

}  // namespace bootstorm::results
