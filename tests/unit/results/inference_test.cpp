#include "results/inference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "tests/support/normal_sample.hpp"

namespace bootstorm::results {
namespace {

using test_support::normal_sample;

TEST(MannWhitney, TextbookExampleExact) {
  // scipy.stats.mannwhitneyu documentation example (males vs females): U1 = 17, exact two-sided p = 1/9.
  const std::vector<double> males = {19, 22, 16, 29, 24};
  const std::vector<double> females = {20, 11, 17, 12};
  const auto mw = mann_whitney_u(males, females);
  EXPECT_DOUBLE_EQ(mw.u_baseline, 17.0);
  EXPECT_DOUBLE_EQ(mw.u_candidate, 3.0);
  EXPECT_TRUE(mw.exact);
  EXPECT_NEAR(mw.p_value, 1.0 / 9.0, 1e-12);
  // The same example's asymptotic value (scipy method="asymptotic": p = 0.11134688653314041) via z.
  EXPECT_NEAR(std::erfc(mw.z / std::sqrt(2.0)), 0.11134688653314041, 1e-9);
}

TEST(MannWhitney, CompleteSeparationExact) {
  // U = 0; P(U <= 0) = 1 / C(6,3) = 1/20; two-sided p = 0.1.
  const auto mw = mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6});
  EXPECT_DOUBLE_EQ(mw.u_baseline, 0.0);
  EXPECT_NEAR(mw.p_value, 0.1, 1e-12);
}

TEST(MannWhitney, NormalApproximationWithTiesMatchesIndependentComputation) {
  // Ties force the normal approximation. Independent computation: U by pair counting, tie-corrected variance.
  const std::vector<double> a = {1, 2, 2, 3, 3, 3, 4, 5, 6, 7, 7, 8};
  const std::vector<double> b = {3, 4, 4, 5, 6, 6, 7, 8, 9, 9, 10, 11, 12};
  double u = 0;
  for (double x : a)
    for (double y : b) u += x > y ? 1.0 : (x == y ? 0.5 : 0.0);
  std::map<double, int> counts;
  for (double x : a) ++counts[x];
  for (double y : b) ++counts[y];
  double tie = 0;
  for (auto& [v, t] : counts) tie += static_cast<double>(t) * t * t - t;
  const double n1 = 12, n2 = 13, n = 25;
  const double sigma = std::sqrt(n1 * n2 / 12 * ((n + 1) - tie / (n * (n - 1))));
  const double z = (std::fabs(u - n1 * n2 / 2) - 0.5) / sigma;
  const double p = std::erfc(z / std::sqrt(2.0));
  const auto mw = mann_whitney_u(a, b);
  EXPECT_FALSE(mw.exact);
  EXPECT_DOUBLE_EQ(mw.u_baseline, u);
  EXPECT_NEAR(mw.z, z, 1e-12);
  EXPECT_NEAR(mw.p_value, p, 1e-12);
  EXPECT_LT(mw.p_value, 0.05);  // b is clearly larger
}

TEST(MannWhitney, IdenticalSamplesAreNotSignificant) {
  const std::vector<double> a = {5, 5, 5, 5};
  const auto mw = mann_whitney_u(a, a);
  EXPECT_DOUBLE_EQ(mw.p_value, 1.0);
}

TEST(Bootstrap, CoversTrueDifferenceForNormalSamples) {
  std::mt19937_64 rng(42);
  const auto slow = normal_sample(rng, 24, 31.5, 2.0);
  const auto fast = normal_sample(rng, 24, 7.6, 1.0);
  const auto r = bootstrap_differences(slow, fast);
  const double true_diff = 7.6 - 31.5;
  EXPECT_LT(r.mean_diff.lower, true_diff);
  EXPECT_GT(r.mean_diff.upper, true_diff);
  EXPECT_LT(r.median_diff.lower, true_diff);
  EXPECT_GT(r.median_diff.upper, true_diff);
  EXPECT_LT(r.mean_ratio.lower, 7.6 / 31.5);
  EXPECT_GT(r.mean_ratio.upper, 7.6 / 31.5);
  EXPECT_LE(r.mean_diff.lower, r.mean_diff.estimate);
  EXPECT_GE(r.mean_diff.upper, r.mean_diff.estimate);
  // Width ~ 2 * 1.96 * sqrt(4/24 + 1/24) = 1.79 s; the bootstrap should be close.
  EXPECT_GT(r.mean_diff.upper - r.mean_diff.lower, 1.2);
  EXPECT_LT(r.mean_diff.upper - r.mean_diff.lower, 2.4);
}

