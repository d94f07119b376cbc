#pragma once
// Descriptive statistics of boot-time samples.
//
// Quantile definition (stated because reports are compared across tools): exact sample quantiles by linear
// interpolation between closest ranks — Hyndman & Fan type 7, the default of numpy.quantile, R's quantile()
// and Excel's PERCENTILE.INC. For a sorted sample x[0..n-1] and probability p in [0, 1]:
//   h = (n - 1) * p,  Q(p) = x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]).
// So P50 of an even-sized sample is the mean of the two middle values, min = Q(0) and max = Q(1).
// The standard deviation is the sample standard deviation (Bessel's correction, divisor n - 1).
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace bootstorm::results {

// Type-7 quantile of an ascending-sorted, non-empty sample. p is clamped to [0, 1].
double quantile_sorted(std::span<const double> sorted, double p);

// Type-7 quantile of an unsorted sample (copies and sorts). nullopt for an empty sample.
std::optional<double> quantile(std::span<const double> values, double p);

double mean(std::span<const double> values);  // 0 for an empty sample
// Sample standard deviation (divisor n - 1); nullopt for fewer than 2 values.
std::optional<double> sample_stdev(std::span<const double> values);
// Median (type-7 P50); nullopt for an empty sample.
std::optional<double> median(std::span<const double> values);

// The distribution of one milestone (or of boot time) over the VMs of one scenario/repeat.
struct Distribution {
  std::size_t count = 0;      // VMs that reached the milestone
  std::size_t total = 0;      // VMs that should have (denominator of the ready fraction)
  double ready_fraction = 0;  // count / total (0 when total is 0)
  std::optional<double> mean, stdev, min, p50, p90, p95, p99, max;  // seconds; unset when count is 0
  double resolution_s = 0;  // largest stated resolution among the observations
};

// Describes `values` (seconds, any order) out of `total` VMs. `resolution_s` is passed through.
Distribution describe(std::vector<double> values, std::size_t total, double resolution_s);

}  // namespace bootstorm::results
