// history.md, history.json and the documents `history --index` reads, on summaries made for the purpose.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reports/history.hpp"
#include "reports/reports.hpp"
#include "results/summary.hpp"
#include "tests/unit/reports/fixture.hpp"

namespace bootstorm::reports {
namespace {

std::vector<results::HistoryInput> series(double before_s, double after_s) {
  std::vector<results::HistoryInput> runs;
  for (int i = 0; i < 10; ++i) {
    results::Summary s;
    s.run.id = fmt::format("r{}", i);
    s.run.plan = "nightly <canary>";
    s.run.platform = "vsphere";
    s.run.source = "measured";
    s.run.outcome = "completed";
    s.run.started_at = fmt::format("2026-11-{:02}T02:00:00.000Z", i + 1);
    results::ScenarioSummary sc;
    sc.name = "24 | one host";
    sc.vms = 24;
    sc.ready_milestone = "guest_agent";
    results::Distribution d;
    d.count = d.total = 24;
    d.ready_fraction = 1;
    d.mean = d.p50 = d.p95 = (i < 5 ? before_s : after_s) + 0.01 * (i % 3);
    sc.milestones = {{"ready", d}};
    s.scenarios.push_back(sc);
    runs.push_back({fmt::format("runs/{}", i), s});
  }
  return runs;
}

HistoryReportInput input_of(const std::vector<results::HistoryInput>& runs, std::optional<double> fail = {}) {
  HistoryReportInput in;
  in.groups = results::build_history(runs, in.options);
  in.fail_on_regression = fail;
  in.generated_at = testing::kGeneratedAt;
  return in;
}

TEST(HistoryReport, MarkdownSaysTheChangeAndEscapesWhatThePlanNames) {
  const auto in = input_of(series(30, 36));
  const std::string md = render_history_md(in);
  EXPECT_NE(md.find("## nightly &lt;canary&gt; / 24 \\| one host (vsphere, measured)"), std::string::npos)
      << md;
  EXPECT_NE(md.find("change at run r5 (2026-11-06T02:00:00Z): ready 30.01 s \u2192 36.01 s (+20.0 %"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("Simulated lab"), std::string::npos);
  EXPECT_NE(md.find("| 10 | r9 |"), std::string::npos);
}

TEST(HistoryReport, JsonCarriesTheGroupsTheChangePointsAndTheRegressions) {
  const auto doc = history_to_json(input_of(series(30, 36), 0.1));
  EXPECT_EQ(doc["schemaVersion"], 1);
  ASSERT_EQ(doc["groups"].size(), 1u);
  const auto& g = doc["groups"][0];
  EXPECT_EQ(g["runs"].size(), 10u);
  ASSERT_EQ(g["changePoints"].size(), 1u);
  EXPECT_EQ(g["changePoints"][0]["run"], "r5");
  const auto& ready = g["changePoints"][0]["shifts"][0];
  EXPECT_EQ(ready["milestone"], "ready");
  EXPECT_TRUE(ready["detected"].get<bool>());
  EXPECT_NEAR(ready["relative"]["estimate"].get<double>(), 0.2, 0.001);
  ASSERT_EQ(doc["regressions"].size(), 1u);
  EXPECT_EQ(doc["regressions"][0]["milestone"], "ready");
  EXPECT_TRUE(history_to_json(input_of(series(30, 30), 0.1))["regressions"].empty());
}

TEST(HistoryReport, TerminalLinesSayTooFewRunsWhenThereAreThree) {
  auto runs = series(30, 30);
  runs.resize(3);
  const auto lines = history_lines(input_of(runs).groups);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "nightly <canary> / 24 | one host (vsphere, measured): 3 runs, too few to look for a change");
}

TEST(HistoryReport, DurationsKeepTheDigitsAChangeNeeds) {
  EXPECT_EQ(history_duration(0.1162), "116.2 ms");
  EXPECT_EQ(history_duration(34.183), "34.18 s");
  EXPECT_EQ(history_duration(612.4), "612 s");
}

TEST(HistoryReport, TheIndexDocumentsOfARunGiveBackItsSummary) {
  const auto record = testing::fixture_record();
  const auto summary = results::summarize(record);
  const auto docs = quantile_documents(record, summary);
  const auto runs =
      history_runs_from_documents(nlohmann::json::parse(docs.dump()), "https://os:9200/bootstorm");
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->runs.size(), 1u);
  EXPECT_TRUE(runs->skipped.empty());
  const results::Summary& back = runs->runs[0].summary;
  EXPECT_EQ(back.run.id, summary.run.id);
  EXPECT_EQ(back.run.plan, summary.run.plan);
  EXPECT_EQ(back.run.source, summary.run.source);
  ASSERT_EQ(back.scenarios.size(), summary.scenarios.size());
  for (std::size_t i = 0; i < summary.scenarios.size(); ++i) {
    EXPECT_EQ(back.scenarios[i].name, summary.scenarios[i].name);
    EXPECT_EQ(back.scenarios[i].ready_milestone, summary.scenarios[i].ready_milestone);
    ASSERT_EQ(back.scenarios[i].milestones.size(), summary.scenarios[i].milestones.size());
    for (std::size_t m = 0; m < summary.scenarios[i].milestones.size(); ++m) {
      const auto& a = summary.scenarios[i].milestones[m];
      const auto& b = back.scenarios[i].milestones[m];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.dist.count, b.dist.count);
      EXPECT_EQ(a.dist.total, b.dist.total);
      ASSERT_EQ(a.dist.mean.has_value(), b.dist.mean.has_value());
      if (a.dist.mean) {
        EXPECT_NEAR(*a.dist.mean, *b.dist.mean, 1e-9);
      }
    }
  }
}

TEST(HistoryReport, DocumentsWithoutTheMilestoneNameAreLeftOutWithTheReason) {
  const nlohmann::json old = nlohmann::json::array({{{"metricName", "vmiLatencyQuantilesMeasurement"},
                                                     {"uuid", "abc"},
                                                     {"quantileName", "Ready"},
                                                     {"avg", 1}}});
  const auto runs = history_runs_from_documents(old, "https://os:9200/bootstorm");
  ASSERT_TRUE(runs);
  EXPECT_TRUE(runs->runs.empty());
  ASSERT_EQ(runs->skipped.size(), 1u);
  EXPECT_NE(runs->skipped[0].why.find("report RUN --index URL"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm::reports
