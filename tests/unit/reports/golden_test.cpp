// Every renderer against its golden file, on the fixed RunRecord of fixture.hpp with a fixed generation time.
#include "tests/unit/reports/golden.hpp"

#include <gtest/gtest.h>

#include "reports/compare.hpp"
#include "reports/reports.hpp"
#include "tests/unit/reports/fixture.hpp"

namespace bootstorm::reports {
namespace {

using testing::expect_golden;
using testing::fixture_record;
using testing::kGeneratedAt;

class Golden : public ::testing::Test {
 protected:
  results::RunRecord record = fixture_record();
  results::Summary summary = results::summarize(record);
};

TEST_F(Golden, VmsCsv) {
  expect_golden("vms.csv", render_vms_csv(record));
}
TEST_F(Golden, SummaryJson) {
  expect_golden("summary.json", render_summary_json(summary));
}
TEST_F(Golden, ReportMd) {
  expect_golden("report.md", render_report_md(record, summary, kGeneratedAt));
}
TEST_F(Golden, ReportHtml) {
  expect_golden("report.html", render_report_html(record, summary, kGeneratedAt));
}
TEST_F(Golden, JunitXml) {
  expect_golden("junit.xml", render_junit_xml(record, summary));
}
TEST_F(Golden, MetricsProm) {
  expect_golden("metrics.prom", render_metrics_prom(record, summary));
}
TEST_F(Golden, QuantilesJson) {
  expect_golden("quantiles.json", quantile_documents(record, summary).dump(2) + "\n");
}
TEST_F(Golden, VmLatencyJson) {
  expect_golden("vm-latency.json", vm_documents(record, summary).dump(2) + "\n");
}
TEST_F(Golden, BulkNdjson) {
  expect_golden("bulk.ndjson", to_bulk_ndjson("bootstorm-quantiles", quantile_documents(record, summary)));
}

TEST_F(Golden, CompareMdAndHtml) {
  LoadedRun run{"runs/consolidation-4x16g-vs-1x64g-20261130T100000-3f9a2c", summary};
  auto set = compare_runs({run});
  ASSERT_TRUE(set.has_value()) << set.error().what();
  expect_golden("compare.md", render_compare_md({run}, *set, kGeneratedAt));
  expect_golden("compare.html", render_compare_html({run}, *set, kGeneratedAt));
}

}  // namespace
}  // namespace bootstorm::reports
