// The fault suite (issue 9): the real `bootstorm run` / `bootstorm cleanup` against a `bootstorm lab serve`
// child whose faults are switched at run time (POST /_lab/faults), for both providers. For every fault:
//  * the run finishes, or fails with a message that names what went wrong;
//  * no milestone that happened is lost and none is invented (journal.jsonl against /_lab/truth);
//  * `bootstorm cleanup RUN` leaves no object of the run, and a VM the run did not create survives untouched.
// tests/README.md has the table of faults, assertions and results.
#include <sys/mount.h>

#include <functional>
#include <regex>

#include "tests/integration/faults/lab_harness.hpp"

namespace bootstorm::lab_harness {
namespace {

class FaultSuite : public LabFixture, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string platform() const { return GetParam(); }

  // The run keeps its VMs (cleanup: never): the lab's truth lists only VMs that still exist, and the suite
  // wants `bootstorm cleanup RUN` to be what removes them.
  PlanKnobs plan(int vms_per_host = 2) const {
    PlanKnobs k;
    k.platform = platform();
    k.vms_per_host = vms_per_host;
    k.cleanup = "never";
    return k;
  }

  // Lab up, a foreign VM next to where the run's VMs will be, faults set. Fatal on failure.
  void prepare(const LabKnobs& lab, const json& faults = json::object()) {
    start_lab(lab);
    if (HasFatalFailure()) return;
    create_foreign_vm(platform());
    if (HasFatalFailure()) return;
    if (!faults.empty()) {
      json now = set_faults(platform(), faults);
      for (const auto& [key, value] : faults.items()) ASSERT_EQ(now[key], value) << key;
    }
  }

  // After the run: the lab without faults, `bootstorm cleanup RUN` (exit 0, a message that says what it
  // deleted), nothing of the run left, the foreign VM untouched. Returns cleanup's stdout.
  std::string cleanup_and_check(const fs::path& run_dir, const std::string& run_id) {
    clear_faults(platform());
    CliResult c = bootstorm({"cleanup", run_dir.string()});
    EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
    EXPECT_TRUE(std::regex_search(c.out, std::regex("run " + run_id +
                                                    ": deleted [0-9]+ VMs \\([0-9]+ from the "
                                                    "journal, [0-9]+ more listed by the platform\\)")))
        << c.out;
    expect_nothing_of_run_left(platform(), run_id);
    expect_foreign_vm_untouched(platform());
    return c.out;
  }

  // Cutoff for runs that ended by themselves: every milestone up to the VM's true ready time (guest_agent)
  // must be journaled; for a VM that never got ready, everything up to 1 s before its failure was journaled.
  auto completed_cutoff(const std::vector<json>& events, const std::map<std::string, json>& truth) {
    std::map<std::string, double> failed_at;
    for (const auto& e : events)
      if (e.value("type", "") == "vm_failed")
        failed_at[e.value("vm", "")] = unix_of_rfc3339(e.value("t", ""));
    return [failed_at, truth](const std::string& vm) {
      auto f = failed_at.find(vm);
      if (f != failed_at.end()) return f->second - 1.0;
      const json& m = truth.at(vm).value("milestones", json::object());
      return m.contains("guest_agent") ? m["guest_agent"].get<double>() + 1e-6 : 0.0;
    };
  }

  struct StormRun {
    CliResult cli;
    fs::path run_dir;
    std::string run_id;
    std::vector<json> events;
  };

  StormRun run_storm(const PlanKnobs& k, std::chrono::seconds timeout = std::chrono::seconds(90)) {
    const fs::path out = dir_ / "runs";
    StormRun r;
    r.cli = bootstorm({"run", write_plan(k, out).string(), "--yes", "--out", out.string()}, timeout);
    r.run_dir = run_dir_in(out);
    if (!r.run_dir.empty()) {
      r.run_id = run_id_of(r.run_dir);
      r.events = journal(r.run_dir);
    }
    return r;
  }

