// When the platform goes away, say so (issue 22): the lab is killed mid-provisioning and mid-storm; the run
// stops within the unreachable window (5 failed connections in a row over at least 10 s) with "the API server
// at ... is gone", exit 1, the journal intact and ending, and nothing deleted; `bootstorm cleanup` is left
// the job for when the server is back.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/lab_fixture.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/run_files.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::Child;
using bootstorm::test_support::LabCliTest;
using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

class PlatformGoneE2E : public LabCliTest {
 protected:
  PlatformGoneE2E() : LabCliTest("platform-gone-e2e") {}

  // Starts a three-VM run on the served lab (KubeVirt, or vSphere on vim25) and kills the lab once the
  // journal holds `event` `times` times. Returns the run's process; `run_dir` is its run directory.
  std::unique_ptr<Child> run_and_kill_lab_at(const std::string& event, std::size_t times, fs::path& run_dir,
                                             const std::string& platform) {
    const fs::path out = dir_ / "out";
    const fs::path plan = dir_ / "plan.yaml";
    const bool kubevirt = platform == "kubevirt";
    PlanYaml p{.name = "gone",
               .scenarios = {{"three", {{kubevirt ? "worker-0" : "host-01", 3}}}},
               .storm = "{mode: simultaneous, timeout: 10m, settle: 0s}",
               .ready = "{signal: guest_agent}",
               .cleanup = "always",
               .output = out.string()};
    if (kubevirt) {
      p.platform = PlanYaml::Platform{.kind = "kubevirt", .endpoint = "lab:" + state_.string()};
      p.golden = "{dataSource: {name: fedora-golden, namespace: golden}}";
      p.ns = "bootstorm-gone";
    } else {
      p.platform = PlanYaml::Platform{
          .kind = "vsphere", .endpoint = "lab:" + state_.string(), .extra = {"api: vim25"}};
      p.golden = "{vm: tiny-golden, clone: linked}";
    }
    p.write(plan);
    auto run = spawn_bootstorm({"run", plan.string(), "--yes", "--out", out.string()});
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline) {
      if (run->wait_for(std::chrono::milliseconds(0)).has_value()) {
        ADD_FAILURE() << "the run ended before the lab was killed: " << run->out() << run->err();
        return run;
      }
      if (run_dir.empty()) run_dir = run_dir_in(out);
      if (!run_dir.empty() && occurrences(read_file(run_dir / "journal.jsonl"), "\"" + event + "\"") >= times)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_FALSE(run_dir.empty());
    ::kill(lab_->child().pid(), SIGKILL);
    lab_->child().wait_for(std::chrono::seconds(10));
    return run;
  }

  // On the small lab with `from` replaced by `to`: the run, the lab killed at `event`, ends as it should.
  // Returns the run directory.
  fs::path expect_gone_when_killed_at(const std::string& from, const std::string& to,
                                      const std::string& event, std::size_t times,
                                      const std::string& platform = "kubevirt") {
    restart_lab_with("small", from, to);
    if (HasFatalFailure()) return {};
    const std::string url = endpoints_[platform == "kubevirt" ? "kube" : "vcenter"];
    fs::path run_dir;
    auto run = run_and_kill_lab_at(event, times, run_dir, platform);
    if (run_dir.empty()) return {};
    expect_stopped_saying_gone(*run, run_dir, url);
    return run_dir;
  }

  // The run ends within the unreachable window plus the waits that notice it, saying what went away.
  void expect_stopped_saying_gone(Child& run, const fs::path& run_dir, const std::string& url) {
    const auto killed = Clock::now();
    auto rc = run.wait_for(std::chrono::seconds(90));
    ASSERT_TRUE(rc.has_value()) << "the run did not stop within 90 s of the lab's death: " << run.err();
    const double took = std::chrono::duration<double>(Clock::now() - killed).count();
    std::cout << "the run stopped " << took << " s after the lab's death\n";
    EXPECT_EQ(*rc, 1) << run.out() << run.err();
    EXPECT_GE(took, 9.0) << "stopped before 10 s of failures: " << run.err();
    EXPECT_LT(took, 45.0) << run.err();
    const std::string said = run.out() + run.err();
    EXPECT_NE(said.find("the API server at " + url + " is gone: "), std::string::npos) << said;
    EXPECT_NE(said.find("bootstorm cleanup " + run_dir.string()), std::string::npos) << said;
    // The journal is whole and says how the run ended; nothing was deleted.
    std::istringstream journal(read_file(run_dir / "journal.jsonl"));
    std::string last_type, error_kind;
    std::size_t deleted = 0, lines = 0;
    for (std::string line; std::getline(journal, line);) {
      const json e = json::parse(line, nullptr, false);
      ASSERT_FALSE(e.is_discarded()) << "torn journal line: " << line;
      ++lines;
      last_type = e.value("type", "");
      if (last_type == "run_error") error_kind = e.value("kind", "");
      if (last_type == "vm_deleted") ++deleted;
    }
    EXPECT_GT(lines, 3u);
    EXPECT_EQ(last_type, "run_ended");
    EXPECT_EQ(error_kind, "connection failed");  // to_string(ErrorKind::connect)
    EXPECT_EQ(deleted, 0u);
    const json summary = json::parse(read_file(run_dir / "summary.json"), nullptr, false);
    ASSERT_TRUE(summary.is_object());
    EXPECT_EQ(summary["run"]["outcome"], "failed");
  }
};

TEST_F(PlatformGoneE2E, ALabKilledMidStormStopsTheRunSayingTheApiServerIsGone) {
  // Every guest hangs in firmware: the run sits in observe when the lab dies.
  expect_gone_when_killed_at("\nkube:\n", "\nfaults: {neverBootRate: 1.0}\nkube:\n", "storm_fired", 1);
}

TEST_F(PlatformGoneE2E, ALabKilledMidProvisioningStopsTheRunSayingTheApiServerIsGone) {
  // Clones take two minutes: the run waits for its DataVolumes when the lab dies. Killed once the three
  // VirtualMachines exist: a create the kill interrupts fails its VM at once, and with every VM failed the
  // run ends before the unreachable window (seen once, the lab slow to answer beside two other tests).
  const fs::path run_dir =
      expect_gone_when_killed_at("cloneOverheadS: 0.005", "cloneOverheadS: 120", "vm_created", 3);
  ASSERT_FALSE(run_dir.empty());
  EXPECT_EQ(read_file(run_dir / "journal.jsonl").find("\"storm_fired\""), std::string::npos);
}

TEST_F(PlatformGoneE2E, AVcenterKilledMidProvisioningStopsTheRunSayingItIsGone) {
  // Linked clones take two minutes: the run waits on vCenter's clone tasks when the lab dies.
  const fs::path run_dir = expect_gone_when_killed_at("cloneOverheadS: 0.005", "cloneOverheadS: 120",
                                                      "scenario_started", 1, "vsphere");
  ASSERT_FALSE(run_dir.empty());
  EXPECT_EQ(read_file(run_dir / "journal.jsonl").find("\"storm_fired\""), std::string::npos);
}

}  // namespace
