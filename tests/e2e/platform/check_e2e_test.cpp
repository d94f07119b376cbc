// `bootstorm check PLAN` through the real CLI (issue 22): the example plans pass on the embedded labs; a plan
// the platform cannot take fails with the check that says why, exit 1, and nothing created (a role without a
// verb, a missing golden image, a placement beyond node memory, a virt-controller limit that paces the launch
// past the timeout); a held-back start burst is a warning; `run` asks the same checks first and journals
// them.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/check_table.hpp"
#include "tests/support/lab_fixture.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/run_files.hpp"
#include "tests/support/tools.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::check_line;
using bootstorm::test_support::LabCliTest;
using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;
using bootstorm::test_support::write_file;
using nlohmann::json;

class CheckE2E : public LabCliTest {
 protected:
  CheckE2E() : LabCliTest("check-e2e", "small") {}

  // A KubeVirt plan on the served lab: `golden` names the DataSource, `vms` are placed on worker-0.
  fs::path plan(const std::string& name, const std::string& golden, int vms,
                const std::string& storm = "{mode: simultaneous, timeout: 2m}") {
    const fs::path path = dir_ / (name + ".yaml");
    PlanYaml{.name = name,
             .platform = {.kind = "kubevirt", .endpoint = "lab:" + state_.string()},
             .golden = "{dataSource: {name: " + golden + ", namespace: golden}}",
             .ns = "bootstorm-check",
             .scenarios = {{"one", {{"worker-0", vms}}}},
             .storm = storm,
             .ready = "{signal: guest_agent}",
             .output = (dir_ / "runs").string()}
        .write(path);
    return path;
  }

  // Nothing of the plan's namespace exists on the lab: no VM, no namespace.
  void expect_nothing_created() {
    if (!have_kubectl()) return;
    auto vms = kubectl({"get", "virtualmachines.kubevirt.io", "-A", "-o", "json"});
    ASSERT_EQ(vms.exit_code, 0) << vms.err;
    EXPECT_TRUE(json::parse(vms.out)["items"].empty()) << vms.out;
    auto ns = kubectl({"get", "namespace", "bootstorm-check"});
    EXPECT_NE(ns.exit_code, 0) << "the namespace was created: " << ns.out;
  }
};