TEST(Bootstrap, DeterministicForASeedAndSensitiveToIt) {
  std::mt19937_64 rng(7);
  const auto a = normal_sample(rng, 30, 10, 3);
  const auto b = normal_sample(rng, 30, 11, 3);
  const auto r1 = bootstrap_differences(a, b);
  const auto r2 = bootstrap_differences(a, b);
  EXPECT_EQ(r1.mean_diff.lower, r2.mean_diff.lower);
  EXPECT_EQ(r1.median_diff.upper, r2.median_diff.upper);
  BootstrapOptions other;
  other.seed = 99;
  const auto r3 = bootstrap_differences(a, b, other);
  EXPECT_NE(r1.mean_diff.lower, r3.mean_diff.lower);
}

TEST(Bootstrap, CoverageOverRepeatedExperimentsIsNearNominal) {
  // 120 independent experiments (n = 20 each side, sigma 2 and 3); the 95 % percentile interval of the mean
  // difference should cover the true difference in roughly 95 % of them (the percentile bootstrap is a little
  // liberal at this size, so the bound is loose).
  std::mt19937_64 rng(2024);
  BootstrapOptions opts;
  opts.resamples = 1000;
  int covered = 0;
  for (int i = 0; i < 120; ++i) {
    const auto a = normal_sample(rng, 20, 30, 2);
    const auto b = normal_sample(rng, 20, 25, 3);
    opts.seed = static_cast<std::uint64_t>(i) + 1;
    const auto r = bootstrap_differences(a, b, opts);
    if (r.mean_diff.lower <= -5 && -5 <= r.mean_diff.upper) ++covered;
  }
  EXPECT_GE(covered, 105) << covered;  // >= 87.5 %
  EXPECT_LT(covered, 120) << covered;  // an interval that always covers would be too wide
}

TEST(Compare, ConsolidationVerdictLikeTolly) {
  // Tolly 2024: 4 x 6 VMs averaged 31.54 s, 1 x 24 VMs averaged 7.58 s => 1 - 7.58 / 31.54 = 76 % faster.
  ComparedSample four{"4x R740 16GFC", 24, {}, 36.0};
  ComparedSample one{"1x R7625 64GFC", 24, {}, 9.0};
  for (int i = 0; i < 24; ++i) {
    const double offset = (i - 11.5) * 0.1;  // symmetric around 0: means stay exact
    four.boot_times_s.push_back(31.54 + offset * 2);
    one.boot_times_s.push_back(7.58 + offset * 0.5);
  }
  auto c = compare_samples(four, one);
  ASSERT_TRUE(c.has_value());
  EXPECT_NEAR(c->baseline_figures.mean, 31.54, 1e-9);
  EXPECT_NEAR(c->candidate_figures.mean, 7.58, 1e-9);
  EXPECT_NEAR(c->mean_rel, 7.58 / 31.54 - 1, 1e-12);
  EXPECT_NEAR(*c->time_to_all_ready_diff_s, -27.0, 1e-12);
  EXPECT_TRUE(c->significant);
  EXPECT_TRUE(c->mann_whitney.p_value < 1e-6);
  EXPECT_EQ(
      c->verdict.rfind("1x R7625 64GFC boots 24 VMs 76 % faster on average than 4x R740 16GFC (95 % CI ", 0),
      0u)
      << c->verdict;
  EXPECT_EQ(c->verdict, consolidation_verdict(*c));

  // Swapping the roles gives the same sentence: the faster layout is named first either way.
  auto swapped = compare_samples(one, four);
  ASSERT_TRUE(swapped.has_value());
  EXPECT_EQ(
      swapped->verdict.rfind("1x R7625 64GFC boots 24 VMs 76 % faster on average than 4x R740 16GFC", 0), 0u)
      << swapped->verdict;
}

