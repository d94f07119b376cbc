#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "reports/csv.hpp"
#include "reports/reports.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/unit/reports/fixture.hpp"

namespace bootstorm::reports {
namespace {

using testing::count;
using testing::fixture_record;
using testing::kGeneratedAt;
using testing::tag_balance_problem;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

class Render : public ::testing::Test {
 protected:
  results::RunRecord record = fixture_record();
  results::Summary summary = results::summarize(record);
};

TEST_F(Render, OnlyTheGenerationTimeDiffersBetweenRenders) {
  const std::string other = "2030-01-01T00:00:00.000Z";
  EXPECT_EQ(render_report_md(record, summary, kGeneratedAt),
            replace_all(render_report_md(record, results::summarize(record), other), other, kGeneratedAt));
  EXPECT_EQ(render_report_html(record, summary, kGeneratedAt),
            replace_all(render_report_html(record, results::summarize(record), other), other, kGeneratedAt));
  EXPECT_EQ(render_metrics_prom(record, summary), render_metrics_prom(record, results::summarize(record)));
  EXPECT_EQ(render_vms_csv(record), render_vms_csv(fixture_record()));
}

TEST_F(Render, VmsCsvColumnsAndQuoting) {
  const std::string csv = render_vms_csv(record);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(
      header,
      "scenario,repeat,vm,host,start_requested_utc,start_requested_s,start_requested_res_s,"
      "start_acknowledged_s,start_acknowledged_res_s,scheduled_s,scheduled_res_s,running_s,running_res_s,"
      "guest_agent_s,guest_agent_res_s,ip_assigned_s,ip_assigned_res_s,port_open_s,port_open_res_s,beacon_s,"
      "beacon_res_s,status,reason");
  auto rows = parse_csv(csv);
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), 17u);
  for (const auto& row : *rows) EXPECT_EQ(row.size(), 23u);
  // The failed VM: its reason (comma and quotes) survives the round trip, its guest_agent cells are empty.
  const auto failed =
      std::find_if(rows->begin(), rows->end(), [](const auto& r) { return r[21] == "failed"; });
  ASSERT_NE(failed, rows->end());
  EXPECT_EQ((*failed)[22], "timeout waiting for guest_agent after 600 s, \"tools not running\"");
  EXPECT_EQ((*failed)[13], "");
  EXPECT_EQ((*failed)[14], "");
  // A ready VM: guest_agent_s equals its boot time.
  const auto& first = (*rows)[1];
  EXPECT_EQ(first[0], "4x R740 16GFC");
  EXPECT_EQ(first[4].size(), 24u);  // 2026-...T..:..:..mmmZ
  EXPECT_DOUBLE_EQ(std::stod(first[13]), *record.vms[0].ready_s);
  EXPECT_EQ(first[14], "1");
}

