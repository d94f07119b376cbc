#pragma once
// The milestones of a VM's boot (DESIGN.md "Milestones"), in boot order.
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace bootstorm::api {

enum class Milestone {
  start_requested,
  start_acknowledged,
  scheduled,
  running,
  guest_agent,
  ip_assigned,
  port_open,
  beacon,
};
inline constexpr std::size_t kMilestoneCount = 8;
inline constexpr std::array<Milestone, kMilestoneCount> kAllMilestones = {
    Milestone::start_requested, Milestone::start_acknowledged, Milestone::scheduled, Milestone::running,
    Milestone::guest_agent,     Milestone::ip_assigned,        Milestone::port_open, Milestone::beacon};

std::string_view to_string(Milestone m) noexcept;  // "guest_agent"
std::optional<Milestone> milestone_from_string(std::string_view name) noexcept;

// Where an observation came from; it bounds how late it may be.
enum class Source { client, api, watch, poll, beacon, probe, recovered };
std::string_view to_string(Source s) noexcept;
std::optional<Source> source_from_string(std::string_view name) noexcept;

// One observed milestone of one VM. `observed_*` are the client's clocks at the moment the observation was
// made (watch event arrived, poll answered, beacon received); `resolution_s` bounds how much earlier the
// milestone may really have happened (poll gap, 1 s for API timestamps, ~0 for pushes).
struct MilestoneEvent {
  std::string vm;  // VM name (unique within a run)
  Milestone milestone = Milestone::running;
  std::chrono::system_clock::time_point observed_wall{};
  std::chrono::steady_clock::time_point observed_mono{};
  double resolution_s = 0.0;
  Source source = Source::api;
  std::string detail;  // e.g. the IP for ip_assigned, the node for scheduled
};

}  // namespace bootstorm::api
