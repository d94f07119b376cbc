#pragma once
// Inference for layout comparisons: bootstrap confidence intervals for the difference between two samples,
// the Mann–Whitney U test, and the comparison + one-line verdict that `bootstorm compare` and the engine
// print.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::results {

struct ConfidenceInterval {
  double estimate = 0;  // the statistic on the observed samples
  double lower = 0;
  double upper = 0;
  double level = 0.95;
};

struct BootstrapOptions {
  std::size_t resamples = 10000;
  std::uint64_t seed = 0x626f6f7473746f72ULL;  // fixed: the same data always gives the same interval
  double level = 0.95;
};

// Percentile-method bootstrap intervals for how a candidate sample differs from a baseline sample. Each
// resample draws both samples independently with replacement (their own sizes), using a seeded
// std::mt19937_64 and a multiply-shift index mapping, so results are reproducible across platforms. The
// interval bounds are the type-7 quantiles (see descriptive.hpp) at (1-level)/2 and (1+level)/2 of the
// resampled statistics.
struct BootstrapDifferences {
  ConfidenceInterval mean_diff;    // mean(candidate) - mean(baseline), seconds
  ConfidenceInterval median_diff;  // median(candidate) - median(baseline), seconds
  ConfidenceInterval mean_ratio;   // mean(candidate) / mean(baseline); relative difference = ratio - 1
};
// Both samples must be non-empty; the ratio needs a positive baseline mean (otherwise it is NaN).
BootstrapDifferences bootstrap_differences(std::span<const double> baseline,
                                           std::span<const double> candidate,
                                           const BootstrapOptions& options = {});

// Mann–Whitney U (Wilcoxon rank-sum) two-sided test of baseline vs candidate. Ties get mid-ranks.
// p-value: exact (enumerating the null distribution of U) when both samples have at most 20 values and there
// are no ties; otherwise the normal approximation with tie-corrected variance and continuity correction
//   z = (|U1 - n1 n2 / 2| - 0.5) / sigma,  sigma^2 = n1 n2 / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1))),
//   p = 2 (1 - Phi(z))   (same as scipy.stats.mannwhitneyu, use_continuity=True).
struct MannWhitney {
  double u_baseline = 0;   // U of the baseline sample: pairs (b, c) with b > c, ties counting 1/2
  double u_candidate = 0;  // n1 n2 - u_baseline
  double z = 0;            // normal approximation statistic (also reported when exact)
  double p_value = 1;
  bool exact = false;
};
MannWhitney mann_whitney_u(std::span<const double> baseline, std::span<const double> candidate);

// How a mean moved between two groups of values, e.g. the runs before and after a change point. Each group
// needs at least two values.
//   difference = mean(after) - mean(before), with Welch's t interval (unequal variances; degrees of freedom
//                by Welch–Satterthwaite);
//   relative   = mean(after) / mean(before) - 1, with Fieller's interval for a ratio of independent means
//                (the same t quantile). It is bounded only while the before mean is itself distinguishable
//                from 0 at that level; otherwise `relative_bounded` is false and its bounds are NaN.
// Two groups without spread give an interval of width 0.
struct MeanShift {
  std::size_t n_before = 0, n_after = 0;
  double before_mean = 0, after_mean = 0;
  ConfidenceInterval difference;
  ConfidenceInterval relative;
  bool relative_bounded = true;
};
Expected<MeanShift> mean_shift(std::span<const double> before, std::span<const double> after,
                               double level = 0.95);

// One side of a comparison: a labelled boot-time sample (seconds, VMs that became ready).
struct ComparedSample {
  std::string label;  // e.g. "1x R7625 64GFC" or "1x R7625 64GFC (run 3f9a2c)"
  int vms = 0;        // VMs in the storm (ready or not)
  std::vector<double> boot_times_s;
  std::optional<double> time_to_all_ready_s;
};

struct SampleFigures {
  std::size_t n = 0;
  double mean = 0, p50 = 0, p95 = 0, max = 0;
};

struct Comparison {
  ComparedSample baseline, candidate;
  SampleFigures baseline_figures, candidate_figures;
  // candidate - baseline, seconds, and relative to the baseline ((candidate - baseline) / baseline).
  double mean_diff_s = 0, p50_diff_s = 0, p95_diff_s = 0, max_diff_s = 0;
  double mean_rel = 0, p50_rel = 0, p95_rel = 0, max_rel = 0;
  std::optional<double> time_to_all_ready_diff_s, time_to_all_ready_rel;
  BootstrapDifferences bootstrap;
  MannWhitney mann_whitney;
  bool significant = false;  // the CI of the mean difference excludes 0 and p < 0.05
  std::string verdict;       // consolidation_verdict(*this)
};

// Compares candidate against baseline. Fails (invalid_input) when either sample has no ready VM.
Expected<Comparison> compare_samples(ComparedSample baseline, ComparedSample candidate,
                                     const BootstrapOptions& options = {});

// One line a buyer can read, e.g. "1x R7625 64GFC boots 24 VMs 76 % faster on average than 4x R740 16GFC
// (95 % CI 74–78 %)", or, when the difference is not significant, a sentence saying so with the p-value.
std::string consolidation_verdict(const Comparison& comparison);

}  // namespace bootstorm::results
