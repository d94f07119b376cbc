// vSphere fault handling end to end: the real `bootstorm run` on `endpoint: embedded` with a lab profile that
// is the `small` lab plus a `faults:` block. Each test reads what a user would read: the exit code, the run
// directory's summary.json / journal.jsonl, and the messages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/support/lab_process.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/run_files.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;

// A `bootstorm run` and the run directory it wrote.
struct PlanRun : bootstorm::test_support::CliRun {
  fs::path run_dir;
};

class VsphereFaults : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = bootstorm::test_support::make_test_scratch_dir("vsphere-faults"); }
  void TearDown() override { bootstorm::test_support::finish_test_scratch_dir(dir_, HasFailure()); }

  // The small lab with `faults_yaml` appended as its faults block.
  fs::path write_lab(const std::string& faults_yaml) {
    std::string lab = read_file(fs::path(BOOTSTORM_SOURCE_DIR) / "simulator/labs/small.yaml");
    fs::path path = dir_ / "faulty-lab.yaml";
    std::ofstream(path) << lab << "\nfaults: " << faults_yaml << "\n";
    return path;
  }

  PlanRun run_plan(const fs::path& lab, const std::vector<PlanYaml::Placement>& placement,
                   const std::string& timeout) {
    fs::path plan = dir_ / "plan.yaml";
    PlanYaml{.name = "vsphere-faults",
             .platform = {.kind = "vsphere", .endpoint = "embedded", .lab = lab.string()},
             .golden = "{vm: tiny-golden, clone: linked}",
             .scenarios = {{"faults", placement}},
             .storm = "{mode: simultaneous, timeout: " + timeout + ", settle: 0s}",
             .ready = "{signal: guest_agent}",
             .cleanup = "always",
             .output = (dir_ / "runs").string()}
        .write(plan);
    // A fixed run id: the lab's per-VM fault draws are keyed by the VM's name, which holds the run id, so
    // with a random one a 30 % rate over 12 VMs misses every VM in about 1 run of 70.
    PlanRun r{bootstorm::test_support::run_cli({"run", plan.string(), "--yes", "--run-id", "5eed07"},
                                               dir_ / "run", std::chrono::seconds(600)),
              {}};
    if (fs::exists(dir_ / "runs"))
      for (auto& entry : fs::directory_iterator(dir_ / "runs")) r.run_dir = entry.path();
    return r;
  }

  // Every VM the journal says was created was also deleted: nothing of the run is left behind.
  static void expect_everything_created_was_deleted(const fs::path& run_dir) {
    std::set<std::string> created, deleted;
    for (const json& e : bootstorm::test_support::read_journal(run_dir)) {
      if (e.value("type", "") == "vm_created") created.insert(e.value("vm", ""));
      if (e.value("type", "") == "vm_deleted") deleted.insert(e.value("vm", ""));
    }
    EXPECT_FALSE(created.empty());
    EXPECT_EQ(created, deleted);
  }

  fs::path dir_;
};

TEST_F(VsphereFaults, AVmWhoseToolsNeverStartFailsWithTheReasonAtTheTimeoutAndTheOthersAreFine) {
  // Seeded: the lab draws per VM at power-on whether Tools will ever start.
  fs::path lab = write_lab("{agentNeverStartsRate: 0.3}");
  PlanRun r = run_plan(lab, {{"host-01", 6}, {"host-02", 6}}, "4s");
  ASSERT_FALSE(r.run_dir.empty()) << r.err;
  EXPECT_EQ(r.exit_code, 1) << "a run with VMs that never became ready is a failed run\n" << r.out << r.err;
  json summary = json::parse(read_file(r.run_dir / "summary.json"));
  const json& scenario = summary["scenarios"][0];
  const json& ready = scenario["milestones"]["ready"];
  const int ready_count = ready["count"].get<int>();
  const auto& failures = scenario["failures"];
  ASSERT_GT(failures.size(), 0u) << "with a 30 % rate over 12 VMs the seeded draw must hit some VM";
  ASSERT_GT(ready_count, 0) << "the other VMs boot normally";
  EXPECT_EQ(ready_count + static_cast<int>(failures.size()), 12);
  for (const json& f : failures) {
    const std::string reason = f["reason"].get<std::string>();
    EXPECT_NE(reason.find("timeout waiting for guest_agent"), std::string::npos) << reason;
    EXPECT_NE(reason.find("4 s"), std::string::npos) << "the reason names the timeout: " << reason;
  }
  expect_everything_created_was_deleted(r.run_dir);
}

TEST_F(VsphereFaults, Bursts503AreRetriedAndTheStormCompletes) {
  // One API request in five is answered 503 SERVICE_UNAVAILABLE, on every path.
  fs::path lab = write_lab("{errorRate: 0.2, errorStatus: 503}");
  PlanRun r = run_plan(lab, {{"host-01", 5}, {"host-02", 5}}, "60s");
  ASSERT_FALSE(r.run_dir.empty()) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  json summary = json::parse(read_file(r.run_dir / "summary.json"));
  EXPECT_EQ(summary["scenarios"][0]["milestones"]["ready"]["readyFraction"].get<double>(), 1.0);
  expect_everything_created_was_deleted(r.run_dir);
}

TEST_F(VsphereFaults, ACloneFailureOnOneHostIsReportedClearlyAndTheRestIsCleanedUp) {
  fs::path lab = write_lab("{cloneFailureHosts: [host-02]}");
  PlanRun r = run_plan(lab, {{"host-01", 4}, {"host-02", 4}}, "60s");
  ASSERT_FALSE(r.run_dir.empty()) << r.err;
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  // The user reads which host and what failed.
  const std::string all = r.out + r.err;
  EXPECT_NE(all.find("host-02"), std::string::npos) << all;
  EXPECT_NE(all.find("clon"), std::string::npos) << all;
  bool provision_failure_journaled = false;
  for (const json& e : bootstorm::test_support::read_journal(r.run_dir))
    if (e.value("type", "") == "vm_provision_failed") provision_failure_journaled = true;
  EXPECT_TRUE(provision_failure_journaled);
  expect_everything_created_was_deleted(r.run_dir);
}

}  // namespace
