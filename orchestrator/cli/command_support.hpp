#pragma once
// What several commands share: loading the plan they act on, and asking before they touch a real platform.
#include <optional>
#include <string>
#include <string_view>

#include "orchestrator/plan/plan.hpp"

namespace bootstorm::cli {

// The plan at `path`; on stderr every diagnostic, then "<path>: invalid plan, <nothing_done>" when it is
// invalid (the caller exits 2).
std::optional<plan::StormPlan> load_plan_for(const std::string& path, std::string_view nothing_done);

// Prints `what` and "Continue? [y/N]" on stderr and reads one line: true for y or yes.
bool confirmed(const std::string& what);

}  // namespace bootstorm::cli
