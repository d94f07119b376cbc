// Migrations end to end, as an operator runs them: the real `bootstorm` executable as a subprocess.
//  * the example plan (plans/migrate-vsphere-to-openshift.yaml, embedded tolly-2024 lab) with --then-storm
//    produces the migration report and the compare report of the same desktops on vSphere and OpenShift;
//  * --dry-run prints the calls and creates nothing;
//  * against `bootstorm lab serve`: a vSphere run kept its VMs (fromRun), a DiskTransfer fault fails one VM
//    (reported with its step and reason) while the others complete, and `bootstorm cleanup` removes every
//    Forklift object, migrated VM and namespace the run created and leaves the source VMs and a namespace
//    that existed before — checked with kubectl and curl.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/lab_fixture.hpp"
#include "tests/support/plan_yaml.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

using Result = bootstorm::test_support::CliRun;

using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;
using bootstorm::test_support::write_file;

class MigrateE2E : public bootstorm::test_support::LabCliTest {
 protected:
  MigrateE2E() : LabCliTest("migrate-e2e") {}

  void SetUp() override {
    LabCliTest::SetUp();
    if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it checks the lab independently");
    if (!bootstorm::test_support::find_tool("curl"))
      BOOTSTORM_MISSING_TOOL("curl", "curl", "it reads the vCenter front independently");
  }

  // Only the tests against `bootstorm lab serve` start one; they allow it 60 s.
  void start_lab(const std::string& lab) { LabCliTest::start_lab(lab, std::chrono::seconds(60)); }

  // Migrations (with --then-storm) outlast the base fixture's default.
  Result bootstorm(std::vector<std::string> args, std::chrono::seconds timeout = std::chrono::seconds(600)) {
    return LabCliTest::bootstorm(std::move(args), timeout);
  }