  // `bootstorm run` of `k` in the background; once its storm has fired, `mid_storm()` (the fault), then the
  // end of the run. A failure, and an empty run_dir, when the storm never fires or the run does not end.
  StormRun run_with_fault_mid_storm(const PlanKnobs& k, const std::function<void()>& mid_storm) {
    const fs::path out = dir_ / "runs";
    auto child = spawn_bootstorm({"run", write_plan(k, out).string(), "--yes", "--out", out.string()});
    StormRun r;
    fs::path run_dir;
    if (!wait_for_journal(
            *child, out, [](const std::vector<json>& ev) { return count_events(ev, "storm_fired") > 0; },
            std::chrono::seconds(60), run_dir)) {
      ADD_FAILURE() << "the storm never fired\n" << child->out() << child->err();
      return r;
    }
    mid_storm();
    auto rc = child->wait_for(std::chrono::seconds(90));
    if (!rc) {
      ADD_FAILURE() << "the run did not end";
      return r;
    }
    return {{*rc, child->out(), child->err()}, run_dir, run_id_of(run_dir), journal(run_dir)};
  }

  // A storm that must complete despite the fault: exit 0, every VM ready, every milestone journaled.
  void expect_completed_storm(const PlanKnobs& k, const StormRun& r) {
    ASSERT_FALSE(r.run_dir.empty()) << r.cli.all();
    EXPECT_EQ(r.cli.exit_code, 0) << r.cli.all();
    EXPECT_NE(r.cli.out.find("outcome: completed"), std::string::npos) << r.cli.out;
    const int n = total_vms(k);
    EXPECT_NE(r.cli.out.find(std::to_string(n) + "/" + std::to_string(n) + " ready"), std::string::npos)
        << r.cli.out;
    auto truth = truth_of_run(platform(), r.run_id);
    EXPECT_EQ(truth.size(), static_cast<std::size_t>(n));
    const int compared =
        expect_no_milestone_lost(platform(), r.events, truth, completed_cutoff(r.events, truth));
    EXPECT_GE(compared, 2 * n) << "every VM has at least running and guest_agent";
  }
};

TEST_P(FaultSuite, ErrorsOnAFifthOfRequestsAreRetriedAndTheStormCompletes) {
  prepare({}, {{"errorRate", 0.2}, {"errorStatus", 503}});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(3);
  StormRun r = run_storm(k);
  expect_completed_storm(k, r);
  json stats = lab_get(platform(), "/_lab/stats");
  EXPECT_GT(stats.value(platform() == "vsphere" ? "faultsInjected" : "injectedErrors", 0), 0)
      << "the fault never hit: " << stats.dump();
  if (!r.run_dir.empty()) cleanup_and_check(r.run_dir, r.run_id);
}

// 500 is not "try again later": a clone or create answered 500 may or may not have happened, so it is not
// blindly retried. The run either completes, or fails naming the status for every VM it lost; nothing it
// measured is lost, and cleanup finds even a VM whose creation was answered 500.
TEST_P(FaultSuite, InternalServerErrorsOnAFifthOfRequestsEndTheRunCleanly) {
  prepare({}, {{"errorRate", 0.2}, {"errorStatus", 500}});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(3);
  StormRun r = run_storm(k);
  ASSERT_FALSE(r.run_dir.empty()) << r.cli.all();
  ASSERT_TRUE(r.cli.exit_code == 0 || r.cli.exit_code == 1) << r.cli.all();
  json summary = json::parse(read_file(r.run_dir / "summary.json"), nullptr, false);
  ASSERT_TRUE(summary.is_object()) << r.cli.all();
  if (r.cli.exit_code == 0) {
    EXPECT_NE(r.cli.out.find("outcome: completed"), std::string::npos) << r.cli.out;
  } else {
    const json& failures = summary["scenarios"][0]["failures"];
    // The reason names the status (REST) or vCenter's fault (vim25, whose faults all come with HTTP 500).
    for (const json& f : failures) {
      const std::string reason = f["reason"].get<std::string>();
      EXPECT_TRUE(reason.find("500") != std::string::npos || reason.find("SystemError") != std::string::npos)
          << "the reason names the status or the fault: " << f.dump();
    }
    if (failures.empty()) {
      // Failed before any VM (connect / the checks): the error line names the request and the status.
      EXPECT_TRUE(
          std::regex_search(r.cli.out, std::regex("error: .*\\((GET|POST) /[^)]*\\) .*HTTP 500|"
                                                  "error: (check [a-z ]+ failed: )?vim25 [A-Za-z_]+ at "
                                                  "https://[^ ]+/sdk failed: SystemError")))
          << r.cli.out;
    }
  }
  auto truth = truth_of_run(platform(), r.run_id);
  expect_no_milestone_lost(platform(), r.events, truth, completed_cutoff(r.events, truth));
  std::cout << "500 on 20 % of requests (" << platform() << "): exit " << r.cli.exit_code << ", "
            << summary["scenarios"][0]["failures"].size() << " VMs failed\n"
            << r.cli.out.substr(r.cli.out.find("outcome:")) << "\n";
  cleanup_and_check(r.run_dir, r.run_id);
}

TEST_P(FaultSuite, HalfASecondOfLatencyOnEveryRequestSlowsTheRunButLosesNothing) {
  prepare({}, {{"latencyMs", 500.0}});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(2);
  const auto t0 = Clock::now();
  StormRun r = run_storm(k);
  const double wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  expect_completed_storm(k, r);
  EXPECT_GT(wall_s, 1.5) << "connect, clone, start and observe each cost at least one slowed request";
  if (platform() == "kubevirt") {
    EXPECT_GT(lab_get(platform(), "/_lab/stats").value("injectedLatency", 0), 0);
  }
  if (!r.run_dir.empty()) cleanup_and_check(r.run_dir, r.run_id);
}

TEST_P(FaultSuite, WatchConnectionsDroppedEveryTwoSecondsAreResumed) {
  if (platform() == "vsphere")
    GTEST_SKIP() << "vCenter has no watch streams: the vSphere provider polls (session expiry covers it)";
  // Boots of ~5 s: every watch of the storm is cut at least twice while milestones are still coming.
  prepare({.firmware_s = 5.0}, {{"watchDropAfterS", 2.0}});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(2);
  StormRun r = run_storm(k);
  expect_completed_storm(k, r);
  const json watches = lab_get(platform(), "/_lab/stats")["watches"];
  EXPECT_GE(watches.value("dropped", 0), 2) << "the storm outlived fewer than two drops: " << watches.dump();
  if (!r.run_dir.empty()) cleanup_and_check(r.run_dir, r.run_id);
}

TEST_P(FaultSuite, SessionExpiryMidStormIsRecoveredByLoggingInAgain) {
  if (platform() == "kubevirt")
    GTEST_SKIP() << "the Kubernetes front has no token-expiry fault (bearer tokens do not expire in the lab)";
  prepare({.firmware_s = 3.0});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(2);
  double sessions_before = 0;
  StormRun r = run_with_fault_mid_storm(k, [&] {
    sessions_before = lab_get("vsphere", "/_lab/stats").value("sessionsCreated", 0.0);
    set_faults("vsphere", {{"expireSessions", true}});
  });
  ASSERT_FALSE(r.run_dir.empty());
  EXPECT_FALSE(lab_get("vsphere", "/_lab/faults").value("expireSessions", true))
      << "the one-shot expiry was never consumed: no request reached vCenter after it was set";
  EXPECT_GT(lab_get("vsphere", "/_lab/stats").value("sessionsCreated", 0.0), sessions_before)
      << "nobody logged in again after the sessions expired";
  expect_completed_storm(k, r);
  cleanup_and_check(r.run_dir, r.run_id);
}

TEST_P(FaultSuite, ForgottenCollectorVersionsMidStormStartOverLosingAndRepeatingNoMilestone) {
  if (platform() == "kubevirt")
    GTEST_SKIP() << "Kubernetes' counterpart, 410 Gone on a watch, is forceGoneRate's (the kubevirt suites)";
  prepare({.firmware_s = 3.0});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(3);
  double injected_before = 0;
  StormRun r = run_with_fault_mid_storm(k, [&] {
    // The guests boot for 3 s: the observer's wait is pending when the collector forgets its versions.
    injected_before = lab_get("vsphere", "/_lab/stats").value("faultsInjected", 0.0);
    set_faults("vsphere", {{"forgetCollectorVersions", true}});
  });
  ASSERT_FALSE(r.run_dir.empty());
  EXPECT_FALSE(lab_get("vsphere", "/_lab/faults").value("forgetCollectorVersions", true))
      << "the one-shot fault was never consumed: no /sdk request came after it was set";
  EXPECT_GT(lab_get("vsphere", "/_lab/stats").value("faultsInjected", 0.0), injected_before);
  EXPECT_NE(r.cli.all().find("no longer knows collector version"), std::string::npos)
      << "the restart is said in the log\n"
      << r.cli.all();
  expect_completed_storm(k, r);
  // The full state read again holds milestones already journaled: each is journaled once.
  std::map<std::pair<std::string, std::string>, int> times;
  for (const auto& e : r.events)
    if (e.value("type", "") == "milestone") ++times[{e.value("vm", ""), e.value("milestone", "")}];
  for (const auto& [key, n] : times) EXPECT_EQ(n, 1) << key.first << ": " << key.second << " journaled " << n;
  cleanup_and_check(r.run_dir, r.run_id);
}

// ------------------------------------------------------------------------------------------ SIGKILL

TEST_P(FaultSuite, SigkillDuringProvisionThenCleanupRemovesEverythingTheRunCreated) {
  // Clones take 2 s: the kill lands while they are in flight (vSphere: blocking clone calls not yet answered,
  // so the journal has no vm_created; Kubernetes: VMs created, DataVolumes still cloning).
  prepare({.clone_overhead_s = 2.0});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(2);
  const fs::path out = dir_ / "runs";
  const std::string p = platform();
  // Clone requests on vCenter, whichever API asked: the harness's own are counted before the run.
  auto clones_asked = [&](const std::string& kind) {
    const json routes = lab_get(kind, "/_lab/stats").value("byRoute", json::object());
    return routes.value("POST /sdk CloneVM_Task", 0.0) +
           routes.value("POST /api/vcenter/vm?action=clone", 0.0);
  };
  const double clones_before = p == "vsphere" ? clones_asked(p) : 0.0;
  auto child = spawn_bootstorm({"run", write_plan(k, out).string(), "--yes", "--out", out.string()});
  fs::path run_dir;
  ASSERT_TRUE(wait_for_journal(
      *child, out,
      [&](const std::vector<json>& ev) {
        if (count_events(ev, "scenario_started") == 0) return false;
        // vCenter: a clone the run asked for (REST or vim25) is running.
        if (p == "vsphere")
          return clones_asked(p) > clones_before &&
                 lab_get(p, "/_lab/stats").value("operationsRunning", 0) > 0;
        return count_events(ev, "vm_created") > 0;
      },
      std::chrono::seconds(60), run_dir))
      << child->out() << child->err();
  child->kill_now();
  auto events = journal(run_dir);
  EXPECT_EQ(count_events(events, "storm_fired"), 0u) << "killed too late: not in provision";
  const std::string run_id = run_id_of(run_dir);
  // Let the clones the dead run started land on the platform: cleanup must find them by their run id even
  // though the journal never heard of them.
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  std::size_t on_platform = 0;
  while (Clock::now() < deadline) {
    if (p == "vsphere") {
      json stats = lab_get(p, "/_lab/stats");
      if (stats.value("operationsRunning", 0) == 0 && stats.value("operationsQueued", 0) == 0) break;
    } else {
      on_platform = 0;
      for (const auto& [name, vm] : kube_vms()) on_platform += name.rfind("bs-" + run_id + "-", 0) == 0;
      if (on_platform == static_cast<std::size_t>(total_vms(k))) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  on_platform = 0;
  if (p == "vsphere") {
    for (const auto& [name, vm] : vcenter_vms()) on_platform += name.rfind("bs-" + run_id + "-", 0) == 0;
  } else {
    for (const auto& [name, vm] : kube_vms()) on_platform += name.rfind("bs-" + run_id + "-", 0) == 0;
  }
  EXPECT_GT(on_platform, 0u) << "the kill came before any clone reached the platform";
  EXPECT_TRUE(truth_of_run(p, run_id).empty()) << "nothing was started, so the lab has no milestone";
  const std::string cleaned = cleanup_and_check(run_dir, run_id);
  EXPECT_NE(cleaned.find("deleted " + std::to_string(on_platform) + " VMs"), std::string::npos) << cleaned;
}

TEST_P(FaultSuite, SigkillDuringSettleThenCleanupRemovesEverythingTheRunCreated) {
  prepare({});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(2);
  k.settle = "60s";
  const int n = total_vms(k);
  const fs::path out = dir_ / "runs";
  auto child = spawn_bootstorm({"run", write_plan(k, out).string(), "--yes", "--out", out.string()});
  fs::path run_dir;
  ASSERT_TRUE(wait_for_journal(
      *child, out,
      [&](const std::vector<json>& ev) {
        return count_events(ev, "vm_created") == static_cast<std::size_t>(n);
      },
      std::chrono::seconds(60), run_dir))
      << child->out() << child->err();
  // Every clone is journaled; give the VMs time to become startable, so the run sits in its 60 s settle.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_FALSE(child->wait_for(std::chrono::milliseconds(0)).has_value()) << child->out() << child->err();
  child->kill_now();
  EXPECT_EQ(count_events(journal(run_dir), "storm_fired"), 0u) << "the storm fired during a 60 s settle";
  const std::string run_id = run_id_of(run_dir);
  EXPECT_TRUE(truth_of_run(platform(), run_id).empty()) << "no VM was started";
  const std::string cleaned = cleanup_and_check(run_dir, run_id);
  EXPECT_NE(cleaned.find("deleted " + std::to_string(n) + " VMs (" + std::to_string(n) + " from the journal"),
            std::string::npos)
      << cleaned;
}

TEST_P(FaultSuite, SigkillDuringObserveLosesNoJournaledMilestoneAndCleanupRemovesTheRun) {
  // Every VM powers on and hangs in firmware: the run sits in observe (timeout 10 min) until killed.
  prepare({}, {{"neverBootRate", 1.0}});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(2);
  k.timeout = "10m";
  const fs::path out = dir_ / "runs";
  auto child = spawn_bootstorm({"run", write_plan(k, out).string(), "--yes", "--out", out.string()});
  fs::path run_dir;
  ASSERT_TRUE(wait_for_journal(
      *child, out, [](const std::vector<json>& ev) { return count_events(ev, "storm_fired") > 0; },
      std::chrono::seconds(60), run_dir))
      << child->out() << child->err();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const double killed_at = unix_now();
  child->kill_now();
  const std::string run_id = run_id_of(run_dir);
  auto events = journal(run_dir);
  auto truth = truth_of_run(platform(), run_id);
  EXPECT_EQ(truth.size(), static_cast<std::size_t>(total_vms(k)));
  // What happened more than 1.5 s before the kill had been observed (poll interval / watch) and written
  // (flush every 100 ms): SIGKILL must not have lost it.
  const int compared = expect_no_milestone_lost(platform(), events, truth,
                                                [&](const std::string&) { return killed_at - 1.5; });
  EXPECT_GE(compared, total_vms(k)) << "every VM at least reached running";
  cleanup_and_check(run_dir, run_id);
}

// ------------------------------------------------------------------------------------------ VM faults

TEST_P(FaultSuite, AVmThatNeverBootsFailsAtTheTimeoutWithTheReasonAndTheOthersAreMeasured) {
  prepare({});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(2);
  k.timeout = "3s";
  k.settle = "3s";  // time to pick the victim once its name (with the run id) is known
  const int n = total_vms(k);
  const fs::path out = dir_ / "runs";
  auto child = spawn_bootstorm({"run", write_plan(k, out).string(), "--yes", "--out", out.string()});
  fs::path run_dir;
  ASSERT_TRUE(wait_for_journal(
      *child, out,
      [&](const std::vector<json>& ev) {
        return count_events(ev, "vm_created") == static_cast<std::size_t>(n);
      },
      std::chrono::seconds(60), run_dir))
      << child->out() << child->err();
  std::string victim;
  for (const auto& e : journal(run_dir))
    if (e.value("type", "") == "vm_created" && victim.empty()) victim = e.value("vm", "");
  set_faults(platform(), {{"neverBootVms", json::array({victim})}});
  ASSERT_EQ(count_events(journal(run_dir), "storm_fired"), 0u)
      << "the settle was over before the fault was set";
  auto rc = child->wait_for(std::chrono::seconds(90));
  ASSERT_TRUE(rc.has_value());
  StormRun r{{*rc, child->out(), child->err()}, run_dir, run_id_of(run_dir), journal(run_dir)};
  EXPECT_EQ(r.cli.exit_code, 1) << "a run with a VM that never became ready has failed\n" << r.cli.all();
  EXPECT_NE(r.cli.out.find(std::to_string(n - 1) + "/" + std::to_string(n) + " ready"), std::string::npos)
      << r.cli.out;
  EXPECT_NE(r.cli.out.find("outcome: failed"), std::string::npos) << r.cli.out;
  json summary = json::parse(read_file(run_dir / "summary.json"), nullptr, false);
  ASSERT_TRUE(summary.is_object());
  const json& failures = summary["scenarios"][0]["failures"];
  ASSERT_EQ(failures.size(), 1u) << failures.dump();
  EXPECT_EQ(failures[0]["vm"], victim);
  EXPECT_NE(failures[0]["reason"].get<std::string>().find("timeout waiting for guest_agent after 3 s"),
            std::string::npos)
      << failures.dump();
  auto truth = truth_of_run(platform(), r.run_id);
  ASSERT_TRUE(truth.count(victim));
  EXPECT_FALSE(truth[victim]["milestones"].contains("guest_agent")) << "the lab did not hang the victim";
  EXPECT_TRUE(truth[victim]["milestones"].contains("running"));
  expect_no_milestone_lost(platform(), r.events, truth, completed_cutoff(r.events, truth));
  cleanup_and_check(r.run_dir, r.run_id);
}

// ------------------------------------------------------------------------------------------ full disk

class TmpfsMount {
 public:
  TmpfsMount(const fs::path& where, const std::string& size) : where_(where) {
    fs::create_directories(where);
    const std::string options = "size=" + size + ",mode=0755";
    mounted_ = ::mount("tmpfs", where.c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(where_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  fs::path where_;
  bool mounted_ = false;
  std::string error_;
};

TEST_P(FaultSuite, AFullDiskWhileTheRunDirectoryIsWrittenFailsTheRunClearlyAndStillCleansUp) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "mounting a small tmpfs needs root (CI runs as root): the full-disk fault is not tested";
  const fs::path out = dir_ / "full";
  // 16 KiB: plan.yaml and the start of the journal fit, the milestones and the reports do not.
  TmpfsMount disk(out, "16k");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs on " << out << ": " << disk.error();
  prepare({});
  if (HasFatalFailure()) return;
  PlanKnobs k = plan(3);
  const int n = total_vms(k);
  CliResult cli = bootstorm({"run", write_plan(k, out).string(), "--yes", "--out", out.string()});
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty()) << cli.all();
  const std::string run_id = run_id_of(run_dir);
  EXPECT_EQ(cli.exit_code, 1) << "a run whose results could not be written has failed\n" << cli.all();
  // The user learns that the disk is full and which file of which run directory could not be written.
  const std::regex clear_message("error: (writing|the journal) " + run_dir.string() +
                                 "/[a-z.]+ (failed|is incomplete): No space left on device");
  EXPECT_TRUE(std::regex_search(cli.out, clear_message)) << cli.out;
  // What was measured is still reported on the terminal, and it agrees with the lab.
  auto truth = truth_of_run(platform(), run_id);
  std::size_t ready_in_truth = 0;
  for (const auto& [vm, t] : truth) ready_in_truth += t["milestones"].contains("guest_agent");
  EXPECT_EQ(ready_in_truth, static_cast<std::size_t>(n));
  EXPECT_NE(cli.out.find(std::to_string(ready_in_truth) + "/" + std::to_string(n) + " ready"),
            std::string::npos)
      << cli.out;
  // Whatever reached the journal before the disk filled up is true.
  expect_no_milestone_lost(platform(), journal(run_dir), truth, [](const std::string&) { return 0.0; });
  // Cleanup works from what the journal kept (run_started, the first line) plus the platform's list, on the
  // still-full disk.
  cleanup_and_check(run_dir, run_id);
}

INSTANTIATE_TEST_SUITE_P(BothProviders, FaultSuite, ::testing::Values("vsphere", "kubevirt"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace bootstorm::lab_harness
