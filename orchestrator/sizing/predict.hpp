#pragma once
// `bootstorm predict`: a plan's scenarios run in the lab model's virtual time (virtual_storm.hpp) and written
// as a normal run directory — plan.yaml and journal.jsonl, from which the CLI writes the same reports as for
// `bootstorm run` — labelled predicted (run_started.source), never measured. No servers, no sockets:
// deterministic for a seed, with every repetition on its own seed so that the confidence intervals mean
// something.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "orchestrator/plan/plan.hpp"
#include "results/run_record.hpp"
#include "simulator/model/lab.hpp"
#include "simulator/model/lab_overrides.hpp"

namespace bootstorm::sizing {

struct PredictOptions {
  std::string lab;                                 // profile name or path; empty: the plan's platform.lab
  std::vector<sim::model::LabOverride> overrides;  // --set, in order
  std::optional<std::uint64_t> seed;               // the first repetition's; empty: the profile's
  std::filesystem::path output_dir;                // empty: the plan's output
  std::string only_scenario;                       // empty: every scenario
  int repeat = 0;                                  // 0: the plan's
  std::string plan_yaml;                           // the resolved plan as given (plan.yaml, run_started)
  // The profile already loaded with `lab` and `overrides` (the CLI weighs the plan's size with it first);
  // empty: loaded here.
  std::optional<sim::model::LabSpec> spec;
};

// What held one scenario's boots back in the model (sim::model::Lab::boot_limits), one per storm.
struct ScenarioLimits {
  std::string scenario;
  int repeat = 1;
  sim::model::BootLimits limits;
};

struct PredictResult {
  std::string run_id;
  std::filesystem::path run_dir;
  results::RunRecord record;
  std::string lab;         // the profile's name
  std::uint64_t seed = 0;  // the first repetition's
  double virtual_s = 0;    // the lab time the prediction covered
  std::vector<ScenarioLimits> limits;
};

// The journal lines of a prediction, in order, each with its virtual "t" and "mono": what predict() writes.
// Pure apart from reading the lab profile.
struct PredictedRun {
  std::string run_id;
  std::string lab;
  std::uint64_t seed = 0;
  double virtual_start = 0, virtual_end = 0;                   // unix s
  std::vector<std::pair<std::string, nlohmann::json>> events;  // type, payload (with "t" as unix s)
  std::vector<ScenarioLimits> limits;
};
Expected<PredictedRun> simulate_plan(const plan::StormPlan& plan, const PredictOptions& options);

// The run record of a prediction, in memory (what predict() reads back from the journal it writes).
results::RunRecord record_of(const PredictedRun& run);

// simulate_plan, then the run directory with its journal; the record is what `bootstorm report` reads back.
Expected<PredictResult> predict(const plan::StormPlan& plan, const PredictOptions& options);

}  // namespace bootstorm::sizing
