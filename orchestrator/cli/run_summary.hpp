#pragma once
// The terminal's one-line account of a scenario's boots, shared by `run` and `predict` (the same figures as
// summary.json: both come from results::summarize).
#include <string>

#include "results/summary.hpp"

namespace bootstorm::cli {

// "24/24 ready, boot time (guest_agent) mean 7.78 s, P50 7.74 s, P95 8.37 s, max 8.61 s", or "0/24 ready".
std::string ready_clause(const results::ScenarioSummary& scenario);

}  // namespace bootstorm::cli