TEST_F(Render, HtmlIsSelfContainedAndWellFormed) {
  const std::string html = render_report_html(record, summary, kGeneratedAt);
  EXPECT_EQ(tag_balance_problem(html), "");
  // No resource loads: the only URL is the SVG namespace.
  const std::string without_ns = replace_all(html, "xmlns=\"http://www.w3.org/2000/svg\"", "");
  EXPECT_EQ(without_ns.find("http://"), std::string::npos);
  EXPECT_EQ(without_ns.find("https://"), std::string::npos);
  for (const char* forbidden : {"<script", "<link", "<img", "url(", "@import", "<iframe"})
    EXPECT_EQ(html.find(forbidden), std::string::npos) << forbidden;
  // Charts: CDF, histogram, ready-over-time, where the time went, and one timeline per scenario.
  EXPECT_EQ(count(html, "<svg "), 6u);
  EXPECT_EQ(count(html, "</svg>"), 6u);
  for (const char* id : {"id=\"cdf\"", "id=\"histogram\"", "id=\"ready-over-time\"", "id=\"phases\"",
                         "id=\"timeline-1\"", "id=\"timeline-2\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  // Simulated lab banner and title; the plan is escaped.
  EXPECT_NE(html.find("<title>Boot storm report: consolidation-4x16g-vs-1x64g \u2014 simulated lab</title>"),
            std::string::npos);
  EXPECT_NE(html.find("class=\"banner\""), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co"), std::string::npos);
  // The failure and its reason, the verdict.
  EXPECT_NE(html.find("bs-3f9a2c-a-05"), std::string::npos);
  EXPECT_NE(html.find("1x R7625 64GFC boots 8 VMs"), std::string::npos);
}

TEST_F(Render, RealPlatformHasNoSimulatedBanner) {
  record.simulated = false;
  record.lab.clear();
  summary = results::summarize(record);
  const std::string html = render_report_html(record, summary, kGeneratedAt);
  const std::string md = render_report_md(record, summary, kGeneratedAt);
  EXPECT_EQ(html.find("class=\"banner\""), std::string::npos);
  EXPECT_EQ(html.find("imulated"), std::string::npos);
  EXPECT_EQ(md.find("imulated"), std::string::npos);
  EXPECT_EQ(tag_balance_problem(html), "");
}

TEST_F(Render, MarkdownReportContents) {
  const std::string md = render_report_md(record, summary, kGeneratedAt);
  EXPECT_EQ(md.rfind("# Boot storm report: consolidation-4x16g-vs-1x64g \u2014 simulated lab\n", 0), 0u);
  EXPECT_NE(
      md.find("| bs-3f9a2c-a-05 | timeout waiting for guest\\_agent after 600 s, \"tools not running\" |"),
      std::string::npos);
  EXPECT_NE(md.find("clone of bs-3f9a2c-b-09 failed: disk full"), std::string::npos);
  EXPECT_NE(md.find("## SLOs"), std::string::npos);
  EXPECT_NE(md.find("\u274c **FAIL**"), std::string::npos);
  EXPECT_NE(md.find(kGeneratedAt), std::string::npos);
}

// What the answers said, in both reports: throttling with Retry-After, the APF priority level, vCenter's
// queue.
TEST_F(Render, WhatTheAnswersSaidIsInBothReports) {
  http::ApiStats answers;
  for (int i = 0; i < 3; ++i) answers.note_answer(200, {{"X-Kubernetes-PF-PriorityLevel-UID", "pl-uid"}});
  answers.note_answer(429, {{"Retry-After", "1"}, {"X-Kubernetes-PF-PriorityLevel-UID", "pl-uid"}});
  answers.tasks = 10;
  answers.tasks_queued = 4;
  answers.task_queue_s = 2.0;
  record.scenarios[0].api_answers = answers;
  const results::Summary with_answers = results::summarize(record);
  const std::string md = render_report_md(record, with_answers, kGeneratedAt);
  EXPECT_NE(md.find("API answers: 1 of 4 throttled (429), 0 server errors (5xx); 1 answer asked to wait "
                    "(Retry-After, 1 s in all)."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("API Priority and Fairness: priority level pl-uid (4 answers)"), std::string::npos) << md;
  EXPECT_NE(md.find("vCenter tasks: 10 followed, 4 waited in vCenter's queue (2.0 s in all, 0.50 s each on "
                    "average)."),
            std::string::npos)
      << md;
  const std::string html = render_report_html(record, with_answers, kGeneratedAt);
  EXPECT_NE(html.find("API Priority and Fairness: priority level pl-uid"), std::string::npos);
  // The fixture's run recorded none of it: no such sentence.
  EXPECT_EQ(render_report_md(record, summary, kGeneratedAt).find("API answers:"), std::string::npos);
}

TEST_F(Render, JunitOneTestcasePerSloAndScenario) {
  const std::string xml = render_junit_xml(record, summary);
  EXPECT_EQ(tag_balance_problem(xml.substr(xml.find("?>") + 2)), "");
  EXPECT_EQ(count(xml, "<testcase "), summary.slo.size());
  const auto failures = static_cast<std::size_t>(
      std::count_if(summary.slo.begin(), summary.slo.end(), [](const auto& r) { return !r.pass; }));
  ASSERT_GT(failures, 0u);
  EXPECT_EQ(count(xml, "<failure "), failures);
  EXPECT_NE(xml.find("failures=\"" + std::to_string(failures) + "\""), std::string::npos);
  EXPECT_EQ(count(xml, "<testsuite "), 2u);
}

// The histogram of either format: cumulative buckets never decrease and +Inf equals _count equals the
// ready VMs.
void expect_consistent_histogram(const std::string& prom, const results::RunRecord& record,
                                 const results::Summary& summary) {
  for (const auto& sc : summary.scenarios) {
    const std::string key = "scenario=\"" + sc.name + "\"";
    std::istringstream in(prom);
    std::string line;
    double previous = -1;
    std::size_t buckets = 0;
    while (std::getline(in, line)) {
      if (line.rfind("bootstorm_boot_time_seconds_bucket{", 0) != 0 || line.find(key) == std::string::npos)
        continue;
      const double v = std::stod(line.substr(line.rfind(' ') + 1));
      EXPECT_GE(v, previous) << line;
      previous = v;
      ++buckets;
      // le="30.0": recount directly from the record.
      if (line.find("le=\"30.0\"") != std::string::npos) {
        std::size_t n = 0;
        for (const auto& vm : record.vms)
          if (vm.scenario == sc.name && vm.ready_s && *vm.ready_s <= 30.0) ++n;
        EXPECT_EQ(static_cast<std::size_t>(v), n) << line;
      }
    }
    EXPECT_EQ(buckets, std::size(kBootTimeBuckets) + 1);
    EXPECT_EQ(static_cast<std::size_t>(previous), sc.boot_times_s.size());
  }
}

// Every sample belongs to the family declared last before it, and every family has HELP and TYPE: in
// OpenMetrics the sample names the family plus a suffix of its type; in the text format exactly, or with
// _bucket, _count or _sum for a histogram.
void expect_declared_families(const std::string& prom, MetricsFormat format) {
  std::istringstream in(prom);
  std::string line, family, type;
  std::set<std::string> helped;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
      type = line.substr(line.rfind(' ') + 1);
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0) {
      helped.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    ASSERT_FALSE(family.empty()) << line;
    EXPECT_TRUE(helped.contains(family)) << family << " has no HELP";
    const std::string name = line.substr(0, line.find_first_of("{ "));
    if (format == MetricsFormat::openmetrics) {
      EXPECT_EQ(name.rfind(family, 0), 0u) << line;
    } else if (type == "histogram") {
      EXPECT_TRUE(name == family + "_bucket" || name == family + "_count" || name == family + "_sum") << line;
    } else {
      EXPECT_EQ(name, family) << line;
      if (type == "counter") {
        EXPECT_TRUE(name.ends_with("_total")) << line;
      }
    }
  }
}

TEST_F(Render, MetricsPromIsTheTextFormatWithEveryFamilyDeclared) {
  const std::string prom = render_metrics_prom(record, summary);
  EXPECT_EQ(prom.find("# EOF"), std::string::npos);
  EXPECT_EQ(prom.find("# UNIT"), std::string::npos);
  // Where the figures come from: an info metric, which the text format writes as a gauge of 1.
  EXPECT_NE(prom.find("# TYPE bootstorm_run_info gauge\n"), std::string::npos);
  EXPECT_NE(prom.find("bootstorm_run_info{run_id=\"" + record.run_id + "\""), std::string::npos);
  EXPECT_NE(prom.find(std::string("source=\"") + (record.simulated ? "simulated" : "measured") + "\""),
            std::string::npos);
  EXPECT_NE(prom.find("# TYPE bootstorm_api_requests_total counter\n"), std::string::npos);
  EXPECT_NE(prom.find("# HELP bootstorm_api_requests_total "), std::string::npos);
  expect_consistent_histogram(prom, record, summary);
  expect_declared_families(prom, MetricsFormat::prometheus_text);
}

TEST_F(Render, OpenMetricsHasTheSameSamplesWithItsOwnMetadata) {
  const std::string om = render_metrics(record, summary, MetricsFormat::openmetrics);
  ASSERT_GE(om.size(), 6u);
  EXPECT_EQ(om.substr(om.size() - 6), "# EOF\n");
  EXPECT_EQ(count(om, "# EOF"), 1u);
  EXPECT_NE(om.find("# TYPE bootstorm_run info\n"), std::string::npos);
  EXPECT_NE(om.find("# TYPE bootstorm_api_requests counter\n"), std::string::npos);
  EXPECT_NE(om.find("# UNIT bootstorm_boot_time_seconds seconds\n"), std::string::npos);
  expect_consistent_histogram(om, record, summary);
  expect_declared_families(om, MetricsFormat::openmetrics);
  // The samples themselves are the same lines in both.
  const auto samples = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') out.push_back(line);
    return out;
  };
  EXPECT_EQ(samples(om), samples(render_metrics_prom(record, summary)));
}

TEST_F(Render, MetricsCountStartsFailuresAndMilestones) {
  const std::string prom = render_metrics_prom(record, summary);
  std::size_t started = 0, failed = 0;
  for (const auto& vm : record.vms) {
    if (vm.scenario != summary.scenarios[0].name) continue;
    if (vm.milestones.count(api::Milestone::start_requested)) ++started;
    if (vm.status == "failed") ++failed;
  }
  const std::string scenario = "scenario=\"" + summary.scenarios[0].name + "\",repeat=\"1\"";
  EXPECT_NE(prom.find("bootstorm_starts_sent_total{run_id=\"3f9a2c\",plan=\"" + record.plan_name + "\"," +
                      scenario + "} " + std::to_string(started) + "\n"),
            std::string::npos)
      << prom;
  ASSERT_GT(failed, 0u);
  // The fixture's journal predates the failure kinds: its failures count as "other".
  EXPECT_NE(prom.find(scenario + ",reason=\"other\"} " + std::to_string(failed) + "\n"), std::string::npos)
      << prom;
  EXPECT_NE(
      prom.find(scenario + ",milestone=\"ready\"} " + std::to_string(summary.scenarios[0].ready().count)),
      std::string::npos);
}

TEST_F(Render, KubeBurnerDocuments) {
  const auto docs = quantile_documents(record, summary);
  std::size_t expected = 0;
  for (const auto& sc : summary.scenarios) expected += sc.milestones.size();
  ASSERT_EQ(docs.size(), expected);
  const auto& ready = docs[0];
  EXPECT_EQ(ready["quantileName"], "Ready");
  EXPECT_EQ(ready["metricName"], "vmiLatencyQuantilesMeasurement");
  EXPECT_EQ(ready["jobName"], "4x R740 16GFC");
  EXPECT_EQ(ready["uuid"], "3f9a2c");
  EXPECT_EQ(ready["P50"].get<long long>(), std::llround(*summary.scenarios[0].ready().p50 * 1000));
  EXPECT_EQ(ready["avg"].get<long long>(), std::llround(*summary.scenarios[0].ready().mean * 1000));
  for (const char* k : {"P99", "P95", "min", "max", "timestamp"}) EXPECT_TRUE(ready.contains(k)) << k;
  const auto vms = vm_documents(record, summary);
  ASSERT_EQ(vms.size(), record.vms.size());
  EXPECT_EQ(vms[0]["metricName"], "vmiLatencyMeasurement");
  EXPECT_TRUE(vms[0].contains("guestAgentLatency"));
  EXPECT_TRUE(vms[5]["readyLatency"].is_null());  // the failed VM
}

TEST_F(Render, BulkBodyPairsActionsAndDocuments) {
  const auto docs = quantile_documents(record, summary);
  const std::string body = to_bulk_ndjson("bootstorm", docs);
  ASSERT_FALSE(body.empty());
  EXPECT_EQ(body.back(), '\n');
  std::istringstream in(body);
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (n % 2 == 0) {
      EXPECT_EQ(j["index"]["_index"], "bootstorm");
    } else {
      EXPECT_EQ(j, nlohmann::json::parse(docs[n / 2].dump()));
    }
    ++n;
  }
  EXPECT_EQ(n, docs.size() * 2);
}

TEST_F(Render, WriteRunOutputsWritesEveryFile) {
  // A directory that does not exist yet: write_run_outputs creates it.
  const test_support::ScratchDir scratch("reports");
  const auto dir = scratch / "run";
  auto r = write_run_outputs(dir, record, summary, kGeneratedAt);
  ASSERT_TRUE(r.has_value()) << r.error().what();
  for (const char* f : {"summary.json", "vms.csv", "report.md", "report.html", "junit.xml", "metrics.prom",
                        "quantiles.json", "vm-latency.json"}) {
    EXPECT_TRUE(std::filesystem::is_regular_file(dir / f)) << f;
    EXPECT_GT(std::filesystem::file_size(dir / f), 0u) << f;
    EXPECT_FALSE(std::filesystem::exists(dir / (std::string(f) + ".tmp"))) << f;
  }
  std::ifstream in(dir / "summary.json");
  std::ostringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), render_summary_json(summary));
}

