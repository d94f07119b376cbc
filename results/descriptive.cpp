#include "results/descriptive.hpp"

#include <algorithm>
#include <cmath>

namespace bootstorm::results {

double quantile_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0.0;
  p = std::clamp(p, 0.0, 1.0);
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  const double frac = h - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

std::optional<double> quantile(std::span<const double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return quantile_sorted(sorted, p);
}

double mean(std::span<const double> values) {
  if (values.empty()) return 0.0;
  // Kahan summation: boot-time sums of thousands of VMs should not drift in the last digits that the
  // golden files and cross-tool comparisons look at.
  double sum = 0, carry = 0;
  for (double v : values) {
    const double y = v - carry;
    const double t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
  return sum / static_cast<double>(values.size());
}

std::optional<double> sample_stdev(std::span<const double> values) {
  if (values.size() < 2) return std::nullopt;
  const double m = mean(values);
  double ss = 0;
  for (double v : values) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(values.size() - 1));
}

std::optional<double> median(std::span<const double> values) {
  return quantile(values, 0.5);
}

Distribution describe(std::vector<double> values, std::size_t total, double resolution_s) {
  Distribution d;
  d.count = values.size();
  d.total = std::max(total, values.size());
  d.ready_fraction = d.total == 0 ? 0.0 : static_cast<double>(d.count) / static_cast<double>(d.total);
  d.resolution_s = resolution_s;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.mean = mean(values);
  d.stdev = sample_stdev(values);
  d.min = values.front();
  d.max = values.back();
  d.p50 = quantile_sorted(values, 0.50);
  d.p90 = quantile_sorted(values, 0.90);
  d.p95 = quantile_sorted(values, 0.95);
  d.p99 = quantile_sorted(values, 0.99);
  return d;
}

}  // namespace bootstorm::results
