#include "results/inference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "results/descriptive.hpp"
#include "results/detail/random_index.hpp"

namespace bootstorm::results {
namespace {

using detail::draw_index;

// Type-7 median in O(n): the element of rank floor(h) and, for even sizes, the smallest one above it.
double median_in_place(std::vector<double>& v) {
  const std::size_t lo = (v.size() - 1) / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double low = v[lo];
  if (v.size() % 2 == 1) return low;
  const double high = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  return low + 0.5 * (high - low);
}

ConfidenceInterval percentile_interval(std::vector<double>& stats, double estimate, double level) {
  std::sort(stats.begin(), stats.end());
  const double alpha = 1.0 - level;
  return ConfidenceInterval{estimate, quantile_sorted(stats, alpha / 2),
                            quantile_sorted(stats, 1 - alpha / 2), level};
}

double normal_sf(double z) {
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

// Number of arrangements of m baseline and n candidate values (no ties) for each U of the baseline sample,
// by the recurrence c(m, n, u) = c(m - 1, n, u - n) + c(m, n - 1, u). Exact in double up to C(40, 20).
std::vector<double> exact_u_counts(std::size_t m, std::size_t n) {
  // table[i][j] = counts vector for (i baseline, j candidate)
  std::vector<std::vector<std::vector<double>>> table(m + 1, std::vector<std::vector<double>>(n + 1));
  for (std::size_t i = 0; i <= m; ++i) {
    for (std::size_t j = 0; j <= n; ++j) {
      auto& c = table[i][j];
      c.assign(i * j + 1, 0.0);
      if (i == 0 || j == 0) {
        c[0] = 1.0;
        continue;
      }
      // Largest value is a baseline value (it beats all j candidates) or a candidate value.
      const auto& with_baseline_largest = table[i - 1][j];
      for (std::size_t u = 0; u < with_baseline_largest.size(); ++u) c[u + j] += with_baseline_largest[u];
      const auto& with_candidate_largest = table[i][j - 1];
      for (std::size_t u = 0; u < with_candidate_largest.size(); ++u) c[u] += with_candidate_largest[u];
    }
  }
  return table[m][n];
}

std::string format_percent(double a, double b, double c) {
  const bool small = std::fabs(a) < 10 || std::fabs(b) < 10 || std::fabs(c) < 10;
  return small ? "1" : "0";
}

std::string signed_number(double v, const std::string& precision) {
  std::string s = fmt::format(fmt::runtime("{:." + precision + "f}"), std::fabs(v));
  const bool zero = s.find_first_not_of("0.") == std::string::npos;
  return (v < 0 && !zero) ? "\u2212" + s : s;
}

}  // namespace

BootstrapDifferences bootstrap_differences(std::span<const double> baseline,
                                           std::span<const double> candidate,
                                           const BootstrapOptions& options) {
  BootstrapDifferences out;
  const double base_mean = mean(baseline), cand_mean = mean(candidate);
  const double base_median = median(baseline).value_or(0), cand_median = median(candidate).value_or(0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double ratio_estimate = base_mean > 0 ? cand_mean / base_mean : nan;
  if (baseline.empty() || candidate.empty() || options.resamples == 0) {
    out.mean_diff = {cand_mean - base_mean, nan, nan, options.level};
    out.median_diff = {cand_median - base_median, nan, nan, options.level};
    out.mean_ratio = {ratio_estimate, nan, nan, options.level};
    return out;
  }
  std::mt19937_64 rng(options.seed);
  std::vector<double> mean_diffs, median_diffs, ratios;
  mean_diffs.reserve(options.resamples);
  median_diffs.reserve(options.resamples);
  ratios.reserve(options.resamples);
  std::vector<double> rb(baseline.size()), rc(candidate.size());
  for (std::size_t r = 0; r < options.resamples; ++r) {
    for (auto& v : rb) v = baseline[draw_index(rng, baseline.size())];
    for (auto& v : rc) v = candidate[draw_index(rng, candidate.size())];
    const double mb = mean(rb), mc = mean(rc);
    mean_diffs.push_back(mc - mb);
    ratios.push_back(mb > 0 ? mc / mb : nan);
    median_diffs.push_back(median_in_place(rc) - median_in_place(rb));
  }
  out.mean_diff = percentile_interval(mean_diffs, cand_mean - base_mean, options.level);
  out.median_diff = percentile_interval(median_diffs, cand_median - base_median, options.level);
  if (base_mean > 0) {
    out.mean_ratio = percentile_interval(ratios, ratio_estimate, options.level);
  } else {
    out.mean_ratio = {nan, nan, nan, options.level};
  }
  return out;
}

MannWhitney mann_whitney_u(std::span<const double> baseline, std::span<const double> candidate) {
  MannWhitney mw;
  const std::size_t n1 = baseline.size(), n2 = candidate.size(), n = n1 + n2;
  if (n1 == 0 || n2 == 0) return mw;
  struct Item {
    double value;
    bool from_baseline;
  };
  std::vector<Item> all;
  all.reserve(n);
  for (double v : baseline) all.push_back({v, true});
  for (double v : candidate) all.push_back({v, false});
  std::sort(all.begin(), all.end(), [](const Item& a, const Item& b) { return a.value < b.value; });
  double rank_sum_baseline = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && all[j].value == all[i].value) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].from_baseline) rank_sum_baseline += mid_rank;
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2), dn = static_cast<double>(n);
  mw.u_baseline = rank_sum_baseline - dn1 * (dn1 + 1) / 2;
  mw.u_candidate = dn1 * dn2 - mw.u_baseline;
  const double mu = dn1 * dn2 / 2;
  const double variance = dn1 * dn2 / 12.0 * ((dn + 1) - (n > 1 ? tie_term / (dn * (dn - 1)) : 0.0));
  if (variance > 0) {
    mw.z = std::max(0.0, std::fabs(mw.u_baseline - mu) - 0.5) / std::sqrt(variance);
    mw.p_value = std::min(1.0, 2 * normal_sf(mw.z));
  } else {
    mw.z = 0;
    mw.p_value = 1;
  }
  if (!ties && n1 <= 20 && n2 <= 20) {
    const auto counts = exact_u_counts(n1, n2);
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    const auto u = static_cast<std::size_t>(std::llround(mw.u_baseline));
    double cdf = 0, sf = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      if (k <= u) cdf += counts[k];
      if (k >= u) sf += counts[k];
    }
    mw.p_value = std::min(1.0, 2 * std::min(cdf, sf) / total);
    mw.exact = true;
  }
  return mw;
}

