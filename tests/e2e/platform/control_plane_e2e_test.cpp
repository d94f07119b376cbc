// Where the time went, against a throttled control plane (issue 22): the lab's virt-controller paces its
// launches by the KubeVirt CR's rate limiter; `check` predicts the pacing as a warning; the run is reported
// "delayed by the control plane" with the phase breakdown, and each VM's control-plane phase agrees with the
// lab's truth (its scheduled time minus its start received) within the milestones' resolution. A control
// plane that refuses (429 from API Priority and Fairness, with Retry-After) is counted from its answers, and
// a vCenter that queues its tasks from theirs.
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
#include "tests/support/plan_yaml.hpp"
#include "tests/support/run_files.hpp"
#include "tests/support/tools.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::LabCliTest;
using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;
using nlohmann::json;

std::string fmt_throttled(std::uint64_t throttled, std::uint64_t answers) {
  return "API answers: " + std::to_string(throttled) + " of " + std::to_string(answers) + " throttled (429)";
}

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
  PlanYaml{.name = "throttled",
           .platform = {.kind = "kubevirt", .endpoint = "lab:" + state_.string()},
           .golden = "{dataSource: {name: fedora-golden, namespace: golden}}",
           .ns = "bootstorm-throttled",
           .scenarios = {{"twelve", {{"worker-0", 12}}}},
           .storm = "{mode: simultaneous, timeout: 2m, settle: 0s}",
           .ready = "{signal: guest_agent}",
           .cleanup = "never",
           .output = out.string()}
      .write(plan);

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

TEST_F(ControlPlaneE2E, ThrottledStartsAreCountedFromTheAnswersWithTheirPriorityLevel) {
  ASSERT_NO_FATAL_FAILURE(start_lab("small"));
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it sets the lab's faults and reads its APF objects");
  // Every fourth start call is refused as API Priority and Fairness refuses: 429 with Retry-After: 1. Only
  // the run's start subresources are hit (not KubeVirt's version, read before the scenario), so every
  // refusal falls inside the scenario the summary accounts for.
  set_faults({{"errorRate", 0.25},
              {"errorStatus", 429},
              {"paths", {"/apis/subresources.kubevirt.io/v1/namespaces/bootstorm-refused/"}}});
  const fs::path out = dir_ / "out";
  const fs::path plan = dir_ / "refused.yaml";
  PlanYaml{.name = "refused",
           .platform = {.kind = "kubevirt", .endpoint = "lab:" + state_.string()},
           .golden = "{dataSource: {name: fedora-golden, namespace: golden}}",
           .ns = "bootstorm-refused",
           .scenarios = {{"eight", {{"worker-0", 8}}}},
           .storm = "{mode: simultaneous, timeout: 2m, settle: 0s}",
           .ready = "{signal: guest_agent}",
           // Cleanup's stop calls would be refused too, after the scenario's account was written.
           .cleanup = "never",
           .output = out.string()}
      .write(plan);
  auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;  // a refused start is sent again after the second asked for
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty());

  const json stats = lab_get("/_lab/stats");
  const std::uint64_t refused = stats.value("injectedErrors", 0u);
  ASSERT_GT(refused, 0u) << "the fault never hit: " << stats.dump();
  const json summary = json::parse(read_file(run_dir / "summary.json"));
  const json& answers = summary["scenarios"][0]["apiAnswers"];
  ASSERT_TRUE(answers.is_object()) << summary["scenarios"][0].dump();
  EXPECT_EQ(answers["throttled"].get<std::uint64_t>(), refused) << answers.dump();
  EXPECT_EQ(answers["retryAfterAnswers"].get<std::uint64_t>(), refused) << answers.dump();
  EXPECT_DOUBLE_EQ(answers["retryAfterS"].get<double>(), static_cast<double>(refused));
  EXPECT_EQ(answers["serverErrors"].get<std::uint64_t>(), 0u) << answers.dump();

  // The priority level the answers named is the lab's global-default, by its UID.
  const json level = kube_json({"get", "prioritylevelconfigurations", "global-default", "-o", "json"});
  const std::string uid = level["metadata"]["uid"];
  ASSERT_TRUE(answers.contains("priorityLevels")) << answers.dump();
  EXPECT_TRUE(answers["priorityLevels"].contains(uid)) << uid << " " << answers.dump();
  const json schema = kube_json({"get", "flowschemas", "global-default", "-o", "json"});
  EXPECT_TRUE(answers["flowSchemas"].contains(schema["metadata"]["uid"].get<std::string>()))
      << answers.dump();

  const std::string report = read_file(run_dir / "report.md");
  EXPECT_NE(report.find(fmt_throttled(refused, answers["answers"].get<std::uint64_t>())), std::string::npos)
      << report;
  EXPECT_NE(report.find("API Priority and Fairness: priority level " + uid), std::string::npos) << report;
}

TEST_F(ControlPlaneE2E, VcenterTasksThatWaitedInItsQueueAreCounted) {
  // A vCenter that runs one operation at a time: the provider's two clones per host wait for each other in
  // vCenter's queue, where the task watcher sees them "queued".
  ASSERT_NO_FATAL_FAILURE(restart_lab_with("small", "sessionIdleTimeoutS: 1800",
                                           "sessionIdleTimeoutS: 1800\n  maxConcurrentOperations: 1"));
  const fs::path out = dir_ / "out";
  const fs::path plan = dir_ / "queued.yaml";
  PlanYaml{.name = "queued",
           .platform = {.kind = "vsphere", .endpoint = "lab:" + state_.string(), .extra = {"api: vim25"}},
           .golden = "{vm: tiny-golden, clone: linked}",
           .scenarios = {{"six", {{"host-01", 6}}}},
           .storm = "{mode: simultaneous, timeout: 2m, settle: 0s}",
           .ready = "{signal: guest_agent}",
           .cleanup = "always",
           .output = out.string()}
      .write(plan);
  auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty());
  const json summary = json::parse(read_file(run_dir / "summary.json"));
  const json& answers = summary["scenarios"][0]["apiAnswers"];
  ASSERT_TRUE(answers.contains("tasks")) << answers.dump();
  // Six clones and the batched power-on, at least; some of them waited.
  EXPECT_GE(answers["tasks"].get<std::uint64_t>(), 7u) << answers.dump();
  EXPECT_GE(answers["tasksQueued"].get<std::uint64_t>(), 1u) << answers.dump();
  EXPECT_LE(answers["tasksQueued"].get<std::uint64_t>(), answers["tasks"].get<std::uint64_t>());
  EXPECT_GT(answers["taskQueueS"].get<double>(), 0.0) << answers.dump();
  const std::string report = read_file(run_dir / "report.md");
  EXPECT_NE(report.find("vCenter tasks: " + std::to_string(answers["tasks"].get<std::uint64_t>()) +
                        " followed, " + std::to_string(answers["tasksQueued"].get<std::uint64_t>()) +
                        " waited in vCenter's queue ("),
            std::string::npos)
      << report;
}

}  // namespace
