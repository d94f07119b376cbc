#pragma once
// The capacity search of `bootstorm capacity`, as pure logic: which desktops-per-host count to storm next,
// and how a step's storms are judged against the SLO. No I/O: the command runs the storms (on a platform, the
// embedded lab or the lab model) and feeds their summaries back.
//
// The search doubles the count from `start` until a step misses the SLO (or reaches `max_per_host`), then
// bisects between the last count that met it and the first that missed, until they are `resolution` apart.
// It assumes boot time grows with density; where a measurement says otherwise the bisection still ends, on
// the counts it measured.
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/plan/plan.hpp"
#include "results/summary.hpp"

namespace bootstorm::sizing {

class CapacitySearch {
 public:
  // start, max_per_host >= 1 and resolution >= 1; start is clamped to max_per_host.
  CapacitySearch(int start, int max_per_host, int resolution);

  // The next count to storm; nullopt when the search is over.
  std::optional<int> next() const;
  void record(int per_host, bool meets);

  bool bisecting() const { return miss_.has_value(); }
  std::optional<int> capacity() const { return meet_; }    // the largest count that met the SLO
  std::optional<int> first_miss() const { return miss_; }  // the smallest count above it that missed
  bool reached_max() const;  // the search stopped at max_per_host with the SLO still met
  int resolution() const { return resolution_; }

 private:
  int start_, max_, resolution_;
  std::optional<int> meet_, miss_;
  bool started_ = false;
  bool missed_first_ = false;
};

// One step of the search: `storms` (the step's repetitions, one scenario summary each) judged against `slo`.
struct StepFigures {
  int per_host = 0;
  int vms = 0;     // desktops per storm
  int storms = 0;  // repetitions
  // Pooled over the storms, a desktop that never became ready counting as slower than any that did: a
  // percentile that falls among them is missing.
  std::optional<double> p50_s, p95_s;
  double ready_fraction = 0;
  // The SLO's statistic: the mean over the storms of each storm's value (not-ready desktops as above), and
  // its 95 % t-interval when there are two storms or more. Missing when any storm's value is.
  std::optional<double> value;
  std::optional<double> value_low, value_high;
  bool meets = false;  // the value meets the bound, and (for a time bound) every desktop became ready
  bool marginal =
      false;  // the interval reaches across the SLO's bound: another measurement may decide otherwise
};

// A storm's value of the SLO statistic, with desktops that did not reach the milestone counted as missing it.
std::optional<double> censored_slo_value(const results::ScenarioSummary& storm,
                                         const results::SloRecord& slo);

StepFigures judge_step(int per_host, const std::vector<results::ScenarioSummary>& storms,
                       const results::SloRecord& slo);

// The two-sided 95 % critical value of Student's t with `df` degrees of freedom (df >= 1).
double t_critical_95(int df);

}  // namespace bootstorm::sizing