Expected<Comparison> compare_samples(ComparedSample baseline, ComparedSample candidate,
                                     const BootstrapOptions& options) {
  for (const auto* s : {&baseline, &candidate}) {
    if (s->boot_times_s.empty()) {
      return make_error(
          ErrorKind::invalid_input,
          fmt::format("cannot compare \"{}\": none of its {} VMs became ready", s->label, s->vms),
          "compare scenarios in which at least one VM reached the ready milestone");
    }
  }
  Comparison c;
  auto figures = [](const std::vector<double>& v) {
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    return SampleFigures{sorted.size(), mean(sorted), quantile_sorted(sorted, 0.5),
                         quantile_sorted(sorted, 0.95), sorted.back()};
  };
  c.baseline_figures = figures(baseline.boot_times_s);
  c.candidate_figures = figures(candidate.boot_times_s);
  const auto& b = c.baseline_figures;
  const auto& k = c.candidate_figures;
  auto rel = [](double cand, double base) {
    return base != 0 ? (cand - base) / base : std::numeric_limits<double>::quiet_NaN();
  };
  c.mean_diff_s = k.mean - b.mean;
  c.p50_diff_s = k.p50 - b.p50;
  c.p95_diff_s = k.p95 - b.p95;
  c.max_diff_s = k.max - b.max;
  c.mean_rel = rel(k.mean, b.mean);
  c.p50_rel = rel(k.p50, b.p50);
  c.p95_rel = rel(k.p95, b.p95);
  c.max_rel = rel(k.max, b.max);
  if (baseline.time_to_all_ready_s && candidate.time_to_all_ready_s) {
    c.time_to_all_ready_diff_s = *candidate.time_to_all_ready_s - *baseline.time_to_all_ready_s;
    c.time_to_all_ready_rel = rel(*candidate.time_to_all_ready_s, *baseline.time_to_all_ready_s);
  }
  c.bootstrap = bootstrap_differences(baseline.boot_times_s, candidate.boot_times_s, options);
  c.mann_whitney = mann_whitney_u(baseline.boot_times_s, candidate.boot_times_s);
  const auto& ci = c.bootstrap.mean_diff;
  const bool ci_excludes_zero = !std::isnan(ci.lower) && (ci.lower > 0 || ci.upper < 0);
  c.significant = ci_excludes_zero && c.mann_whitney.p_value < 0.05;
  c.baseline = std::move(baseline);
  c.candidate = std::move(candidate);
  c.verdict = consolidation_verdict(c);
  return c;
}