TEST(Compare, NoSignificantDifferenceIsSaidSo) {
  std::mt19937_64 rng(5);
  ComparedSample a{"A", 20, normal_sample(rng, 20, 10, 1), std::nullopt};
  ComparedSample b{"B", 20, a.boot_times_s, std::nullopt};
  auto c = compare_samples(a, b);
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->significant);
  EXPECT_NE(c->verdict.find("about the same"), std::string::npos) << c->verdict;
  EXPECT_NE(c->verdict.find("not significant"), std::string::npos) << c->verdict;
}

TEST(Compare, EmptySampleIsAnError) {
  auto c =
      compare_samples(ComparedSample{"A", 4, {}, std::nullopt}, ComparedSample{"B", 4, {1, 2}, std::nullopt});
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(c.error().message.find("\"A\""), std::string::npos);
}

TEST(MeanShift, WelchAndFiellerOnAWorkedExample) {
  // before {1, 2, 3}, after {4, 5, 6}: difference 3, each variance of the mean 1/3, Welch df 4,
  // t(0.975, 4) = 2.7764451 (tables), half width 2.7764451 * sqrt(2/3).
  const auto s = mean_shift(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->before_mean, 2.0);
  EXPECT_DOUBLE_EQ(s->after_mean, 5.0);
  EXPECT_NEAR(s->difference.estimate, 3.0, 1e-12);
  const double half = 2.7764451 * std::sqrt(2.0 / 3.0);
  EXPECT_NEAR(s->difference.lower, 3.0 - half, 1e-6);
  EXPECT_NEAR(s->difference.upper, 3.0 + half, 1e-6);
  // Fieller: (5 - 2r)^2 = t^2 (1/3 + r^2/3), i.e. (4 - t^2/3) r^2 - 20 r + (25 - t^2/3) = 0.
  const double t2 = 2.7764451 * 2.7764451, qa = 4 - t2 / 3, qc = 25 - t2 / 3;
  const double root = std::sqrt(400 - 4 * qa * qc);
  ASSERT_TRUE(s->relative_bounded);
  EXPECT_NEAR(s->relative.estimate, 1.5, 1e-12);
  EXPECT_NEAR(s->relative.lower, (20 - root) / (2 * qa) - 1, 1e-5);
  EXPECT_NEAR(s->relative.upper, (20 + root) / (2 * qa) - 1, 1e-5);
}

TEST(MeanShift, WelchIntervalsCoverTheTrueDifferenceAtTheirLevel) {
  // 2,000 pairs of samples of five and seven (different spreads): the 95 % interval of the difference and of
  // the ratio cover the truth in 93-97 % of them (the binomial spread around 95 % is 0.5 %).
  std::mt19937_64 rng(99);
  int diff_covered = 0, ratio_covered = 0;
  const int trials = 2000;
  for (int i = 0; i < trials; ++i) {
    const auto before = normal_sample(rng, 5, 0.116, 0.002);
    const auto after = normal_sample(rng, 7, 0.145, 0.004);
    const auto s = mean_shift(before, after);
    ASSERT_TRUE(s);
    if (s->difference.lower <= 0.029 && 0.029 <= s->difference.upper) ++diff_covered;
    const double relative = 0.145 / 0.116 - 1;
    if (s->relative.lower <= relative && relative <= s->relative.upper) ++ratio_covered;
  }
  EXPECT_GE(diff_covered, trials * 93 / 100);
  EXPECT_LE(diff_covered, trials * 97 / 100);
  EXPECT_GE(ratio_covered, trials * 93 / 100);
  EXPECT_LE(ratio_covered, trials * 97 / 100);
}

TEST(MeanShift, ABeforeMeanIndistinguishableFromZeroLeavesTheRelativeUnbounded) {
  const auto s = mean_shift(std::vector<double>{-1, 1, -2, 2.1}, std::vector<double>{3, 4, 5});
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->relative_bounded);
  EXPECT_TRUE(std::isnan(s->relative.lower));
}

TEST(MeanShift, NoSpreadGivesAnIntervalOfWidthZero) {
  const auto s = mean_shift(std::vector<double>{2, 2}, std::vector<double>{3, 3, 3});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->difference.lower, 1.0);
  EXPECT_DOUBLE_EQ(s->difference.upper, 1.0);
  EXPECT_NEAR(s->relative.lower, 0.5, 1e-12);
}

TEST(MeanShift, OneValueOnASideIsAnError) {
  const auto s = mean_shift(std::vector<double>{2}, std::vector<double>{3, 3, 3});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("two values on each side"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm::results
