// Storage telemetry through the real CLI against `bootstorm lab serve`: a KubeVirt run reads the lab's
// Prometheus through its thanos-querier Route, its figures agree with the lab's truth, every sample lands in
// the journal and telemetry.csv, `bootstorm report` re-renders them; a monitoring stack that fails or refuses
// is a warning with its cause and leaves the storm's results alone; vCenter's REST API says it has none.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/lab_fixture.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/run_files.hpp"
#include "tests/support/tools.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::LabCliTest;
using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;
using bootstorm::test_support::write_file;
using nlohmann::json;

class TelemetryE2E : public LabCliTest {
 protected:
  TelemetryE2E() : LabCliTest("telemetry-e2e") {}

  fs::path kubevirt_plan(const std::string& name, const fs::path& out) {
    const fs::path plan = dir_ / (name + ".yaml");
    PlanYaml{.name = name,
             .platform = {.kind = "kubevirt", .endpoint = "lab:" + state_.string()},
             .golden = "{dataSource: {name: fedora-golden, namespace: golden}}",
             .ns = "bootstorm-" + name,
             .scenarios = {{"one node", {{"worker-0", 6}}},
                           {"three nodes", {{"worker-0", 2}, {"worker-1", 2}, {"worker-2", 2}}}},
             .storm = "{mode: simultaneous, timeout: 2m, settle: 0s}",
             .ready = "{signal: guest_agent}",
             .cleanup = "never",
             .output = out.string()}
        .write(plan);
    return plan;
  }

  static std::vector<json> journal_events(const fs::path& run_dir, const std::string& type) {
    std::vector<json> out;
    std::istringstream lines(read_file(run_dir / "journal.jsonl"));
    for (std::string line; std::getline(lines, line);) {
      json e = json::parse(line, nullptr, false);
      if (!e.is_discarded() && e.value("type", "") == type) out.push_back(std::move(e));
    }
    return out;
  }
};

TEST_F(TelemetryE2E, AKubevirtRunReadsPrometheusThroughTheRouteAndItsTotalsAreTheLabsTruth) {
  ASSERT_NO_FATAL_FAILURE(start_lab("small"));
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it reads the lab's Route and ground truth");
  // The Route an OpenShift user would look for.
  const json route = kube_json(
      {"get", "routes.route.openshift.io", "thanos-querier", "-n", "openshift-monitoring", "-o", "json"});
  EXPECT_EQ("https://" + route["spec"]["host"].get<std::string>(),
            endpoints_["prometheus"].get<std::string>());

  const fs::path out = dir_ / "out";
  auto r = bootstorm({"run", kubevirt_plan("storage", out).string(), "--yes", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("storage (prometheus, 1 s samples)"), std::string::npos) << r.err;
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty());

  const auto events = journal_events(run_dir, "telemetry");
  ASSERT_EQ(events.size(), 2u);
  const json truth = lab_get("/_lab/truth");
  const json summary = json::parse(read_file(run_dir / "summary.json"));
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& report = events[i]["report"];
    ASSERT_TRUE(report.is_object()) << events[i].dump();
    EXPECT_EQ(report["source"], "prometheus");
    EXPECT_EQ(report["endpoint"], endpoints_["prometheus"]);
    EXPECT_DOUBLE_EQ(report["resolutionS"].get<double>(), 1.0);
    const double to = report["to"].get<double>();
    // The truth: every VM of this scenario's bytes at the last scrape of the window.
    std::set<std::string> names;
    for (const auto& t : report["totals"])
      if (t["kind"] == "vm") names.insert(t["subject"].get<std::string>());
    ASSERT_EQ(names.size(), 6u) << report.dump();
    double truth_bytes = 0;
    for (const auto& vm : truth["storage"]["vms"]) {
      if (!names.count(vm["name"].get<std::string>())) continue;
      json last = nullptr;
      for (const auto& sample : vm["samples"])
        if (sample[0].get<double>() <= std::floor(to) + 1e-6) last = sample;
      ASSERT_FALSE(last.is_null()) << vm.dump();
      truth_bytes += std::floor(last[1].get<double>()) + std::floor(last[2].get<double>());
    }
    const json& figures = summary["scenarios"][i]["telemetry"];
    ASSERT_TRUE(figures.is_object()) << summary["scenarios"][i].dump();
    EXPECT_NEAR(figures["MB"].get<double>() * 1e6, truth_bytes, 1e3) << figures.dump();
    EXPECT_GT(figures["peakMBps"].get<double>(), 0);
    EXPECT_GT(figures["peakIopsPerDesktop"].get<double>(), 0);
    EXPECT_EQ(figures["desktops"], 6);
    EXPECT_EQ(figures["series"], "hosts");
  }
  // Three nodes in the second storm, one in the first.
  EXPECT_EQ(summary["scenarios"][0]["telemetry"]["hosts"].size(), 1u);
  EXPECT_EQ(summary["scenarios"][1]["telemetry"]["hosts"].size(), 3u);

  const std::string csv = read_file(run_dir / "telemetry.csv");
  EXPECT_EQ(csv.rfind("scenario,repeat,source,kind,subject,from_unix_s", 0), 0u) << csv.substr(0, 200);
  EXPECT_NE(csv.find(",prometheus,vm,"), std::string::npos);
  EXPECT_NE(csv.find(",prometheus,host,worker-1,"), std::string::npos);
  std::string md = read_file(run_dir / "report.md");
  EXPECT_NE(md.find("Storage (simulated lab, prometheus, 1 s samples"), std::string::npos) << md;
  const std::string html = read_file(run_dir / "report.html");
  EXPECT_NE(html.find("<h2>Storage during the storm</h2>"), std::string::npos);
  EXPECT_NE(html.find("id=\"storage-0-mbps\""), std::string::npos);

  // The run directory alone re-renders it all.
  fs::remove(run_dir / "report.md");
  fs::remove(run_dir / "telemetry.csv");
  auto again = bootstorm({"report", run_dir.string()});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(read_file(run_dir / "report.md").find("Storage (simulated lab, prometheus"), std::string::npos);
  EXPECT_EQ(read_file(run_dir / "telemetry.csv"), csv);
}

