#include "results/descriptive.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace bootstorm::results {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

TEST(Quantile, OneToHundredMatchesNumpyDefault) {
  // numpy.quantile(np.arange(1, 101), [0, .5, .9, .95, .99, 1]) = [1, 50.5, 90.1, 95.05, 99.01, 100]
  const auto v = one_to(100);
  EXPECT_DOUBLE_EQ(*quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(*quantile(v, 0.5), 50.5);
  EXPECT_NEAR(*quantile(v, 0.9), 90.1, 1e-12);
  EXPECT_NEAR(*quantile(v, 0.95), 95.05, 1e-12);
  EXPECT_NEAR(*quantile(v, 0.99), 99.01, 1e-12);
  EXPECT_DOUBLE_EQ(*quantile(v, 1.0), 100.0);
}

TEST(Quantile, HandComputedSmallSamples) {
  // Unsorted input; h = (n-1) p.
  const std::vector<double> four = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(*quantile(four, 0.5), 2.5);    // h = 1.5
  EXPECT_DOUBLE_EQ(*quantile(four, 0.25), 1.75);  // h = 0.75
  EXPECT_DOUBLE_EQ(*quantile(four, 0.9), 3.7);    // h = 2.7
  const std::vector<double> three = {10, 30, 20};
  EXPECT_DOUBLE_EQ(*median(three), 20.0);
  const std::vector<double> single = {7.5};
  EXPECT_DOUBLE_EQ(*quantile(single, 0.99), 7.5);
  EXPECT_FALSE(quantile(std::vector<double>{}, 0.5).has_value());
  EXPECT_DOUBLE_EQ(*quantile(four, -1.0), 1.0);  // clamped
  EXPECT_DOUBLE_EQ(*quantile(four, 2.0), 4.0);
}

TEST(MeanStdev, SampleStandardDeviation) {
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(v), 5.0);
  // sum of squared deviations = 32; sample variance 32 / 7.
  EXPECT_NEAR(*sample_stdev(v), std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_FALSE(sample_stdev(std::vector<double>{3.0}).has_value());
  EXPECT_DOUBLE_EQ(mean(std::vector<double>{}), 0.0);
}

TEST(Describe, FieldsAndReadyFraction) {
  const Distribution d = describe({5, 1, 4, 2, 3}, 8, 0.25);
  EXPECT_EQ(d.count, 5u);
  EXPECT_EQ(d.total, 8u);
  EXPECT_DOUBLE_EQ(d.ready_fraction, 5.0 / 8.0);
  EXPECT_DOUBLE_EQ(*d.mean, 3.0);
  EXPECT_NEAR(*d.stdev, std::sqrt(2.5), 1e-12);
  EXPECT_DOUBLE_EQ(*d.min, 1.0);
  EXPECT_DOUBLE_EQ(*d.max, 5.0);
  EXPECT_DOUBLE_EQ(*d.p50, 3.0);
  EXPECT_NEAR(*d.p90, 4.6, 1e-12);   // h = 3.6
  EXPECT_NEAR(*d.p95, 4.8, 1e-12);   // h = 3.8
  EXPECT_NEAR(*d.p99, 4.96, 1e-12);  // h = 3.96
  EXPECT_DOUBLE_EQ(d.resolution_s, 0.25);
}

TEST(Describe, EmptySampleHasNoStatistics) {
  const Distribution d = describe({}, 4, 1.0);
  EXPECT_EQ(d.count, 0u);
  EXPECT_DOUBLE_EQ(d.ready_fraction, 0.0);
  EXPECT_FALSE(d.mean || d.stdev || d.min || d.p50 || d.p99 || d.max);
}

}  // namespace
}  // namespace bootstorm::results
