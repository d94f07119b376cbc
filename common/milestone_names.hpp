#pragma once
// The names of a VM's boot milestones in boot order (docs/DESIGN.md "Milestones"): one list for the
// orchestrator's api::Milestone and the lab model's ground truth, so that a run's timeline and the lab's
// /_lab/truth spell every milestone alike.
#include <array>
#include <cstddef>

namespace bootstorm {

inline constexpr std::array<const char*, 8> kMilestoneNames = {
    "start_requested", "start_acknowledged", "scheduled", "running",
    "guest_agent",     "ip_assigned",        "port_open", "beacon"};

// The name at `index` in boot order; "unknown" past the end of the list.
constexpr const char* milestone_name(std::size_t index) noexcept {
  return index < kMilestoneNames.size() ? kMilestoneNames[index] : "unknown";
}

}  // namespace bootstorm