TEST_F(CheckE2E, TheExamplePlansPassOnTheEmbeddedLabs) {
  for (const char* example : {"plans/kubevirt-density.yaml", "plans/consolidation-4x16g-vs-1x64g.yaml"}) {
    auto r =
        bootstorm({"check", (fs::path(BOOTSTORM_SOURCE_DIR) / example).string()}, std::chrono::seconds(120));
    EXPECT_EQ(r.exit_code, 0) << example << "\n" << r.out << r.err;
    EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << example << "\n" << r.out;
    EXPECT_NE(r.out.find("PASS"), std::string::npos) << example << "\n" << r.out;
    EXPECT_EQ(check_line(r.out, "start burst").rfind("PASS", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("platform: "), std::string::npos) << r.out;
    // Each platform asked who may do what: vim25 its AuthorizationManager, KubeVirt its access reviews.
    const std::string asked = std::string(example).find("kubevirt") != std::string::npos
                                  ? check_line(r.out, "permissions")
                                  : check_line(r.out, "privileges");
    EXPECT_EQ(asked.rfind("PASS", 0), 0u) << r.out;
    EXPECT_NE(asked.find("all "), std::string::npos) << r.out;
    if (std::string(example).find("consolidation") != std::string::npos) {
      EXPECT_EQ(check_line(r.out, "golden VM Tools").rfind("PASS", 0), 0u) << r.out;
      EXPECT_EQ(check_line(r.out, "datastore space").rfind("PASS", 0), 0u) << r.out;
    }
  }
}

TEST_F(CheckE2E, AMissingGoldenImageFailsNamingWhatExistsAndCreatesNothing) {
  auto r = bootstorm({"check", plan("no-golden", "no-such-golden", 3).string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string golden = check_line(r.out, "golden image");
  EXPECT_EQ(golden.rfind("FAIL", 0), 0u) << r.out;
  EXPECT_NE(golden.find("golden/no-such-golden does not exist"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fedora-golden"), std::string::npos) << "the advice lists what exists\n" << r.out;
  expect_nothing_created();
}

TEST_F(CheckE2E, ARoleWithoutVirtualMachinesStartFailsNamingTheVerbAndCreatesNothing) {
  // The small lab with a user who may not start VMs (kube.deny): the lab's API server refuses the start
  // subresource, and answers SelfSubjectAccessReview accordingly.
  ASSERT_NO_FATAL_FAILURE(
      restart_lab_with("small", "\nkube:\n",
                       "\nkube:\n  deny: [\"update subresources.kubevirt.io virtualmachines/start\"]\n"));
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it asks the lab's review API independently");
  // The same question from another client: the review says no, and a start is refused for what it is.
  const fs::path review = dir_ / "review.json";
  write_file(review, R"({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
    "spec": {"resourceAttributes": {"namespace": "bootstorm-check", "verb": "update",
      "group": "subresources.kubevirt.io", "resource": "virtualmachines", "subresource": "start"}}})");
  const json answer = kube_json(
      {"create", "--raw", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "-f", review.string()});
  EXPECT_EQ(answer["status"]["allowed"], false) << answer.dump();

  auto r = bootstorm({"check", plan("no-start", "fedora-golden", 3).string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string permissions = check_line(r.out, "permissions");
  EXPECT_EQ(permissions.rfind("FAIL", 0), 0u) << r.out;
  EXPECT_NE(
      permissions.find("may not update virtualmachines/start.subresources.kubevirt.io in bootstorm-check"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(permissions.find("create virtualmachines"), std::string::npos) << "only the denied verb\n"
                                                                           << r.out;
  expect_nothing_created();
}

TEST_F(CheckE2E, APlacementBeyondTheNodesMemoryFailsWithHowManyFit) {
  // small's worker-0 allocates 64 TiB: 17,000 VMs of 4 GiB do not fit, 16,384 would.
  // Beyond run's count bound too: --max-vms lets check weigh the nodes.
  auto r = bootstorm({"check", plan("too-dense", "fedora-golden", 17000).string(), "--max-vms", "17000"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string nodes = check_line(r.out, "nodes");
  EXPECT_EQ(nodes.rfind("FAIL", 0), 0u) << r.out;
  EXPECT_NE(nodes.find("cannot hold its share of the placement: 17000 VMs x 4Gi"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("place at most 16384 VMs on worker-0"), std::string::npos) << r.out;
  expect_nothing_created();
}

TEST_F(CheckE2E, AVirtControllerLimitThatPacesTheLaunchPastTheTimeoutFailsWithTheQpsThatWouldFit) {
  // The small lab with virt-controller at 2 QPS, burst 10 in its KubeVirt CR: 30 launches of ~19 writes take
  // (570 - 10) / 2 = 280 s, beyond the plan's 1-minute timeout.
  ASSERT_NO_FATAL_FAILURE(restart_lab_with("small", "virtController: {qps: 1000000, burst: 1000000}",
                                           "virtController: {qps: 2, burst: 10}"));
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it reads the lab's KubeVirt CR independently");
  // The limit is in the CR, where an operator would see it.
  const json kv = kube_json({"get", "kubevirts.kubevirt.io", "-A", "-o", "json"});
  ASSERT_EQ(kv["items"].size(), 1u) << kv.dump();
  EXPECT_EQ(kv["items"][0]["spec"]["configuration"]["controllerConfiguration"]["restClient"]["rateLimiter"]
              ["tokenBucketRateLimiter"]["qps"],
            2)
      << kv.dump();

  auto r = bootstorm(
      {"check", plan("slow-controller", "fedora-golden", 30, "{mode: simultaneous, timeout: 1m}").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string pacing = check_line(r.out, "launch pacing");
  EXPECT_EQ(pacing.rfind("FAIL", 0), 0u) << r.out;
  EXPECT_NE(pacing.find("virt-controller 2 QPS, burst 10 (set in KubeVirt CR kubevirt/kubevirt)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(pacing.find("predicted paced over 280 s, beyond storm.timeout 60 s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("qps to 19 or more"), std::string::npos) << r.out;
  expect_nothing_created();
}

TEST_F(CheckE2E, AHostAssistedCloneIsAWarningWithTheDataItMovesAndASnapshotClassMakesItPass) {
  // The small lab's storage profile says snapshot, and no VolumeSnapshotClass serves its driver: CDI would
  // fall back to a host-assisted copy.
  ASSERT_NO_FATAL_FAILURE(restart_lab_with("small", "\nkube:\n", "\nkube:\n  cloneStrategy: snapshot\n"));
  const fs::path p = plan("snapshot-without-class", "fedora-golden", 30);
  auto r = bootstorm({"check", p.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string clone = check_line(r.out, "clone strategy");
  EXPECT_EQ(clone.rfind("WARN", 0), 0u) << r.out;
  EXPECT_NE(
      clone.find("storage class lab-rbd (openshift-storage.rbd.csi.ceph.com): CDI will clone host-assisted "
                 "(copy), it falls back from snapshot: no VolumeSnapshotClass serves "
                 "openshift-storage.rbd.csi.ceph.com"),
      std::string::npos)
      << r.out;
  // The golden image's 1Gi volume, copied once per clone.
  EXPECT_NE(
      clone.find("each clone copies the whole golden volume (1Gi) through a node: 30 clones move 30 GiB"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("spec.cloneStrategy to csi-clone, or to snapshot with a VolumeSnapshotClass"),
            std::string::npos)
      << r.out;
  expect_nothing_created();

  // With a VolumeSnapshotClass for the driver the snapshot clone stays on the storage.
  ASSERT_NO_FATAL_FAILURE(restart_lab_with(
      "small", "\nkube:\n", "\nkube:\n  cloneStrategy: snapshot\n  snapshotClass: lab-rbd-snapclass\n"));
  auto ok = bootstorm({"check", p.string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_EQ(check_line(ok.out, "clone strategy").rfind("PASS", 0), 0u) << ok.out;
  EXPECT_NE(ok.out.find("CDI clones by snapshot, on the storage"), std::string::npos) << ok.out;
}

TEST_F(CheckE2E, AHeldBackStartBurstIsAWarningNotAFailure) {
  auto r = bootstorm({"check", plan("held-back", "fedora-golden", 12,
                                    "{mode: simultaneous, timeout: 2m, startConcurrency: 4}")
                                   .string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string burst = check_line(r.out, "start burst");
  EXPECT_EQ(burst.rfind("WARN", 0), 0u) << r.out;
  EXPECT_NE(burst.find("storm.startConcurrency 4 holds the burst to 4 starts in flight"), std::string::npos)
      << r.out;
  EXPECT_NE(burst.find("about 3 waves"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 warnings"), std::string::npos) << r.out;
}

// vSphere's golden VM, datastore and hosts, on a lab whose golden VM lacks VMware Tools, whose datastore is
// nearly full, whose placement host is in maintenance mode; and a vCenter that does not answer which
// privileges the user holds.
TEST_F(CheckE2E, VsphereGoldenWithoutToolsAFullDatastoreMaintenanceAndUnaskablePrivilegesAreSaidSo) {
  ASSERT_NO_FATAL_FAILURE(restart_lab_with(
      "small", "  - {name: tiny-golden, host: host-01, datastore: lab-ds01, profile: tiny}\n",
      "  - {name: tiny-golden, host: host-01, datastore: lab-ds01, profile: tiny, tools: false}\n"));
  auto vsphere_plan = [&](const std::string& name, const std::string& clone, int vms,
                          const std::string& signal) {
    const fs::path path = dir_ / (name + ".yaml");
    PlanYaml{.name = name,
             .platform = {.kind = "vsphere", .endpoint = "lab:" + state_.string(), .extra = {"api: vim25"}},
             .golden = "{vm: tiny-golden, clone: " + clone + "}",
             .scenarios = {{"one", {{"host-01", vms}}}},
             .storm = "{mode: simultaneous, timeout: 2m}",
             .ready = "{signal: " + signal + "}",
             .output = (dir_ / "runs").string()}
        .write(path);
    return path;
  };
  // Tools: the guest_agent signal cannot be reached; with `running` they are not needed.
  auto agent = bootstorm({"check", vsphere_plan("agent", "linked", 2, "guest_agent").string()});
  EXPECT_EQ(agent.exit_code, 1) << agent.out << agent.err;
  const std::string tools = check_line(agent.out, "golden VM Tools");
  EXPECT_EQ(tools.rfind("FAIL", 0), 0u) << agent.out;
  EXPECT_NE(tools.find("tiny-golden has no VMware Tools (guestToolsNotInstalled)"), std::string::npos)
      << agent.out;
  auto running = bootstorm({"check", vsphere_plan("running", "linked", 2, "running").string()});
  EXPECT_EQ(running.exit_code, 0) << running.out << running.err;
  EXPECT_EQ(check_line(running.out, "golden VM Tools").rfind("WARN", 0), 0u) << running.out;
  EXPECT_EQ(check_line(running.out, "datastore space").rfind("PASS", 0), 0u) << running.out;

  // The small lab's datastore holds 10,000,000 GB: full clones of the tiny profile (1 GB, 256 MB of
  // memory: about 0.25 GiB each) only fail past that, so the datastore shrinks to half a GB instead.
  ASSERT_NO_FATAL_FAILURE(restart_lab_with(
      "small", "{name: lab-ds01, MBps: 1000000, iops: 100000000, latencyMs: 0.05, capacityGB: 10000000}",
      "{name: lab-ds01, MBps: 1000000, iops: 100000000, latencyMs: 0.05, capacityGB: 0.5}"));
  auto full = bootstorm({"check", vsphere_plan("full", "full", 4, "running").string()});
  EXPECT_EQ(full.exit_code, 1) << full.out << full.err;
  const std::string space = check_line(full.out, "datastore space");
  EXPECT_EQ(space.rfind("FAIL", 0), 0u) << full.out;
  EXPECT_NE(space.find("4 full clones need about"), std::string::npos) << full.out;
  EXPECT_NE(space.find("datastore lab-ds01 has "), std::string::npos) << full.out;

  // A placement host in maintenance mode: the inventory check fails naming it.
  ASSERT_NO_FATAL_FAILURE(restart_lab_with("small", "  - {name: host-01, cluster: lab-cluster,",
                                           "  - {name: host-01, maintenance: true, cluster: lab-cluster,"));
  auto maintenance = bootstorm({"check", vsphere_plan("maintenance", "linked", 2, "running").string()});
  EXPECT_EQ(maintenance.exit_code, 1) << maintenance.out << maintenance.err;
  const std::string inventory = check_line(maintenance.out, "inventory");
  EXPECT_EQ(inventory.rfind("FAIL", 0), 0u) << maintenance.out;
  EXPECT_NE(inventory.find("host host-01 in vCenter https://"), std::string::npos) << maintenance.out;
  EXPECT_NE(inventory.find("is in maintenance mode"), std::string::npos) << maintenance.out;

  // A vCenter that does not serve HasPrivilegeOnEntities: the privileges are unknown, not passed.
  ASSERT_NO_FATAL_FAILURE(
      restart_lab_with("small", "  sessionIdleTimeoutS: 1800\n",
                       "  sessionIdleTimeoutS: 1800\n  unservedMethods: [HasPrivilegeOnEntities]\n"));
  auto unasked = bootstorm({"check", vsphere_plan("unasked", "linked", 2, "guest_agent").string()});
  EXPECT_EQ(unasked.exit_code, 0) << unasked.out << unasked.err;
  const std::string privileges = check_line(unasked.out, "privileges");
  EXPECT_EQ(privileges.rfind("UNKNOWN", 0), 0u) << unasked.out;
  EXPECT_NE(privileges.find("did not answer which privileges the user holds"), std::string::npos)
      << unasked.out;
  EXPECT_NE(privileges.find("MethodNotFound"), std::string::npos) << unasked.out;
}

TEST_F(CheckE2E, RunAsksTheChecksFirstJournalsThemAndStopsBeforeCreatingAnything) {
  const fs::path bad = plan("run-no-golden", "no-such-golden", 3);
  auto r = bootstorm({"run", bad.string(), "--yes"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err)
                .find("check golden image failed: golden DataSource golden/no-such-golden does not exist"),
            std::string::npos)
      << r.out << r.err;
  expect_nothing_created();
  const auto runs = subdirs(dir_ / "runs");
  ASSERT_EQ(runs.size(), 1u);
  const std::string journal = read_file(runs.front() / "journal.jsonl");
  EXPECT_NE(journal.find("\"type\":\"checks\""), std::string::npos) << journal;
  EXPECT_EQ(journal.find("\"type\":\"vm_created\""), std::string::npos) << journal;

  // --skip-checks says so, and the inventory check still stops the run.
  auto skipped = bootstorm({"run", bad.string(), "--yes", "--skip-checks"});
  EXPECT_NE(skipped.exit_code, 0);
  EXPECT_NE((skipped.out + skipped.err).find("--skip-checks: the platform was not checked"),
            std::string::npos)
      << skipped.out << skipped.err;
  expect_nothing_created();
}

}  // namespace
