// The capacity search's steps and how a step is judged, on hand-made results.
#include "orchestrator/sizing/capacity_search.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "results/slo_text.hpp"

namespace bootstorm::sizing {
namespace {

// Runs a search against a layout whose true capacity is `capacity` per host; returns the counts tried.
std::vector<int> run(CapacitySearch& search, const std::function<bool(int)>& meets) {
  std::vector<int> tried;
  while (auto n = search.next()) {
    tried.push_back(*n);
    search.record(*n, meets(*n));
    if (tried.size() > 100) break;
  }
  return tried;
}

TEST(CapacitySearch, DoublesUntilAMissThenBisectsToTheResolution) {
  CapacitySearch search(24, 100000, 1);
  const auto tried = run(search, [](int n) { return n <= 384; });
  EXPECT_EQ(tried, (std::vector<int>{24, 48, 96, 192, 384, 768, 576, 480, 432, 408, 396, 390, 387, 385}));
  EXPECT_EQ(search.capacity(), 384);
  EXPECT_EQ(search.first_miss(), 385);
  EXPECT_FALSE(search.reached_max());
}

TEST(CapacitySearch, ACoarserResolutionStopsEarlierWithinOneStep) {
  CapacitySearch search(6, 100000, 8);
  run(search, [](int n) { return n <= 139; });
  ASSERT_TRUE(search.capacity() && search.first_miss());
  EXPECT_LE(*search.first_miss() - *search.capacity(), 8);
  EXPECT_LE(*search.capacity(), 139);
  EXPECT_GT(*search.first_miss(), 139);
}

TEST(CapacitySearch, StopsAtTheBoundWhenEveryStepMeets) {
  CapacitySearch search(5, 30, 1);
  const auto tried = run(search, [](int) { return true; });
  EXPECT_EQ(tried, (std::vector<int>{5, 10, 20, 30}));
  EXPECT_EQ(search.capacity(), 30);
  EXPECT_TRUE(search.reached_max());
}

TEST(CapacitySearch, AFirstStepThatMissesEndsTheSearch) {
  CapacitySearch search(24, 1000, 1);
  const auto tried = run(search, [](int) { return false; });
  EXPECT_EQ(tried, (std::vector<int>{24}));
  EXPECT_FALSE(search.capacity());
  EXPECT_EQ(search.first_miss(), 24);
}

TEST(CapacitySearch, ANonMonotoneMeasurementStillEnds) {
  CapacitySearch search(4, 1000, 1);
  // Meets at 4, misses at 8, meets at 6, misses at 7 ... and meets at 9 were it asked (it is not).
  const auto tried = run(search, [](int n) { return n != 8 && n != 7; });
  EXPECT_EQ(search.capacity(), 6);
  EXPECT_EQ(search.first_miss(), 7);
  EXPECT_EQ(tried.size(), 4u);
}

results::ScenarioSummary storm(std::vector<double> times, int vms) {
  results::ScenarioSummary s;
  s.vms = vms;
  s.ready_milestone = "guest_agent";
  s.boot_times_s = times;
  auto d = results::describe(times, static_cast<std::size_t>(vms), 0);
  s.milestones.push_back({"ready", d});
  return s;
}

TEST(JudgeStep, APercentileAmongTheDesktopsThatNeverBootedIsNotReached) {
  const results::SloRecord p95 = *results::parse_slo_text("ready p95 <= 60s");
  // 20 desktops, 19 ready: P95's rank (0.95 x 19 = 18.05) falls between the last ready and the missing one.
  std::vector<double> times;
  for (int i = 1; i <= 19; ++i) times.push_back(i);
  EXPECT_FALSE(censored_slo_value(storm(times, 20), p95));
  // All 20 ready: the ordinary type-7 P95.
  times.push_back(20);
  ASSERT_TRUE(censored_slo_value(storm(times, 20), p95));
  EXPECT_DOUBLE_EQ(*censored_slo_value(storm(times, 20), p95), 19.05);
  // P50 of 20 with 19 ready is defined: it falls among the ready ones.
  times.pop_back();
  EXPECT_DOUBLE_EQ(*censored_slo_value(storm(times, 20), *results::parse_slo_text("p50 <= 60s")), 10.5);
}

TEST(JudgeStep, ADesktopThatNeverBootedMissesATimeBoundButNotAReadyFractionFloor) {
  std::vector<double> times(99, 10.0);
  const auto s = storm(times, 100);  // P50 10 s, 99 % ready
  const StepFigures p50 = judge_step(100, {s}, *results::parse_slo_text("p50 <= 60s"));
  ASSERT_TRUE(p50.value);
  EXPECT_FALSE(p50.meets);
  EXPECT_DOUBLE_EQ(p50.ready_fraction, 0.99);
  EXPECT_TRUE(judge_step(100, {s}, *results::parse_slo_text("ready_fraction >= 99%")).meets);
  EXPECT_FALSE(judge_step(100, {s}, *results::parse_slo_text("ready_fraction >= 99.5%")).meets);
}

TEST(JudgeStep, RepeatedStormsGiveAnIntervalAndAMarginalVerdict) {
  const results::SloRecord p50 = *results::parse_slo_text("p50 <= 60s");
  const StepFigures clear = judge_step(10, {storm({50, 50, 50}, 3), storm({52, 52, 52}, 3)}, p50);
  EXPECT_TRUE(clear.meets);
  ASSERT_TRUE(clear.value_low && clear.value_high);
  EXPECT_DOUBLE_EQ(*clear.value, 51);
  // t(1) = 12.706, sd = sqrt(2), n = 2: half width 12.706.
  EXPECT_NEAR(*clear.value_high - *clear.value, 12.706, 1e-9);
  EXPECT_TRUE(clear.marginal);  // 51 +- 12.7 reaches 60
  const StepFigures tight = judge_step(10, {storm({50}, 1), storm({50.2}, 1), storm({49.8}, 1)}, p50);
  EXPECT_TRUE(tight.meets);
  EXPECT_FALSE(tight.marginal);
  EXPECT_EQ(tight.storms, 3);
}

TEST(TCritical, KnownValues) {
  EXPECT_DOUBLE_EQ(t_critical_95(1), 12.706);
  EXPECT_DOUBLE_EQ(t_critical_95(4), 2.776);
  EXPECT_DOUBLE_EQ(t_critical_95(30), 2.042);
  EXPECT_DOUBLE_EQ(t_critical_95(1000), 1.960);
}

}  // namespace
}  // namespace bootstorm::sizing