TEST_F(TelemetryE2E, APrometheusThatFailsOrRefusesIsAWarningWithItsCauseAndTheStormStands) {
  ASSERT_NO_FATAL_FAILURE(start_lab("small"));
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it sets the lab's faults");
  for (int status : {503, 403}) {
    set_faults({{"errorRate", 1}, {"errorStatus", status}, {"paths", {"/api/v1/query"}}});
    const fs::path out = dir_ / ("out-" + std::to_string(status));
    auto r = bootstorm({"run", kubevirt_plan("refused" + std::to_string(status), out).string(), "--yes",
                        "--out", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const fs::path run_dir = run_dir_in(out);
    ASSERT_FALSE(run_dir.empty());
    const json summary = json::parse(read_file(run_dir / "summary.json"));
    for (const auto& sc : summary["scenarios"]) {
      EXPECT_EQ(sc["milestones"]["ready"]["count"], 6) << sc.dump();
      const std::string why = sc["telemetry"].value("unavailable", "");
      EXPECT_NE(why.find(status == 503 ? "HTTP 503" : "cluster-monitoring-view"), std::string::npos) << why;
    }
    EXPECT_NE(r.err.find("the storm's results stand"), std::string::npos) << r.err;
    const std::string md = read_file(run_dir / "report.md");
    EXPECT_NE(md.find("Storage telemetry: none ("), std::string::npos) << md;
    EXPECT_FALSE(fs::exists(run_dir / "telemetry.csv"));
  }
}

TEST_F(TelemetryE2E, Vim25ReadsVcentersPerformanceManagerAndItsDatastoreFiguresAreTheLabsTruth) {
  ASSERT_NO_FATAL_FAILURE(start_lab("small"));
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it reads the lab's ground truth");
  const fs::path out = dir_ / "out";
  const fs::path plan = dir_ / "vim25.yaml";
  PlanYaml{.name = "perf",
           .platform = {.kind = "vsphere", .endpoint = "lab:" + state_.string(), .extra = {"api: vim25"}},
           .golden = "{vm: tiny-golden, clone: linked}",
           .scenarios = {{"two hosts", {{"host-01", 3}, {"host-02", 3}}}},
           .storm = "{mode: simultaneous, timeout: 2m, settle: 0s}",
           .ready = "{signal: guest_agent}",
           .cleanup = "never",
           .output = out.string()}
      .write(plan);
  auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path run_dir = run_dir_in(out);
  const auto events = journal_events(run_dir, "telemetry");
  ASSERT_EQ(events.size(), 1u);
  const json& report = events[0]["report"];
  ASSERT_TRUE(report.is_object()) << events[0].dump();
  EXPECT_EQ(report["source"], "vsphere-perf");
  EXPECT_DOUBLE_EQ(report["resolutionS"].get<double>(), 1.0);  // the small lab's vCenter interval
  // The lab's Fibre Channel HBAs: 16GFC-class links carry their speed x 100 MB/s.
  EXPECT_GT(report["linkCapacityBps"]["host-01"].get<double>(), 0) << report["linkCapacityBps"].dump();
  // The truth: each host's bytes to the datastore over the intervals the report has samples of.
  const json truth = lab_get("/_lab/truth");
  double reported = 0, expected = 0;
  std::map<std::string, std::pair<double, double>> span;  // subject -> first start, last end
  for (const auto& sample : report["samples"]) {
    if (sample["kind"] != "datastore") continue;
    const double from = sample["from"].get<double>(), to = sample["to"].get<double>();
    reported += (sample["readBps"].get<double>() + sample["writeBps"].get<double>()) * (to - from);
    auto [it, inserted] = span.emplace(sample["subject"].get<std::string>(), std::make_pair(from, to));
    if (!inserted) {
      it->second.first = std::min(it->second.first, from);
      it->second.second = std::max(it->second.second, to);
    }
  }
  ASSERT_FALSE(span.empty()) << report.dump();
  auto at = [](const json& samples, double t) {
    double value = 0;
    for (const auto& s : samples)
      if (s[0].get<double>() <= t + 1e-6) value = s[1].get<double>() + s[2].get<double>();
    return value;
  };
  for (const auto& host : truth["storage"]["hosts"]) {
    for (const auto& [ds, samples] : host["datastores"].items()) {
      auto it = span.find(host["name"].get<std::string>() + "/" + ds);
      if (it == span.end()) continue;
      expected += at(samples, it->second.second) - at(samples, it->second.first);
    }
  }
  EXPECT_GT(expected, 0);
  EXPECT_NEAR(reported, expected, 0.01 * expected) << "KBps rounded to whole numbers per sample";
  const json summary = json::parse(read_file(run_dir / "summary.json"));
  const json& figures = summary["scenarios"][0]["telemetry"];
  EXPECT_EQ(figures["series"], "datastore");
  EXPECT_EQ(figures["hosts"].size(), 2u);
  EXPECT_TRUE(figures["hosts"][0].contains("peakLinkUtilisation")) << figures.dump();
}

// Tolly 2024's consolidation study on the lab as a user runs it (plans/consolidation-4x16g-vs-1x64g.yaml):
// the report's storage figures of both layouts — each host link's peak against its capacity, the datastore's
// peak MB/s and the IOPS per desktop — within 5 % of the lab's truth integrated over the same 20 s intervals.
TEST_F(TelemetryE2E, TheConsolidationStudysStorageFiguresAreTheLabsTruthWithinFivePercent) {
  ASSERT_NO_FATAL_FAILURE(start_lab("tolly-2024"));
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it reads the lab's ground truth");
  std::string plan_text =
      read_file(fs::path(BOOTSTORM_SOURCE_DIR) / "plans/consolidation-4x16g-vs-1x64g.yaml");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"endpoint: embedded", "endpoint: \"lab:" + state_.string() + "\""},
           {"lab: tolly-2024 ", "# lab: tolly-2024 "},
           {"output: runs ", "output: " + (dir_ / "out").string() + " "}}) {
    const auto at = plan_text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    plan_text.replace(at, from.size(), to);
  }
  const fs::path plan = dir_ / "consolidation.yaml";
  write_file(plan, plan_text);
  const fs::path out = dir_ / "out";
  auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()}, std::chrono::seconds(600));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path run_dir = run_dir_in(out);
  const auto events = journal_events(run_dir, "telemetry");
  ASSERT_EQ(events.size(), 2u);
  const json truth = lab_get("/_lab/truth");
  std::map<std::string, json> truth_hosts;
  for (const auto& host : truth["storage"]["hosts"]) truth_hosts[host["name"].get<std::string>()] = host;
  // Bytes (read + write) and I/Os of a truth series between two instants.
  auto moved = [](const json& samples, double from, double to, bool ios) {
    auto at = [&](double t) {
      double v = 0;
      for (const auto& s : samples)
        if (s[0].get<double>() <= t + 1e-6)
          v = ios ? s[3].get<double>() + s[4].get<double>() : s[1].get<double>() + s[2].get<double>();
      return v;
    };
    return at(to) - at(from);
  };
  const json summary = json::parse(read_file(run_dir / "summary.json"));
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& report = events[i]["report"];
    ASSERT_TRUE(report.is_object()) << events[i].dump();
    SCOPED_TRACE(events[i]["scenario"].get<std::string>());
    EXPECT_EQ(report["source"], "vsphere-perf");
    EXPECT_DOUBLE_EQ(report["resolutionS"].get<double>(), 20);
    // Per host link: the busiest sample against the truth over the same interval, and the capacity.
    std::map<std::string, double> link_peak, link_truth_peak;
    std::map<std::pair<double, double>, std::pair<double, double>>
        ds_interval;  // (from,to) -> (bytes/s, IOPS)
    std::map<std::pair<double, double>, std::pair<double, double>> ds_truth;
    for (const auto& s : report["samples"]) {
      const double from = s["from"].get<double>(), to = s["to"].get<double>();
      const std::string subject = s["subject"];
      const double bps = s["readBps"].get<double>() + s["writeBps"].get<double>();
      const double iops = s["readIops"].get<double>() + s["writeIops"].get<double>();
      if (s["kind"] == "host") {
        link_peak[subject] = std::max(link_peak[subject], bps);
        link_truth_peak[subject] = std::max(
            link_truth_peak[subject], moved(truth_hosts.at(subject)["link"], from, to, false) / (to - from));
      } else if (s["kind"] == "datastore") {
        const std::string host = subject.substr(0, subject.find('/'));
        const std::string ds = subject.substr(subject.find('/') + 1);
        auto& got = ds_interval[{from, to}];
        got.first += bps;
        got.second += iops;
        const json& samples = truth_hosts.at(host)["datastores"][ds];
        auto& want = ds_truth[{from, to}];
        want.first += moved(samples, from, to, false) / (to - from);
        want.second += moved(samples, from, to, true) / (to - from);
      }
    }
    ASSERT_FALSE(link_peak.empty());
    const json& figures = summary["scenarios"][i]["telemetry"];
    for (const auto& [host, peak] : link_peak) {
      EXPECT_NEAR(peak, link_truth_peak[host], 0.05 * link_truth_peak[host]) << host;
      const double capacity = truth_hosts.at(host)["linkMBps"].get<double>() * 1e6;
      EXPECT_NEAR(report["linkCapacityBps"][host].get<double>(), capacity, 0.05 * capacity) << host;
      bool found = false;
      for (const auto& h : figures["hosts"]) {
        if (h["host"] != host) continue;
        found = true;
        EXPECT_NEAR(h["peakLinkUtilisation"].get<double>(), link_truth_peak[host] / capacity,
                    0.05 * link_truth_peak[host] / capacity)
            << host;
      }
      EXPECT_TRUE(found) << host << " not in " << figures.dump();
    }
    double peak = 0, truth_peak = 0, peak_iops = 0, truth_peak_iops = 0;
    for (const auto& [interval, got] : ds_interval) {
      peak = std::max(peak, got.first);
      peak_iops = std::max(peak_iops, got.second);
      truth_peak = std::max(truth_peak, ds_truth[interval].first);
      truth_peak_iops = std::max(truth_peak_iops, ds_truth[interval].second);
    }
    EXPECT_GT(truth_peak, 0);
    EXPECT_NEAR(peak, truth_peak, 0.05 * truth_peak);
    EXPECT_NEAR(figures["peakMBps"].get<double>() * 1e6, truth_peak, 0.05 * truth_peak) << figures.dump();
    EXPECT_NEAR(figures["peakIopsPerDesktop"].get<double>(), truth_peak_iops / 24,
                0.05 * truth_peak_iops / 24);
    EXPECT_EQ(figures["series"], "datastore");
  }
  const std::string md = read_file(run_dir / "report.md");
  EXPECT_NE(md.find("Peak per host link: r740-01"), std::string::npos) << md;
  EXPECT_NE(md.find("Peak per host link: r7625-01"), std::string::npos) << md;
}