  // GET on the lab's vCenter REST API with a session, through curl.
  json vcenter_get(const std::string& path) {
    const std::string base = endpoints_["vcenter"].get<std::string>();
    const std::string ca = endpoints_["caFile"].get<std::string>();
    Result login =
        run({bootstorm::test_support::find_tool("curl")->string(), "-sS", "--cacert", ca, "-X", "POST", "-u",
             endpoints_["username"].get<std::string>() + ":" + endpoints_["password"].get<std::string>(),
             base + "/api/session"},
            std::chrono::seconds(30));
    EXPECT_EQ(login.exit_code, 0) << login.err;
    std::string token = json::parse(login.out).get<std::string>();
    Result r = run({bootstorm::test_support::find_tool("curl")->string(), "-sS", "--cacert", ca, "-H",
                    "vmware-api-session-id: " + token, base + path},
                   std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  // The namespace as kubectl reads it; null when there is none.
  json namespace_object(const std::string& name) {
    Result r = kubectl({"get", "namespace", name, "--ignore-not-found", "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.find('{') == std::string::npos ? json() : json::parse(r.out);
  }
  // The namespaces a migration run's journal says it created.
  static std::set<std::string> namespaces_created_by(const fs::path& run_dir) {
    std::set<std::string> out;
    std::istringstream in(read_file(run_dir / "journal.jsonl"));
    for (std::string line; std::getline(in, line);) {
      json e = json::parse(line, nullptr, false);
      if (e.is_object() && e.value("type", "") == "object_created" && e.value("kind", "") == "Namespace")
        out.insert(e.value("name", ""));
    }
    return out;
  }
};

const std::string kExample = std::string(BOOTSTORM_SOURCE_DIR) + "/plans/migrate-vsphere-to-openshift.yaml";

TEST_F(MigrateE2E, DryRunPrintsEveryCallAndCreatesNothing) {
  const fs::path out = dir_ / "runs";
  Result r = bootstorm({"migrate", kExample, "--dry-run", "--then-storm", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* call :
       {"POST /api/v1/namespaces/openshift-mtv/secrets",
        "POST /apis/forklift.konveyor.io/v1beta1/namespaces/openshift-mtv/providers", "/networkmaps {",
        "/storagemaps {", "/plans {", "/migrations {", "then: boot-storm"})
    EXPECT_NE(r.out.find(call), std::string::npos) << call << "\n" << r.out;
  EXPECT_FALSE(fs::exists(out)) << "a dry run must not create a run directory";
}

TEST_F(MigrateE2E, ExamplePlanThenStormWritesMigrationAndCompareReports) {
  const fs::path out = dir_ / "runs";
  Result r = bootstorm({"migrate", kExample, "--then-storm", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto runs = subdirs(out);
  ASSERT_EQ(runs.size(), 1u);
  const fs::path run = runs[0];
  for (const char* f : {"plan.yaml", "journal.jsonl", "migration.md", "migration.json", "migration-vms.csv",
                        "compare.md", "compare.html"})
    EXPECT_TRUE(fs::exists(run / f)) << f;
  json m = json::parse(read_file(run / "migration.json"));
  const int vms = m["summary"]["vms"].get<int>();
  EXPECT_EQ(vms, 6);
  EXPECT_EQ(m["summary"]["succeeded"], vms);
  EXPECT_EQ(m["run"]["simulated"], true);
  EXPECT_GT(m["summary"]["meanS"].get<double>(), 0);
  EXPECT_GE(m["summary"]["maxS"].get<double>(), m["summary"]["p95S"].get<double>());
  EXPECT_GE(m["summary"]["wallS"].get<double>(), m["summary"]["maxS"].get<double>() - 1.0);
  for (const auto& v : m["vms"]) {
    EXPECT_EQ(v["status"], "succeeded") << v.dump();
    std::vector<std::string> steps;
    for (const auto& s : v["steps"]) steps.push_back(s["name"].get<std::string>());
    EXPECT_EQ(steps, (std::vector<std::string>{"Initialize", "DiskTransfer", "ImageConversion",
                                               "VirtualMachineCreation"}));
    EXPECT_GT(v["diskMB"].get<double>(), 1000) << v.dump();
    ASSERT_TRUE(v["transferMBps"].is_number()) << v.dump();
    EXPECT_GT(v["transferMBps"].get<double>(), 0);
    // Per-step times add up to the VM's total (same clock, consecutive steps).
    double sum = 0;
    for (const auto& s : v["steps"]) sum += s["durationS"].get<double>();
    EXPECT_NEAR(sum, v["totalS"].get<double>(), 1.5) << v.dump();
  }
  // The migration's own checks ran first and were journaled: nothing failed.
  EXPECT_NE(r.out.find("checks before the migration:"), std::string::npos) << r.out;
  {
    std::istringstream journal(read_file(run / "journal.jsonl"));
    std::size_t checks = 0;
    for (std::string line; std::getline(journal, line);) {
      const json e = json::parse(line, nullptr, false);
      if (!e.is_object() || e.value("type", "") != "checks") continue;
      ++checks;
      std::set<std::string> names;
      for (const auto& c : e["results"]) {
        names.insert(c["name"].get<std::string>());
        EXPECT_NE(c["status"], "fail") << c.dump();
      }
      for (const char* name : {"API", "Forklift", "namespaces", "permissions", "vCenter from the cluster"})
        EXPECT_TRUE(names.count(name)) << name << " " << e.dump();
    }
    EXPECT_EQ(checks, 1u);
  }
  const std::string md = read_file(run / "migration.md");
  EXPECT_NE(md.find("simulated lab"), std::string::npos);
  EXPECT_NE(md.find("| DiskTransfer |"), std::string::npos);
  // The two storms: the vSphere side (fromStorm) and the OpenShift side (--then-storm) of the same desktops.
  auto storms = subdirs(run);
  ASSERT_EQ(storms.size(), 2u);
  std::map<std::string, json> by_platform;
  for (const auto& s : storms) {
    json summary = json::parse(read_file(s / "summary.json"));
    by_platform[summary["run"]["platform"].get<std::string>()] = summary;
  }
  ASSERT_EQ(by_platform.size(), 2u);
  ASSERT_TRUE(by_platform.count("vsphere") && by_platform.count("kubevirt"));
  EXPECT_EQ(by_platform["vsphere"]["scenarios"][0]["name"], "vSphere desktops");
  EXPECT_EQ(by_platform["kubevirt"]["scenarios"][0]["name"], "OpenShift desktops");
  for (auto& [platform, summary] : by_platform) {
    ASSERT_EQ(summary["scenarios"].size(), 1u);
    EXPECT_EQ(summary["scenarios"][0]["vms"], vms) << platform;
    EXPECT_EQ(summary["scenarios"][0]["milestones"]["ready"]["count"], vms) << platform;
  }
  // The OpenShift storm booted exactly the migrated VMs (adopted, not cloned).
  std::set<std::string> migrated_targets, stormed;
  for (const auto& v : m["vms"]) migrated_targets.insert(v["targetName"].get<std::string>());
  {
    auto runs_in = subdirs(run);
    for (const auto& s : runs_in) {
      json summary = json::parse(read_file(s / "summary.json"));
      if (summary["run"]["platform"] != "kubevirt") continue;
      std::istringstream csv(read_file(s / "vms.csv"));
      std::string line;
      std::getline(csv, line);
      while (std::getline(csv, line)) {
        if (line.empty()) continue;
        std::string rest = line.substr(line.find(',', line.find(',') + 1) + 1);
        stormed.insert(rest.substr(0, rest.find(',')));
      }
    }
  }
  EXPECT_EQ(stormed, migrated_targets);
  const std::string compare = read_file(run / "compare.md");
  EXPECT_NE(compare.find("simulated lab"), std::string::npos);
  EXPECT_NE(compare.find("vSphere desktops"), std::string::npos) << compare;
  EXPECT_NE(compare.find("OpenShift desktops"), std::string::npos) << compare;
  std::cout << r.out;
}

// A user who may not create Forklift Plans: the migration's checks say so before anything is made (no Secret,
// no Provider, no namespace), exit 1, and the journal keeps the checks.
TEST_F(MigrateE2E, AUserWhoMayNotCreatePlansIsStoppedByTheChecksBeforeAnythingIsMade) {
  ASSERT_NO_FATAL_FAILURE(
      restart_lab_with("small", "\nkube:\n", "\nkube:\n  deny: [\"create forklift.konveyor.io plans\"]\n"));
  const fs::path plan = dir_ / "denied.yaml";
  write_file(plan,
             "apiVersion: bootstorm.io/v1\nkind: MigrationPlan\nname: denied\n"
             "source: {endpoint: 'lab:" +
                 state_.string() + "'}\ndestination: {endpoint: 'lab:" + state_.string() +
                 "', namespace: openshift-mtv}\n"
                 "vms: {names: [tiny-golden]}\n"
                 "networkMap: [{source: VM Network, destination: {type: pod}}]\n"
                 "storageMap: [{source: lab-ds01, destination: {storageClass: lab-rbd}}]\n"
                 "targetNamespace: migrated\n");
  const fs::path out = dir_ / "runs";
  Result r = bootstorm({"migrate", plan.string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("check permissions failed: this user may not create plans.forklift.konveyor.io in "
                       "openshift-mtv"),
            std::string::npos)
      << r.out << r.err;
  auto runs = subdirs(out);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_NE(read_file(runs[0] / "journal.jsonl").find("\"type\":\"checks\""), std::string::npos);
  for (const char* kind : {"secrets", "providers.forklift.konveyor.io", "plans.forklift.konveyor.io"}) {
    Result listed = kubectl({"get", kind, "-n", "openshift-mtv", "-o", "name"});
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_EQ(listed.out, "") << kind;
  }
  EXPECT_TRUE(namespace_object("migrated").is_null()) << "the target namespace was created";
}

TEST_F(MigrateE2E, DiskTransferFaultFailsOneVmAndCleanupKeepsTheSources) {
  start_lab("small");
  ASSERT_FALSE(HasFailure());
  // A vSphere storm that keeps its three clones: the source VMs.
  const fs::path storm_plan = dir_ / "storm.yaml";
  PlanYaml{.name = "sources",
           .platform = {.kind = "vsphere", .endpoint = "lab:" + state_.string()},
           .golden = "{vm: tiny-golden, clone: linked}",
           .scenarios = {{"desktops", {{"host-01", 3}}}},
           .storm = "{mode: simultaneous, timeout: 2m}",
           .ready = "{signal: guest_agent}",
           .cleanup = "never"}
      .write(storm_plan);
  Result sr = bootstorm({"run", storm_plan.string(), "--out", (dir_ / "storms").string()});
  ASSERT_EQ(sr.exit_code, 0) << sr.out << sr.err;
  auto storm_runs = subdirs(dir_ / "storms");
  ASSERT_EQ(storm_runs.size(), 1u);
  std::vector<std::string> sources;
  {
    std::istringstream csv(read_file(storm_runs[0] / "vms.csv"));
    std::string line;
    std::getline(csv, line);
    while (std::getline(csv, line))
      if (!line.empty())
        sources.push_back(line.substr(line.find(',', line.find(',') + 1) + 1, std::string::npos));
    for (auto& s : sources) s = s.substr(0, s.find(','));
  }
  ASSERT_EQ(sources.size(), 3u);
  std::sort(sources.begin(), sources.end());
  const std::string faulty = sources[1];
  const fs::path faults = dir_ / "faults.json";
  write_file(faults,
             json{{"migrationFailures",
                   {{{"vm", faulty}, {"step", "DiskTransfer"}, {"reason", "injected: VDDK read failed"}}}}}
                 .dump());
  Result f = kubectl({"create", "--raw", "/_lab/faults", "-f", faults.string()});
  ASSERT_EQ(f.exit_code, 0) << f.err;

  auto migration_plan = [&](const std::string& datastore) {
    return "apiVersion: bootstorm.io/v1\nkind: MigrationPlan\nname: fault-test\n"
           "source: {endpoint: 'lab:" +
           state_.string() +
           "'}\n"
           "destination: {endpoint: 'lab:" +
           state_.string() +
           "', namespace: openshift-mtv}\n"
           "vms: {fromRun: '" +
           storm_runs[0].string() +
           "'}\n"
           "networkMap: [{source: VM Network, destination: {type: pod}}]\n"
           "storageMap: [{source: " +
           datastore +
           ", destination: {storageClass: lab-rbd}}]\n"
           "targetNamespace: migrated\ntimeout: 5m\n";
  };
  // A storage map naming a datastore the vCenter lacks: the Plan is not Ready and Forklift's validation
  // conditions are reported verbatim; nothing is migrated, and cleanup removes what the run created.
  const fs::path bad_plan = dir_ / "bad.yaml";
  write_file(bad_plan, migration_plan("no-such-datastore"));
  Result br = bootstorm({"migrate", bad_plan.string(), "--out", (dir_ / "bad").string()});
  EXPECT_EQ(br.exit_code, 1) << br.out << br.err;
  EXPECT_NE(br.err.find("is not Ready:"), std::string::npos) << br.err;
  EXPECT_NE(br.err.find("[Critical]"), std::string::npos) << br.err;
  auto bad_runs = subdirs(dir_ / "bad");
  ASSERT_EQ(bad_runs.size(), 1u);
  Result bc = bootstorm({"cleanup", bad_runs[0].string()}, std::chrono::seconds(120));
  EXPECT_EQ(bc.exit_code, 0) << bc.out << bc.err;
  const std::string bad_id =
      json::parse(read_file(bad_runs[0] / "migration.json"))["run"]["id"].get<std::string>();
  EXPECT_EQ(names_of("plans.forklift.konveyor.io", "openshift-mtv", bad_id), std::vector<std::string>{});
  // The lab has neither namespace: the run created both, labelled them, and its cleanup removed them.
  EXPECT_EQ(namespaces_created_by(bad_runs[0]), (std::set<std::string>{"migrated", "openshift-mtv"}));
  EXPECT_TRUE(namespace_object("openshift-mtv").is_null()) << "the namespace the run created is left";
  EXPECT_TRUE(namespace_object("migrated").is_null()) << "the namespace the run created is left";
  EXPECT_NE(bc.out.find("deleted Namespace openshift-mtv"), std::string::npos) << bc.out;

  // A target namespace that exists before the run (someone else's): the run uses it, cleanup leaves it.
  Result made = kubectl({"create", "namespace", "migrated"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const json pre_existing = namespace_object("migrated");
  ASSERT_TRUE(pre_existing.is_object());

  const fs::path plan = dir_ / "migrate.yaml";
  write_file(plan, migration_plan("lab-ds01"));
  Result mr = bootstorm({"migrate", plan.string(), "--out", (dir_ / "mig").string()});
  EXPECT_EQ(mr.exit_code, 1) << mr.out << mr.err;  // one VM failed
  auto mig_runs = subdirs(dir_ / "mig");
  ASSERT_EQ(mig_runs.size(), 1u);
  json m = json::parse(read_file(mig_runs[0] / "migration.json"));
  const std::string run_id = m["run"]["id"].get<std::string>();
  EXPECT_EQ(m["summary"]["vms"], 3);
  EXPECT_EQ(m["summary"]["succeeded"], 2);
  EXPECT_EQ(m["summary"]["failed"], 1);
  for (const auto& v : m["vms"]) {
    if (v["vm"] == faulty) {
      EXPECT_EQ(v["status"], "failed");
      EXPECT_EQ(v["failedStep"], "DiskTransfer");
      EXPECT_NE(v["reason"].get<std::string>().find("injected: VDDK read failed"), std::string::npos)
          << v.dump();
    } else {
      EXPECT_EQ(v["status"], "succeeded") << v.dump();
    }
  }
  const std::string md = read_file(mig_runs[0] / "migration.md");
  EXPECT_NE(md.find("**" + faulty + "** failed in step **DiskTransfer**: injected: VDDK read failed"),
            std::string::npos)
      << md;
  EXPECT_NE(mr.out.find(faulty + " failed in DiskTransfer"), std::string::npos) << mr.out;

  // What the run left on the cluster, seen by kubectl: the two migrated VMs and the Forklift objects.
  auto migrated = names_of("virtualmachines.kubevirt.io", "migrated", run_id);
  EXPECT_EQ(migrated.size(), 2u);
  EXPECT_FALSE(names_of("plans.forklift.konveyor.io", "openshift-mtv", run_id).empty());
  EXPECT_EQ(namespaces_created_by(mig_runs[0]), std::set<std::string>{"openshift-mtv"});
  const json forklift_ns = namespace_object("openshift-mtv");
  ASSERT_TRUE(forklift_ns.is_object());
  EXPECT_EQ(forklift_ns["metadata"]["labels"].value("bootstorm.io/run", ""), run_id) << forklift_ns.dump();

  Result cr = bootstorm({"cleanup", mig_runs[0].string()}, std::chrono::seconds(300));
  EXPECT_EQ(cr.exit_code, 0) << cr.out << cr.err;
  for (const char* kind :
       {"migrations.forklift.konveyor.io", "plans.forklift.konveyor.io", "networkmaps.forklift.konveyor.io",
        "storagemaps.forklift.konveyor.io", "providers.forklift.konveyor.io", "secrets"})
    EXPECT_EQ(names_of(kind, "openshift-mtv", run_id), std::vector<std::string>{}) << kind;
  EXPECT_EQ(names_of("virtualmachines.kubevirt.io", "migrated", run_id), std::vector<std::string>{});
  // The namespace the run created is gone; the one that existed before is still there, untouched.
  EXPECT_TRUE(namespace_object("openshift-mtv").is_null()) << cr.out;
  const json survivor = namespace_object("migrated");
  ASSERT_TRUE(survivor.is_object()) << "cleanup deleted a namespace the run did not create\n" << cr.out;
  EXPECT_EQ(survivor["metadata"]["uid"], pre_existing["metadata"]["uid"]);
  EXPECT_FALSE(survivor["metadata"].contains("deletionTimestamp")) << survivor.dump();
  EXPECT_EQ(cr.out.find("Namespace migrated"), std::string::npos) << cr.out;
  // The source VMs are still on the vCenter.
  std::string query = "/api/vcenter/vm?";
  for (const auto& s : sources) query += "names=" + s + "&";
  json listed = vcenter_get(query);
  ASSERT_TRUE(listed.is_array()) << listed.dump();
  EXPECT_EQ(listed.size(), 3u) << listed.dump();
  // Cleanup is idempotent.
  Result again = bootstorm({"cleanup", mig_runs[0].string()}, std::chrono::seconds(120));
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("deleted 0 objects"), std::string::npos) << again.out;
}

}  // namespace
