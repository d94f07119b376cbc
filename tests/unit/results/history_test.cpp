#include "results/history.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/rfc3339.hpp"

namespace bootstorm::results {
namespace {

// A run's summary with one scenario whose VMs were ready after `ready_s` on average (guest_agent is ready;
// running is a tenth of it).
Summary run_summary(int index, double ready_s, const std::string& scenario = "24 on one host",
                    const std::string& source = "simulated") {
  Summary s;
  s.run.id = "run" + std::to_string(index);
  s.run.plan = "nightly";
  s.run.platform = "kubevirt";
  s.run.source = source;
  s.run.outcome = "completed";
  s.run.started_at = format_rfc3339(from_unix_seconds(1796400000.0 + 3600.0 * index));
  s.run.golden = "win11-2026-11";
  ScenarioSummary sc;
  sc.name = scenario;
  sc.vms = 24;
  sc.ready_milestone = "guest_agent";
  const auto dist = [](double mean) {
    Distribution d;
    d.count = d.total = 24;
    d.ready_fraction = 1;
    d.mean = d.p50 = mean;
    d.p95 = mean * 1.2;
    return d;
  };
  sc.milestones = {{"ready", dist(ready_s)}, {"running", dist(ready_s / 10)}, {"guest_agent", dist(ready_s)}};
  s.scenarios.push_back(sc);
  return s;
}

std::vector<HistoryInput> twelve_runs(double before_s, double after_s, std::size_t change_at,
                                      std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, 0.001);
  std::vector<HistoryInput> runs;
  for (std::size_t i = 0; i < 12; ++i)
    runs.push_back(
        HistoryInput{"runs/" + std::to_string(i),
                     run_summary(static_cast<int>(i), (i < change_at ? before_s : after_s) + noise(rng))});
  return runs;
}

TEST(History, OneGroupPerPlanScenarioPlatformAndSourceInStartOrder) {
  std::vector<HistoryInput> runs;
  for (int i = 3; i >= 0; --i) runs.push_back({"r" + std::to_string(i), run_summary(i, 0.1)});
  runs.push_back({"p", run_summary(9, 0.1, "24 on one host", "predicted")});
  runs.push_back({"o", run_summary(8, 0.1, "6 on four hosts")});
  const auto groups = build_history(runs);
  ASSERT_EQ(groups.size(), 3u);
  const HistoryGroup* simulated = nullptr;
  for (const auto& g : groups)
    if (g.key.scenario == "24 on one host" && g.key.source == "simulated") simulated = &g;
  ASSERT_NE(simulated, nullptr);
  ASSERT_EQ(simulated->points.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(simulated->points[i].run_id, "run" + std::to_string(i));
  EXPECT_EQ(group_label(simulated->key), "nightly / 24 on one host (kubevirt, simulated lab)");
}

TEST(History, TheSeriesAreReadyAndTheOtherMilestonesButNotReadyTwice) {
  const auto groups = build_history(twelve_runs(0.116, 0.116, 12, 1));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].series, (std::vector<std::string>{"ready", "running"}));
  EXPECT_DOUBLE_EQ(groups[0].series_significance, 0.025);
}

TEST(History, ASlowerSecondHalfIsOneChangePointWithItsSize) {
  const auto groups = build_history(twelve_runs(0.116, 0.145, 5, 2));
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].change_points.size(), 1u);
  const HistoryChangePoint& cp = groups[0].change_points[0];
  EXPECT_EQ(cp.index, 5u);
  EXPECT_EQ(cp.run_id, "run5");
  const SeriesShift* head = cp.headline();
  ASSERT_NE(head, nullptr);
  ASSERT_TRUE(head->shift);
  EXPECT_TRUE(head->detected);
  EXPECT_EQ(head->shift->n_before, 5u);
  EXPECT_EQ(head->shift->n_after, 7u);
  EXPECT_LE(head->shift->difference.lower, 0.029);
  EXPECT_GE(head->shift->difference.upper, 0.029);
  EXPECT_NEAR(head->shift->relative.estimate, 0.145 / 0.116 - 1, 0.02);

  EXPECT_EQ(regressions(groups, 0.10).size(), 2u);  // ready and running both grew 25 %
  EXPECT_TRUE(regressions(groups, 0.50).empty());
}

TEST(History, AFasterSecondHalfIsAChangeButNoRegression) {
  const auto groups = build_history(twelve_runs(0.145, 0.116, 6, 3));
  ASSERT_EQ(groups[0].change_points.size(), 1u);
  EXPECT_EQ(groups[0].change_points[0].index, 6u);
  EXPECT_TRUE(regressions(groups, 0.05).empty());
}

TEST(History, NoChangeOverTwentySeedsGivesNoChangePoint) {
  int with_change = 0;
  for (std::uint64_t seed = 100; seed < 120; ++seed)
    if (!build_history(twelve_runs(0.116, 0.116, 12, seed))[0].change_points.empty()) ++with_change;
  EXPECT_LE(with_change, 3);  // at most 5 % per group: Binomial(20, 0.05) exceeds 3 with probability 1.6 %
}

TEST(History, APlatformChangeIsMarkedAtTheRunAfterIt) {
  auto runs = twelve_runs(0.116, 0.116, 12, 4);
  for (std::size_t i = 7; i < runs.size(); ++i) {
    runs[i].summary.run.golden = "win11-2026-12";
    runs[i].summary.run.facts.components["KubeVirt"] = "v1.4.0";
  }
  for (std::size_t i = 0; i < 7; ++i) runs[i].summary.run.facts.components["KubeVirt"] = "v1.3.1";
  const auto groups = build_history(runs);
  ASSERT_EQ(groups[0].fact_changes.size(), 1u);
  EXPECT_EQ(groups[0].fact_changes[0].index, 7u);
  const auto& d = groups[0].fact_changes[0].differences;
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NE(d[0].find("v1.3.1"), std::string::npos);
  EXPECT_EQ(d[1], "golden image: win11-2026-11 vs win11-2026-12");
}

TEST(History, AFailedRunIsChartedButNotTested) {
  auto runs = twelve_runs(0.116, 0.116, 12, 5);
  runs[4].summary.run.outcome = "failed";
  runs[4].summary.scenarios[0].milestones[0].dist.mean = 9.0;
  const auto groups = build_history(runs);
  EXPECT_EQ(groups[0].points.size(), 12u);
  EXPECT_FALSE(groups[0].points[4].in_detection);
  EXPECT_EQ(groups[0].detection_points(), 11u);
  EXPECT_TRUE(groups[0].change_points.empty());
}

TEST(History, RepeatsArePooledIntoOnePoint) {
  Summary s = run_summary(0, 1.0);
  ScenarioSummary second = s.scenarios[0];
  second.repeat = 2;
  second.milestones[0].dist.count = 72;
  second.milestones[0].dist.total = 72;
  second.milestones[0].dist.mean = 3.0;
  second.milestones[0].dist.p50 = 3.0;
  s.scenarios.push_back(second);
  const auto groups = build_history({HistoryInput{"r", s}});
  const HistoryFigures& ready = groups[0].points[0].milestones.at("ready");
  EXPECT_EQ(groups[0].points[0].repeats, 2);
  EXPECT_EQ(ready.count, 96u);
  EXPECT_DOUBLE_EQ(*ready.mean, (24 * 1.0 + 72 * 3.0) / 96);
  EXPECT_DOUBLE_EQ(*ready.p50, 2.0);
}

}  // namespace
}  // namespace bootstorm::results
