// KubeVirt's storage counters over a storm's window: totals from counter deltas, per-VMI intervals between
// scrapes, per-node bins, resets, series that begin inside the window, and the queries themselves.
#include "providers/prometheus/storage_window.hpp"

#include <gtest/gtest.h>

namespace bootstorm::prometheus {
namespace {

// Six answers in which every metric of `vmi` on `node` has the same samples scaled by (metric index + 1).
std::array<QueryAnswer, 6> answers_of(
    const std::vector<std::tuple<std::string, std::string, std::vector<PromSample>>>& vmis) {
  std::array<QueryAnswer, 6> out;
  for (std::size_t m = 0; m < out.size(); ++m) {
    out[m].result_type = "matrix";
    for (const auto& [name, node, samples] : vmis) {
      PromSeries series;
      series.labels = {
          {"__name__", kStorageMetrics[m]}, {"name", name}, {"namespace", "storm"}, {"node", node}};
      for (auto s : samples) {
        s.value *= static_cast<double>(m + 1);
        series.samples.push_back(s);
      }
      out[m].series.push_back(series);
    }
  }
  return out;
}

const api::StorageTotals& total_of(const api::TelemetryReport& r, api::StorageSubject kind,
                                   const std::string& subject) {
  for (const auto& t : r.totals) {
    if (t.kind == kind && t.subject == subject) return t;
  }
  throw std::runtime_error("no total for " + subject);
}

TEST(StorageWindow, TotalsAreCounterDeltasAndASeriesBornInTheWindowCountsFromZero) {
  // desk-a existed before the window (baseline 100 at t=100), desk-b began inside it.
  auto answers = answers_of({{"desk-a", "w0", {{85, 40}, {100, 100}, {115, 400}, {130, 700}, {145, 700}}},
                             {"desk-b", "w0", {{115, 30}, {130, 330}}}});
  api::TelemetryRequest request{110, 140, {}, {}, {}};
  auto report = storage_report(answers, request, std::nullopt);
  ASSERT_TRUE(report.has_value()) << report.error().what();
  EXPECT_DOUBLE_EQ(report->resolution_s, 15);
  const auto& a = total_of(*report, api::StorageSubject::vm, "desk-a");
  EXPECT_DOUBLE_EQ(a.read_ios, 600);     // 700 - 100: the sample at 145 is past the window
  EXPECT_DOUBLE_EQ(a.write_ios, 1200);   // metric 1 scaled by 2
  EXPECT_DOUBLE_EQ(a.read_bytes, 1800);  // metric 2 scaled by 3
  ASSERT_TRUE(a.read_latency_s.has_value());
  EXPECT_DOUBLE_EQ(*a.read_latency_s, 5);  // read seconds (x5) over read I/Os (x1)
  EXPECT_DOUBLE_EQ(total_of(*report, api::StorageSubject::vm, "desk-b").read_ios, 330);
  EXPECT_DOUBLE_EQ(total_of(*report, api::StorageSubject::host, "w0").read_ios, 930);
}

TEST(StorageWindow, EachIntervalBetweenScrapesIsARateAndNodesAreBinnedOnTheGrid) {
  auto answers = answers_of({{"desk-a", "w0", {{105, 0}, {120, 150}, {135, 450}}},
                             {"desk-b", "w1", {{105, 0}, {120, 300}, {135, 300}}}});
  api::TelemetryRequest request{105, 135, {}, {}, {}};
  auto report = storage_report(answers, request, std::nullopt);
  ASSERT_TRUE(report.has_value());
  std::map<std::pair<std::string, double>, double> iops;
  for (const auto& s : report->samples) iops[{s.subject, s.to}] = s.rates.read_iops;
  EXPECT_DOUBLE_EQ((iops[{"desk-a", 120}]), 10);
  EXPECT_DOUBLE_EQ((iops[{"desk-a", 135}]), 20);
  EXPECT_DOUBLE_EQ((iops[{"desk-b", 135}]), 0);
  EXPECT_DOUBLE_EQ((iops[{"w0", 120}]), 10);  // the bin [105, 120) on the 15 s grid
  EXPECT_DOUBLE_EQ((iops[{"w1", 120}]), 20);
  // A 30 s grid (multiples of 30 in unix time) spreads each interval over the bins it overlaps.
  auto coarse = storage_report(answers, request, 30.0);
  ASSERT_TRUE(coarse.has_value());
  std::map<double, double> w0;
  for (const auto& s : coarse->samples) {
    if (s.subject == "w0") w0[s.from] = s.rates.read_iops;
  }
  ASSERT_EQ(w0.size(), 2u);
  EXPECT_DOUBLE_EQ(w0[90], 150.0 / 30);  // (105, 120] lies in [90, 120)
  EXPECT_DOUBLE_EQ(w0[120], 300.0 / 30);
}

TEST(StorageWindow, ARestartedVmiCountsFromZeroAgainAndOnlyTheRunsVmisAreKept) {
  auto answers = answers_of(
      {{"desk-a", "w0", {{100, 500}, {115, 600}, {130, 50}}}, {"other", "w0", {{100, 0}, {115, 1000}}}});
  api::TelemetryRequest request{100, 130, {"desk-a"}, {}, {}};
  auto report = storage_report(answers, request, std::nullopt);
  ASSERT_TRUE(report.has_value());
  EXPECT_DOUBLE_EQ(total_of(*report, api::StorageSubject::vm, "desk-a").read_ios, 150);
  for (const auto& t : report->totals) EXPECT_NE(t.subject, "other");
}

TEST(StorageWindow, NoSamplesIsAWarningAndAVectorIsAnError) {
  std::array<QueryAnswer, 6> empty;
  for (auto& a : empty) a.result_type = "matrix";
  auto report = storage_report(empty, api::TelemetryRequest{100, 130, {"desk-a"}, {}, {}}, std::nullopt);
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_NE(report->warnings[0].find("virt-handler"), std::string::npos);
  empty[3].result_type = "vector";
  EXPECT_FALSE(storage_report(empty, api::TelemetryRequest{100, 130, {}, {}, {}}, std::nullopt).has_value());
}

TEST(StorageWindow, TheQueryIsARangeSelectorOnTheNamespaceQuotedAsPromql) {
  EXPECT_EQ(raw_counter_query(2, "my\"ns", 150.5),
            "kubevirt_vmi_storage_read_traffic_bytes_total{namespace=\"my\\\"ns\"}[150500ms]");
  EXPECT_DOUBLE_EQ(raw_counter_range_s(api::TelemetryRequest{100, 160, {}, {}, {}}), 180);
}

// ---- Per-node sums ----

TEST(NodeSums, TheNamePatternIsTheCommonPrefixThenDigitsWhereEveryNameGoesOnWithDigits) {
  EXPECT_EQ(name_pattern({"bs-a1b2c3-4x-r740-001", "bs-a1b2c3-4x-r740-002", "bs-a1b2c3-4x-r740-010"}),
            "bs-a1b2c3-4x-r740-[0-9]+");
  EXPECT_EQ(name_pattern({"bs-a1b2c3-s-1000", "bs-a1b2c3-s-999"}), "bs-a1b2c3-s-[0-9]+");
  EXPECT_EQ(name_pattern({"desk.a", "desk.b"}), "desk\\..*");
  EXPECT_EQ(name_pattern({"vm-1", "vm-1x"}), "vm-.*");
  EXPECT_EQ(name_pattern({}), ".*");
  EXPECT_EQ(node_sum_query(2, "st\"orm", "vm-[0-9]+"),
            "sum by (node) "
            "(kubevirt_vmi_storage_read_traffic_bytes_total{namespace=\"st\\\"orm\",name=~\"vm-[0-9]+\"})");
}

TEST(NodeSums, TheGridEndsAtTheWindowsEndAndStartsAtOrBeforeItsStart) {
  const auto grid = node_sum_grid(api::TelemetryRequest{100.5, 130, {}, {}, {}}, 15);
  EXPECT_DOUBLE_EQ(grid.end, 130);
  EXPECT_DOUBLE_EQ(grid.start, 100);
  EXPECT_DOUBLE_EQ(grid.step, 15);
  const auto short_storm = node_sum_grid(api::TelemetryRequest{100, 108, {}, {}, {}}, 15);
  EXPECT_DOUBLE_EQ(short_storm.start, 93);
  const auto long_window = node_sum_grid(api::TelemetryRequest{0, 200000, {}, {}, {}}, 1);
  EXPECT_DOUBLE_EQ(long_window.step, 20) << "at most 10,000 intervals";
}

TEST(NodeSums, EachNodesIntervalsAreTheSumsDifferencesAndADropCountsNothing) {
  const NodeSumGrid grid{100, 130, 10};  // instants 100, 110, 120, 130
  std::array<QueryAnswer, 6> answers;
  for (std::size_t m = 0; m < answers.size(); ++m) {
    answers[m].result_type = "matrix";
    const double k = static_cast<double>(m + 1);
    PromSeries w0;  // VMIs there before the window
    w0.labels = {{"node", "w0"}};
    w0.samples = {{100, 50 * k}, {110, 150 * k}, {120, 120 * k}, {130, 220 * k}};
    PromSeries w1;  // its first VMI started after 110
    w1.labels = {{"node", "w1"}};
    w1.samples = {{120, 40 * k}, {130, 60 * k}};
    answers[m].series = {w0, w1};
  }
  auto report = node_sum_report(answers, api::TelemetryRequest{101, 130, {}, {}, {}}, grid, 2);
  ASSERT_TRUE(report.has_value()) << report.error().what();
  EXPECT_DOUBLE_EQ(report->resolution_s, 2);
  ASSERT_EQ(report->totals.size(), 2u);
  EXPECT_EQ(report->totals[0].subject, "w0");
  EXPECT_DOUBLE_EQ(report->totals[0].read_ios, 100 + 0 + 100) << "the drop at 120 counts nothing";
  EXPECT_DOUBLE_EQ(report->totals[0].read_bytes, 3 * 200);
  ASSERT_TRUE(report->totals[0].read_latency_s.has_value());
  EXPECT_DOUBLE_EQ(*report->totals[0].read_latency_s, 5.0);  // read seconds (x5) over read I/Os (x1)
  EXPECT_DOUBLE_EQ(report->totals[1].read_ios, 60);
  ASSERT_EQ(report->samples.size(), 6u);
  for (const auto& s : report->samples) {
    EXPECT_EQ(s.kind, api::StorageSubject::host);
    EXPECT_DOUBLE_EQ(s.to - s.from, 10);
  }
  EXPECT_DOUBLE_EQ(report->samples[0].rates.read_iops, 10) << "w0, (100, 110]";
  EXPECT_DOUBLE_EQ(report->samples[4].rates.read_iops, 4) << "w1, (110, 120]: from zero";
  EXPECT_DOUBLE_EQ(report->samples[3].rates.read_iops, 0) << "w1, (100, 110]: no VMI yet";
  answers[3].result_type = "vector";
  EXPECT_FALSE(node_sum_report(answers, api::TelemetryRequest{101, 130, {}, {}, {}}, grid, 2).has_value());
}

}  // namespace
}  // namespace bootstorm::prometheus
