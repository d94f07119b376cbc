#pragma once
// The checks before a run (`bootstorm check`; `run` before it creates anything): what the engine answers
// itself, free of I/O, and how the results are shown and turned into the run's error.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "orchestrator/plan/plan.hpp"
#include "providers/api/check.hpp"
#include "providers/api/provider.hpp"

namespace bootstorm::engine {

// What the plan asks of the platform: per placement host the most VMs one scenario puts there, the largest
// storm, and every VM of the run.
api::CheckRequest check_request(const plan::StormPlan& plan,
                                const std::vector<const plan::Scenario*>& scenarios);

// The start burst of the largest storm: how many starts go out at once and why (storm.startConcurrency, or
// the platform's own limit), and what holding them back costs.
api::CheckResult start_burst_check(const plan::StormPlan& plan, const api::Capabilities& caps,
                                   std::size_t largest_storm);

// The results as the console shows them: one line per check (result, name, finding), the advice of every
// check that did not pass under it.
std::string check_table(const std::vector<api::CheckResult>& results);

// The results as the journal's `checks` event carries them: [{name, status, finding, advice}] (advice only
// when there is one). `run` and `migrate` journal them alike.
nlohmann::json checks_json(const std::vector<api::CheckResult>& results);

// The run's error when a check failed: "check <name> failed: <finding>" with its advice (every other failed
// check named too); nullopt when none failed.
std::optional<Error> first_failure(const std::vector<api::CheckResult>& results);

}  // namespace bootstorm::engine
