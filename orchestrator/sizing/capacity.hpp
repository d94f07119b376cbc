#pragma once
// `bootstorm capacity`: how many desktops per host a layout boots within an SLO. The scenario's placement is
// scaled (every host of it gets N desktops), N is searched (capacity_search.hpp), and each step is a storm
// run `repeat` times by a StepRunner: the engine against a platform or the embedded lab, or the lab model
// (predict). Each step is a normal run directory; the search's result names the capacity, its uncertainty,
// the curve and what bound it (binding.hpp).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/sizing/binding.hpp"
#include "orchestrator/sizing/capacity_search.hpp"
#include "results/summary.hpp"

namespace bootstorm::sizing {

struct CapacityOptions {
  std::string scenario;  // empty: the plan's only scenario
  results::SloRecord slo;
  int start = 0;         // desktops per host of the first step; 0: the scenario's largest
  int max_per_host = 0;  // 0: no bound of its own (max_vms still bounds)
  int max_vms = 0;       // desktops per storm at most; 0: no bound
  int resolution = 1;    // the bisection ends when the last met and the first missed are this close
  int repeat = 0;        // storms per step; 0: the plan's repeat
};

// What a StepRunner reports of one step's storms.
struct StepRun {
  std::vector<results::ScenarioSummary> storms;  // one per repetition
  Binding binding;
  std::filesystem::path run_dir;
  std::string outcome;  // the run's: completed | failed | interrupted | error
  // The step could not run as planned (connect, inventory, outputs, VMs its cleanup left): it ends the search
  // and is not judged.
  std::optional<Error> error;
};
using StepRunner = std::function<StepRun(const plan::StormPlan& step_plan, int per_host)>;

struct CapacityStep {
  StepFigures figures;
  Binding binding;
  std::filesystem::path run_dir;
  std::string outcome;
};

struct CapacityResult {
  std::string scenario;
  std::vector<std::string> hosts;  // the scenario's hosts (or nodes)
  results::SloRecord slo;
  int start = 0, max_per_host = 0, resolution = 1, repeat = 1;
  std::vector<CapacityStep> steps;  // in the order they ran
  std::optional<int> capacity;      // desktops per host: the largest count that met the SLO
  std::optional<int> first_miss;    // the smallest count above it that missed
  bool reached_max = false;         // met at max_per_host: the capacity is at least that
  bool first_step_missed = false;
  bool interrupted = false;
  std::optional<Error> error;  // a step that could not be run, which ended the search
  std::string bound_note;      // why max_per_host is what it is (--max-per-host, --max-vms)
  // What bound it: at the first count that missed (or the last step when none did).
  Binding binding;
  std::optional<int> binding_at;
  // The last count whose median boot time is within 10 % of the lightest step's: past it, density costs time.
  std::optional<int> knee;
  // Counts measured as marginal (their interval reaches across the SLO's bound), lowest and highest.
  std::optional<int> marginal_low, marginal_high;

  const CapacityStep* step_at(int per_host) const;  // the last step run at that count
};

// The plan a step runs: only `scenario`, with `per_host` desktops on each of its hosts, `repeat` storms, the
// search's SLO, and cleanup always (the next step needs the hosts empty).
Expected<plan::StormPlan> step_plan(const plan::StormPlan& plan, const std::string& scenario, int per_host,
                                    const results::SloRecord& slo, int repeat);

// The search's bounds from the plan and the options; invalid_input when the scenario is unknown or the first
// step is already beyond them.
Expected<CapacityResult> plan_search(const plan::StormPlan& plan, const CapacityOptions& options);

// Runs the search: `run_step` per step, until the search is over, a step is interrupted or cannot run, or
// `stop_requested` says so before a step. `on_step` (optional) sees every step as it is judged.
CapacityResult search_capacity(CapacityResult planned, const plan::StormPlan& plan,
                               const StepRunner& run_step, const std::function<bool()>& stop_requested,
                               const std::function<void(const CapacityStep&)>& on_step = nullptr);

}  // namespace bootstorm::sizing
