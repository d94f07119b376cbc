#pragma once
// `bootstorm lab fit`: the lab model's parameters fitted to measured runs, so that "measure one layout on
// real hardware, predict the others" holds. Each measured scenario is predicted (predict.hpp: the run's own
// plan, as many repetitions as it had) with the named profile values changed, and the values that minimise
// the squared log residuals of each scenario's ready mean and P95 are found: a grid over [initial / span,
// initial x span], then golden-section refinement, one parameter at a time until nothing moves. A glob key
// (`hosts.r740-*.ioLatencyMs`) ties every match to one value, starting from its first match's.
//
// It refuses what the runs cannot determine: more parameters than measured scenarios, a parameter that does
// not move any measured scenario's boot time, two parameters that move them alike.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "orchestrator/plan/plan.hpp"
#include "simulator/model/lab_overrides.hpp"

namespace bootstorm::sizing {

// A measured run as fit reads it: its resolved plan and each scenario's ready mean and P95, averaged over
// the run's repetitions.
struct FitRun {
  std::string name;  // the run directory's name
  plan::StormPlan plan;
  std::string plan_yaml;
  std::string source;  // measured | simulated | predicted
  struct Scenario {
    std::string name;
    double mean_s = 0;
    double p95_s = 0;
    int repeats = 0;
  };
  std::vector<Scenario> scenarios;
};

struct FitOptions {
  std::string lab;                             // the profile the fit starts from (name or path)
  std::vector<sim::model::LabOverride> fixed;  // --set: applied before fitting, kept in the result
  std::vector<std::string> keys;               // --fit
  std::optional<std::uint64_t> seed;           // the model's; default: the profile's
  std::string only_scenario;                   // fit to this scenario only (empty: all)
  double span = 10;                            // each value is searched within [initial / span, x span]
  // Each measured scenario is predicted this many times (at least as often as it was measured), every
  // repetition on its own seed, and the model's figures averaged: a boot's jitter is a per-VM draw, so one
  // prediction of 24 desktops carries about 1 % of noise in its mean and 2 % in its P95.
  int model_repeats = 5;
};

struct FitParameter {
  std::string key;
  double initial = 0;
  double fitted = 0;
  double sensitivity = 0;  // the largest d ln(ready mean) / d ln(value) over the measured scenarios
  bool at_bound = false;   // the best value is at the edge of the searched range
};

struct FitPoint {
  std::string run, scenario;
  double measured_mean = 0, measured_p95 = 0;
  double initial_mean = 0, initial_p95 = 0;
  double fitted_mean = 0, fitted_p95 = 0;
};

struct FitResult {
  std::string lab;       // the profile's name
  std::string lab_path;  // and where it was read from
  std::vector<FitParameter> parameters;
  std::vector<FitPoint> points;
  double rms_initial = 0, rms_fitted = 0;  // root mean square of the relative residuals (mean and P95)
  int model_runs = 0;
  std::vector<sim::model::LabOverride> overrides() const;  // fixed + fitted, as --set would write them
  std::vector<sim::model::LabOverride> fixed;
};

Expected<FitResult> fit_lab(const std::vector<FitRun>& runs, const FitOptions& options);

// The fitted profile: the starting profile with every override applied and named "<name>-fitted" (unless
// --set named it), headed by comments naming the runs it was fitted to, the values and the residuals.
Expected<std::string> fitted_profile_yaml(const FitResult& result, const std::vector<FitRun>& runs,
                                          const std::string& fitted_at);

}  // namespace bootstorm::sizing