TEST_F(Render, WriteRunOutputsReportsUnwritableDirectory) {
  auto r = write_run_outputs("/proc/bootstorm-cannot-write-here", record, summary, kGeneratedAt);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ErrorKind::io);
}

TEST(RenderLarge, HundredsOfVmsStayReadable) {
  // 600 VMs per scenario: the timeline is thinned to at most 240 rows (every 3rd VM) and says so; the page
  // stays well formed.
  results::RunRecord r = fixture_record();
  const auto base = r.vms;
  r.vms.clear();
  for (auto& sc : r.scenarios) sc.vms = 600;
  for (int k = 0; k < 75; ++k) {
    for (auto vm : base) {
      vm.name += "-" + std::to_string(k);
      vm.start_requested_unix_s += 0.00001 * k;
      if (vm.ready_s) *vm.ready_s += 0.01 * k;
      r.vms.push_back(vm);
    }
  }
  const auto summary = results::summarize(r);
  ASSERT_EQ(summary.scenarios[0].vms, 600);
  const std::string html = render_report_html(r, summary, kGeneratedAt);
  EXPECT_EQ(tag_balance_problem(html), "");
  EXPECT_NE(html.find("200 of 600 VMs shown."), std::string::npos);
  // 200 rows per timeline: one <g><title> per row, in two timelines.
  EXPECT_EQ(count(html, "<g><title>"), 400u);
  EXPECT_LT(html.size(), 2'000'000u);
}

}  // namespace
}  // namespace bootstorm::reports
