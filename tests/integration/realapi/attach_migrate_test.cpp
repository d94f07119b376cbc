// `bootstorm migrate` into a real kube-apiserver, with the lab attached as the cluster's KubeVirt, CDI and
// Forklift (MTV) controllers: Forklift's CRs as their real CRD schemas accept them, the Role rbac.yaml gives
// bootstorm's service account in openshift-mtv, and the source the attached lab's own vCenter.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/lab_attach_fixture.hpp"

namespace bootstorm::test_support {
namespace {

using json = nlohmann::json;
using std::chrono::steady_clock;

// Three desktops cloned on the lab's vCenter (a vSphere storm that keeps them) are migrated cold into the
// namespace "migrated" through the real server, as rbac.yaml's service account: every VM succeeds, the
// Forklift Plan and Migration on the server carry the controller's conditions, and the migrated
// VirtualMachines are there, labelled with the run. `bootstorm cleanup` then takes the run's Forklift
// objects, the migrated VMs and the namespace it created off the server, and leaves the source VMs on the
// vCenter.
TEST_F(LabAttachTest, MigratesVsphereDesktopsIntoTheRealServerAsTheServiceAccountAndCleansUp) {
  const std::string lab = "lab:" + (dir_ / "lab").string();
  const fs::path storm_plan = dir_ / "sources.yaml";
  PlanYaml{.name = "sources",
           .platform = {.kind = "vsphere", .endpoint = lab},
           .golden = "{vm: tiny-golden, clone: linked}",
           .scenarios = {{"desktops", {{"host-01", 3}}}},
           .storm = "{mode: simultaneous, timeout: 2m}",
           .ready = "{signal: guest_agent}",
           .cleanup = "never",
           .output = (dir_ / "storms").string()}
      .write(storm_plan);
  CliRun storm = bootstorm({"run", storm_plan.string(), "--yes"});
  ASSERT_EQ(storm.exit_code, 0) << storm.out << storm.err;
  const fs::path storm_run = run_dir_in(dir_ / "storms");
  ASSERT_FALSE(storm_run.empty());

  const fs::path plan = dir_ / "migrate.yaml";
  write_file(plan,
             "apiVersion: bootstorm.io/v1\nkind: MigrationPlan\nname: into-realapi\n"
             "source: {endpoint: '" +
                 lab +
                 "'}\n"
                 "destination: {endpoint: kubeconfig, credentials: {kubeconfig: '" +
                 api_->kubeconfig("bootstorm").string() +
                 "'}, namespace: openshift-mtv}\n"
                 "vms: {fromRun: '" +
                 storm_run.string() +
                 "'}\n"
                 "networkMap: [{source: VM Network, destination: {type: pod}}]\n"
                 "storageMap: [{source: lab-ds01, destination: {storageClass: lab-rbd}}]\n"
                 "targetNamespace: migrated\ntimeout: 5m\n");
  const fs::path out = dir_ / "migrations";
  CliRun migrated = bootstorm({"migrate", plan.string(), "--out", out.string()}, std::chrono::seconds(360));
  ASSERT_EQ(migrated.exit_code, 0) << migrated.out << migrated.err;
  EXPECT_EQ(migrated.err.find("warning"), std::string::npos) << migrated.err;
  const fs::path run = run_dir_in(out);
  ASSERT_FALSE(run.empty());
  const json report = json::parse(read_file(run / "migration.json"));
  const std::string run_id = report["run"]["id"];
  EXPECT_EQ(report["summary"]["vms"], 3) << report["summary"].dump();
  EXPECT_EQ(report["summary"]["succeeded"], 3) << report["summary"].dump();

  // On the server: the Plan and the Migration with the controller's conditions, and the migrated VMs.
  const auto labelled = [&](const std::string& kind, const std::string& ns) {
    return kube_json("admin", {"get", kind, "-n", ns, "-l", "bootstorm.io/run=" + run_id})["items"];
  };
  const auto has_condition = [](const json& object, const std::string& type) {
    for (const auto& c : object.value("/status/conditions"_json_pointer, json::array()))
      if (c.value("type", "") == type && c.value("status", "") == "True") return true;
    return false;
  };
  const json plans = labelled("plans.forklift.konveyor.io", "openshift-mtv");
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_TRUE(has_condition(plans[0], "Succeeded")) << plans[0]["status"].dump();
  const json migrations = labelled("migrations.forklift.konveyor.io", "openshift-mtv");
  ASSERT_EQ(migrations.size(), 1u);
  EXPECT_TRUE(has_condition(migrations[0], "Succeeded")) << migrations[0]["status"].dump();
  EXPECT_EQ(labelled("virtualmachines.kubevirt.io", "migrated").size(), 3u);

  CliRun cleaned = bootstorm({"cleanup", run.string()}, std::chrono::seconds(240));
  ASSERT_EQ(cleaned.exit_code, 0) << cleaned.out << cleaned.err;
  json left;
  for (const auto until = steady_clock::now() + std::chrono::seconds(60); steady_clock::now() < until;) {
    left = json::array();
    for (const char* kind :
         {"migrations.forklift.konveyor.io", "plans.forklift.konveyor.io", "networkmaps.forklift.konveyor.io",
          "storagemaps.forklift.konveyor.io", "providers.forklift.konveyor.io", "secrets"})
      for (const auto& item : labelled(kind, "openshift-mtv")) left.push_back(item["metadata"]["name"]);
    if (left.empty() && server_object({"namespace", "migrated"}).is_null()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_TRUE(left.empty()) << left.dump();
  EXPECT_TRUE(server_object({"namespace", "migrated"}).is_null()) << "the namespace the run created is left";
  // The sources stay on the vCenter: `cleanup` of their storm still finds all three to delete.
  CliRun sources = bootstorm({"cleanup", storm_run.string()}, std::chrono::seconds(120));
  EXPECT_EQ(sources.exit_code, 0) << sources.out << sources.err;
  EXPECT_NE(sources.out.find("deleted 3 VMs (3 from the journal"), std::string::npos) << sources.out;
}

}  // namespace
}  // namespace bootstorm::test_support
