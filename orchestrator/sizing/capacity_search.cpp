// The capacity search (see the header).
#include "orchestrator/sizing/capacity_search.hpp"

#include <algorithm>
#include <cmath>

#include "results/descriptive.hpp"

namespace bootstorm::sizing {

CapacitySearch::CapacitySearch(int start, int max_per_host, int resolution)
    : start_(std::max(1, std::min(start, max_per_host))),
      max_(std::max(1, max_per_host)),
      resolution_(std::max(1, resolution)) {}

std::optional<int> CapacitySearch::next() const {
  if (!started_) return start_;
  if (missed_first_) return std::nullopt;
  if (!miss_) {
    if (!meet_ || *meet_ >= max_) return std::nullopt;
    return std::min(*meet_ * 2, max_);
  }
  if (*miss_ - *meet_ <= resolution_) return std::nullopt;
  return *meet_ + (*miss_ - *meet_) / 2;
}

void CapacitySearch::record(int per_host, bool meets) {
  const bool first = !started_;
  started_ = true;
  if (meets) {
    if (!meet_ || per_host > *meet_) meet_ = per_host;
    if (miss_ && *miss_ <= *meet_) miss_.reset();  // a later measurement met above an earlier miss
  } else if (first || !meet_) {
    missed_first_ = true;
    miss_ = per_host;
  } else if (per_host > *meet_ && (!miss_ || per_host < *miss_)) {
    miss_ = per_host;
  }
}

bool CapacitySearch::reached_max() const {
  return meet_ && *meet_ >= max_ && !miss_;
}

double t_critical_95(int df) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return std::nan("");
  if (df <= 30) return kTable[df - 1];
  if (df <= 60) return 2.042 + (2.000 - 2.042) * (df - 30) / 30.0;
  if (df <= 120) return 2.000 + (1.980 - 2.000) * (df - 60) / 60.0;
  return 1.960;
}

namespace {

// Type-7 quantile over `total` desktops of which `ready` (ascending) became ready, the others later than any.
std::optional<double> censored_quantile(const std::vector<double>& ready, std::size_t total, double p) {
  if (total == 0) return std::nullopt;
  const double h = static_cast<double>(total - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const double frac = h - static_cast<double>(lo);
  if (lo >= ready.size()) return std::nullopt;
  if (frac == 0) return ready[lo];
  if (lo + 1 >= ready.size()) return std::nullopt;
  return ready[lo] + frac * (ready[lo + 1] - ready[lo]);
}

bool is_ready_milestone(const results::ScenarioSummary& storm, const std::string& milestone) {
  return milestone.empty() || milestone == "ready" || milestone == storm.ready_milestone;
}

}  // namespace

std::optional<double> censored_slo_value(const results::ScenarioSummary& storm,
                                         const results::SloRecord& slo) {
  const std::string& stat = slo.stat;
  if (stat == "ready_fraction" || stat == "time_to_all_ready")
    return results::stat_value(storm, slo.milestone.empty() ? "ready" : slo.milestone, stat);
  const std::size_t total = static_cast<std::size_t>(std::max(0, storm.vms));
  if (is_ready_milestone(storm, slo.milestone)) {
    std::vector<double> ready = storm.boot_times_s;
    std::sort(ready.begin(), ready.end());
    const std::size_t missing = total > ready.size() ? total - ready.size() : 0;
    if (stat == "min") return ready.empty() ? std::nullopt : std::optional<double>(ready.front());
    if (stat.size() == 3 && stat[0] == 'p')
      return censored_quantile(ready, total, std::stod(stat.substr(1)) / 100);
    // mean, max, stdev: undefined while a desktop is missing.
    if (missing > 0) return std::nullopt;
    return results::stat_value(storm, "ready", stat);
  }
  // Another milestone: the storm's own statistic, when every desktop reached it.
  const results::Distribution* d = storm.find(slo.milestone);
  if (!d || (d->count < d->total && stat != "min")) return std::nullopt;
  return results::stat_value(storm, slo.milestone, stat);
}

StepFigures judge_step(int per_host, const std::vector<results::ScenarioSummary>& storms,
                       const results::SloRecord& slo) {
  StepFigures f;
  f.per_host = per_host;
  f.storms = static_cast<int>(storms.size());
  std::vector<double> pooled;
  std::size_t total = 0;
  std::vector<double> values;
  bool all_defined = !storms.empty();
  for (const auto& s : storms) {
    f.vms = std::max(f.vms, s.vms);
    total += static_cast<std::size_t>(std::max(0, s.vms));
    pooled.insert(pooled.end(), s.boot_times_s.begin(), s.boot_times_s.end());
    if (auto v = censored_slo_value(s, slo)) {
      values.push_back(*v);
    } else {
      all_defined = false;
    }
  }
  std::sort(pooled.begin(), pooled.end());
  f.p50_s = censored_quantile(pooled, total, 0.50);
  f.p95_s = censored_quantile(pooled, total, 0.95);
  f.ready_fraction = total == 0 ? 0 : static_cast<double>(pooled.size()) / static_cast<double>(total);
  if (!all_defined) return f;  // missing: the SLO could not be shown to hold
  f.value = results::mean(values);
  // A time bound holds for desktops that boot: one that never became ready is a miss, whatever the
  // percentile. Only a ready_fraction SLO allows some to fail.
  f.meets = slo.is_min ? *f.value >= slo.max : *f.value <= slo.max && f.ready_fraction >= 1.0;
  if (values.size() >= 2) {
    const double sd = results::sample_stdev(values).value_or(0);
    const double half = t_critical_95(static_cast<int>(values.size()) - 1) * sd /
                        std::sqrt(static_cast<double>(values.size()));
    f.value_low = *f.value - half;
    f.value_high = *f.value + half;
    f.marginal = *f.value_low <= slo.max && slo.max <= *f.value_high;
  }
  return f;
}

}  // namespace bootstorm::sizing
