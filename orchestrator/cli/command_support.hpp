#pragma once
// What several commands share: loading the plan they act on, and asking before they touch a real platform.
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/cli/plan_bounds.hpp"
#include "orchestrator/plan/plan.hpp"

namespace bootstorm::cli {

// The plan at `path`; on stderr every diagnostic, then "<path>: invalid plan, <nothing_done>" when it is
// invalid (the caller exits 2).
std::optional<plan::StormPlan> load_plan_for(const std::string& path, std::string_view nothing_done);

// Whether a loaded plan is within the command's size bounds; when not, its diagnostics and the same "invalid
// plan" line on stderr (the caller exits 2). For commands that know their lab only after loading the plan.
bool within_bounds(const plan::StormPlan& plan, std::string_view nothing_done, const PlanBounds& bounds);

// load_plan_for, then within_bounds.
std::optional<plan::StormPlan> load_plan_for(const std::string& path, std::string_view nothing_done,
                                             const PlanBounds& bounds);

// Prints `what` and "Continue? [y/N]" on stderr and reads one line: true for y or yes.
bool confirmed(const std::string& what);

}  // namespace bootstorm::cli
