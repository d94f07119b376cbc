// Where the time went, against a throttled control plane (issue 22): the lab's virt-controller paces its
// launches by the KubeVirt CR's rate limiter; `check` predicts the pacing as a warning; the run is reported
// "delayed by the control plane" with the phase breakdown, and each VM's control-plane phase agrees with the
// lab's truth (its scheduled time minus its start received) within the milestones' resolution.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/lab_fixture.hpp"
#include "tests/support/run_files.hpp"
#include "tests/support/tools.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::LabCliTest;
using bootstorm::test_support::read_file;
using bootstorm::test_support::write_file;
using nlohmann::json;

class ControlPlaneE2E : public LabCliTest {
 protected:
  ControlPlaneE2E() : LabCliTest("control-plane-e2e") {}
};

TEST_F(ControlPlaneE2E, AThrottledVirtControllerIsReportedAsDelayByTheControlPlaneAndAgreesWithTheTruth) {
  // 12 launches of ~19 writes at 40 QPS after a burst of 19: the k-th launch waits 19 k / 40 s, the last
  // 5.2 s, while the small lab's boots take milliseconds.
  ASSERT_NO_FATAL_FAILURE(restart_lab_with("small", "virtController: {qps: 1000000, burst: 1000000}",
                                           "virtController: {qps: 40, burst: 19}"));
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it reads the lab's ground truth");
  const fs::path out = dir_ / "out";
  const fs::path plan = dir_ / "throttled.yaml";
  write_file(plan,
             "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: throttled\n"
             "platform: {kind: kubevirt, endpoint: \"lab:" +
                 state_.string() +
                 "\"}\n"
                 "golden: {dataSource: {name: fedora-golden, namespace: golden}}\n"
                 "namespace: bootstorm-throttled\n"
                 "scenarios:\n  - name: twelve\n    placement: [{host: worker-0, vms: 12}]\n"
                 "storm: {mode: simultaneous, timeout: 2m, settle: 0s}\n"
                 "ready: {signal: guest_agent}\ncleanup: never\noutput: " +
                 out.string() + "\n");

  // `check` predicts the pacing: a warning, not a failure.
  auto check = bootstorm({"check", plan.string()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("predicted paced over 5 s"), std::string::npos) << check.out;

  auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Delayed by the control plane: in \u201ctwelve\u201d"), std::string::npos) << r.out;
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty());

  const json summary = json::parse(read_file(run_dir / "summary.json"));
  const json& sc = summary["scenarios"][0];
  ASSERT_TRUE(sc.contains("phases")) << sc.dump();
  for (const char* phase : {"api", "controlPlane", "launch", "guest"})
    EXPECT_TRUE(sc["phases"].contains(phase)) << phase << " " << sc["phases"].dump();
  EXPECT_TRUE(sc["controlPlane"]["delayed"].get<bool>()) << sc["controlPlane"].dump();
  EXPECT_EQ(sc["controlPlane"]["largestOtherPhase"], "guest") << sc["controlPlane"].dump();
  const std::string report = read_file(run_dir / "report.md");
  EXPECT_NE(report.find("> **Delayed by the control plane"), std::string::npos) << report;
  EXPECT_NE(report.find("| control plane | start\\_acknowledged"), std::string::npos) << report;
  const std::string html = read_file(run_dir / "report.html");
  EXPECT_NE(html.find("id=\"phases\""), std::string::npos);
  EXPECT_NE(html.find("<div class=\"banner\" role=\"note\">Delayed by the control plane"), std::string::npos);

  // Each VM's control-plane phase (scheduled - start_acknowledged, from the journal) against the truth
  // (scheduled - startReceived). The two differ by the scheduled observation's lateness (within its stated
  // resolution, plus the lab's publication lag, which the truth states) and by the start answer's transit
  // (within the start call's round trip).
  std::map<std::string, std::map<std::string, json>> observed;
  {
    std::istringstream journal(read_file(run_dir / "journal.jsonl"));
    for (std::string line; std::getline(journal, line);) {
      json event = json::parse(line, nullptr, false);
      if (event.is_object() && event.value("type", "") == "milestone")
        observed[event.value("vm", "")][event.value("milestone", "")] = event;
    }
  }
  const json truth = lab_get("/_lab/truth");
  constexpr double kClockReads = 0.002;
  std::vector<double> waits;
  std::size_t compared = 0;
  for (const auto& vm : truth["vms"]) {
    const std::string name = vm["name"];
    if (!observed.count(name)) continue;
    auto& seen = observed[name];
    ASSERT_TRUE(seen.count("start_requested") && seen.count("start_acknowledged") && seen.count("scheduled"))
        << name;
    const double written = seen["start_requested"]["wall"];
    const double acknowledged = seen["start_acknowledged"]["wall"];
    const double scheduled = seen["scheduled"]["wall"];
    const double resolution = seen["scheduled"]["resolutionS"];
    const double received = vm["startReceived"];
    const double true_scheduled = vm["milestones"]["scheduled"];
    const double delivered = vm["delivered"]["scheduled"];
    const double measured = scheduled - acknowledged;
    const double true_phase = true_scheduled - received;
    waits.push_back(true_phase);
    EXPECT_LE(measured - true_phase, resolution + (delivered - true_scheduled) + kClockReads)
        << name << ": measured " << measured << " s, truth " << true_phase << " s";
    EXPECT_GE(measured - true_phase, -(acknowledged - written) - kClockReads)
        << name << ": measured " << measured << " s, truth " << true_phase << " s";
    ++compared;
  }
  EXPECT_EQ(compared, 12u);
  // The lab really paced: the launches spread over the predicted ~5.2 s (19 k / 40 s for k = 0..11).
  ASSERT_FALSE(waits.empty());
  std::sort(waits.begin(), waits.end());
  EXPECT_GT(waits.back(), 4.5);
  EXPECT_LT(waits.front(), 0.5);
}

}  // namespace