std::string consolidation_verdict(const Comparison& c) {
  const bool candidate_faster = c.candidate_figures.mean < c.baseline_figures.mean;
  const ComparedSample& fast = candidate_faster ? c.candidate : c.baseline;
  const ComparedSample& slow = candidate_faster ? c.baseline : c.candidate;
  const auto& ratio = c.bootstrap.mean_ratio;  // candidate / baseline
  // "x % faster" = 1 - mean(fast) / mean(slow). The percentile interval of the ratio maps through the
  // monotonic transformations 1 - r (candidate faster) and 1 - 1/r (baseline faster).
  double pct, lo, hi;
  if (candidate_faster) {
    pct = 100 * (1 - ratio.estimate);
    lo = 100 * (1 - ratio.upper);
    hi = 100 * (1 - ratio.lower);
  } else {
    pct = 100 * (1 - 1 / ratio.estimate);
    lo = 100 * (1 - 1 / ratio.lower);
    hi = 100 * (1 - 1 / ratio.upper);
  }
  const int level = static_cast<int>(std::lround(ratio.level * 100));
  if (std::isnan(pct)) {
    return fmt::format("{} and {} cannot be compared: the mean boot time of {} is not positive",
                       c.baseline.label, c.candidate.label, c.baseline.label);
  }
  const std::string precision = format_percent(pct, lo, hi);
  const std::string ci_text = std::isnan(lo) || std::isnan(hi)
                                  ? std::string()
                                  : fmt::format(" ({} % CI {}\u2013{} %)", level,
                                                signed_number(lo, precision), signed_number(hi, precision));
  if (!c.significant) {
    return fmt::format(
        "{} and {} boot in about the same time: mean {:.2f} s vs {:.2f} s, {} differs by {} %{}, which is "
        "not "
        "significant (Mann\u2013Whitney p = {:.2g})",
        fast.label, slow.label, candidate_faster ? c.candidate_figures.mean : c.baseline_figures.mean,
        candidate_faster ? c.baseline_figures.mean : c.candidate_figures.mean, fast.label,
        signed_number(pct, precision), ci_text, c.mann_whitney.p_value);
  }
  return fmt::format("{} boots {} VMs {} % faster on average than {}{}", fast.label, fast.vms,
                     signed_number(pct, precision), slow.label, ci_text);
}

Expected<MeanShift> mean_shift(std::span<const double> before, std::span<const double> after, double level) {
  if (before.size() < 2 || after.size() < 2)
    return make_error(ErrorKind::invalid_input,
                      fmt::format("a mean shift needs two values on each side, not {} and {}", before.size(),
                                  after.size()));
  if (!(level > 0 && level < 1))
    return make_error(ErrorKind::invalid_input, fmt::format("confidence level {} is not in (0, 1)", level));
  MeanShift shift;
  shift.n_before = before.size();
  shift.n_after = after.size();
  shift.before_mean = mean(before);
  shift.after_mean = mean(after);
  const double vb = std::pow(*sample_stdev(before), 2) / static_cast<double>(before.size());
  const double va = std::pow(*sample_stdev(after), 2) / static_cast<double>(after.size());
  const double diff = shift.after_mean - shift.before_mean;
  double t = 0;
  if (va + vb > 0) {
    const double df =
        (va + vb) * (va + vb) /
        (va * va / static_cast<double>(after.size() - 1) + vb * vb / static_cast<double>(before.size() - 1));
    t = boost::math::quantile(boost::math::students_t(df), (1 + level) / 2);
  }
  const double half = t * std::sqrt(va + vb);
  shift.difference = ConfidenceInterval{diff, diff - half, diff + half, level};
  // Fieller: the ratios r with (a - r b)^2 <= t^2 (va + r^2 vb), a quadratic A r^2 + B r + C <= 0.
  const double a = shift.after_mean, b = shift.before_mean;
  const double ratio = b != 0 ? a / b : std::numeric_limits<double>::quiet_NaN();
  const double qa = b * b - t * t * vb, qb = -2 * a * b, qc = a * a - t * t * va;
  const double disc = qb * qb - 4 * qa * qc;
  if (b != 0 && qa > 0 && disc >= 0) {
    const double root = std::sqrt(disc);
    shift.relative =
        ConfidenceInterval{ratio - 1, (-qb - root) / (2 * qa) - 1, (-qb + root) / (2 * qa) - 1, level};
  } else {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    shift.relative = ConfidenceInterval{ratio - 1, nan, nan, level};
    shift.relative_bounded = false;
  }
  return shift;
}

}  // namespace bootstorm::results