// The example plan on tolly-2024's OpenShift nodes (plans/openshift-density-storage.yaml), as a user runs it:
// 24 desktops on one node against 8 on each of three; every VMI's storage from the Prometheus query API found
// through the Route, each VMI's bytes and I/Os the lab's truth at the window's last scrape.
TEST_F(TelemetryE2E, TheOpenshiftDensityPlansPerVmiStorageIsTheLabsTruth) {
  // Ceph RBD with a VolumeSnapshotClass: CDI clones by snapshot, so that 48 desktops provision in seconds
  // rather than copying 24 GB each (the storms and their storage are the same).
  ASSERT_NO_FATAL_FAILURE(restart_lab_with(
      "tolly-2024", "  storageClass: ocs-storagecluster-ceph-rbd-virtualization\n",
      "  storageClass: ocs-storagecluster-ceph-rbd-virtualization\n"
      "  cloneStrategy: snapshot\n  snapshotClass: ocs-storagecluster-rbdplugin-snapclass\n"));
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it reads the lab's ground truth");
  std::string plan_text = read_file(fs::path(BOOTSTORM_SOURCE_DIR) / "plans/openshift-density-storage.yaml");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"endpoint: embedded", "endpoint: \"lab:" + state_.string() + "\""},
           {"lab: tolly-2024\n", "\n"},
           {"output: runs", "output: " + (dir_ / "out").string()}}) {
    const auto at = plan_text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    plan_text.replace(at, from.size(), to);
  }
  const fs::path plan = dir_ / "density.yaml";
  write_file(plan, plan_text);
  const fs::path out = dir_ / "out";
  auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()}, std::chrono::seconds(900));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path run_dir = run_dir_in(out);
  const auto events = journal_events(run_dir, "telemetry");
  ASSERT_EQ(events.size(), 2u);
  const json truth = lab_get("/_lab/truth");
  std::map<std::string, json> truth_vms;
  for (const auto& vm : truth["storage"]["vms"]) truth_vms[vm["name"].get<std::string>()] = vm;
  const json summary = json::parse(read_file(run_dir / "summary.json"));
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& report = events[i]["report"];
    ASSERT_TRUE(report.is_object()) << events[i].dump();
    SCOPED_TRACE(events[i]["scenario"].get<std::string>());
    EXPECT_EQ(report["source"], "prometheus");
    EXPECT_DOUBLE_EQ(report["resolutionS"].get<double>(), 2.0);  // tolly-2024's scrape interval
    const double last_scrape = std::floor(report["to"].get<double>() / 2) * 2;
    int vms = 0;
    std::set<std::string> nodes;
    for (const auto& t : report["totals"]) {
      if (t["kind"] == "host") nodes.insert(t["subject"].get<std::string>());
      if (t["kind"] != "vm") continue;
      ++vms;
      const json& series = truth_vms.at(t["subject"].get<std::string>());
      json last = nullptr;
      for (const auto& sample : series["samples"])
        if (sample[0].get<double>() <= last_scrape + 1e-6) last = sample;
      ASSERT_FALSE(last.is_null());
      EXPECT_DOUBLE_EQ(t["readBytes"].get<double>(), std::floor(last[1].get<double>())) << t.dump();
      EXPECT_DOUBLE_EQ(t["readIos"].get<double>(), std::floor(last[3].get<double>())) << t.dump();
    }
    EXPECT_EQ(vms, 24);
    EXPECT_EQ(nodes.size(), i == 0 ? 1u : 3u);
    const json& figures = summary["scenarios"][i]["telemetry"];
    EXPECT_GT(figures["peakMBps"].get<double>(), 0) << figures.dump();
    EXPECT_GT(figures["readLatencyP95Ms"].get<double>(), 0) << figures.dump();
  }
}

TEST_F(TelemetryE2E, VcentersRestApiHasNoStatisticsAndTheReportSaysSo) {
  ASSERT_NO_FATAL_FAILURE(start_lab("small"));
  const fs::path out = dir_ / "out";
  const fs::path plan = dir_ / "rest.yaml";
  PlanYaml{.name = "rest",
           .platform = {.kind = "vsphere", .endpoint = "lab:" + state_.string(), .extra = {"api: rest"}},
           .golden = "{vm: tiny-golden, clone: full}",
           .scenarios = {{"two", {{"host-01", 2}}}},
           .storm = "{mode: simultaneous, timeout: 2m, settle: 0s}",
           .ready = "{signal: guest_agent}",
           .cleanup = "always",
           .output = out.string()}
      .write(plan);
  auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path run_dir = run_dir_in(out);
  const json summary = json::parse(read_file(run_dir / "summary.json"));
  EXPECT_NE(summary["scenarios"][0]["telemetry"]
                .value("unavailable", "")
                .find("REST API has no storage statistics"),
            std::string::npos)
      << summary["scenarios"][0].dump();
  EXPECT_NE(read_file(run_dir / "report.md").find("Storage telemetry: none (vCenter's REST API"),
            std::string::npos);
}

}  // namespace
