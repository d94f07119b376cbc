// `bootstorm check` and `bootstorm run` against a real kube-apiserver (tests/support/realapi) with the
// cluster of data/cluster.yaml and no controller running: bootstorm's service account holds exactly
// deploy/kubernetes/rbac.yaml, RBAC decides every call, and admission (NamespaceLifecycle, ResourceQuota)
// refuses what a real cluster refuses. Each case ends before a VM would need a controller: what is checked is
// that bootstorm reads the real server's answers right and makes nothing when it must not.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/check_table.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/realapi_fixture.hpp"
#include "tests/support/run_files.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::check_line;
using bootstorm::test_support::CliRun;
using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::RealApiCliTest;
using nlohmann::json;

constexpr const char* kNamespace = "bootstorm-realapi";

class RealApi : public RealApiCliTest {
 protected:
  RealApi() : RealApiCliTest("realapi", {"tests/integration/realapi/data/cluster.yaml"}) {}

  // A KubeVirt plan for bootstorm's service account: `vms` clones of golden/fedora-golden on worker-0, in
  // `ns`.
  fs::path plan(const std::string& name, int vms, const std::string& ns = kNamespace) {
    const fs::path path = dir_ / (name + ".yaml");
    PlanYaml{
        .name = name,
        .platform = {.kind = "kubevirt",
                     .endpoint = "kubeconfig",
                     .extra = {"credentials: {kubeconfig: " + api_->kubeconfig("bootstorm").string() + "}"}},
        .golden = "{dataSource: {name: fedora-golden, namespace: golden}}",
        .ns = ns,
        .scenarios = {{"one", {{"worker-0", vms}}}},
        .storm = "{mode: simultaneous, timeout: 1m}",
        .ready = "{signal: guest_agent}",
        .output = (dir_ / "runs").string()}
        .write(path);
    return path;
  }

  // The run makes nothing: no VirtualMachine anywhere, and the namespace as it was (`existed`).
  void expect_nothing_made(bool namespace_existed) {
    EXPECT_TRUE(all_vms().empty()) << ::testing::PrintToString(all_vms());
    CliRun ns = kubectl("admin", {"get", "namespace", kNamespace});
    EXPECT_EQ(ns.exit_code == 0, namespace_existed) << ns.out << ns.err;
  }
};

TEST_F(RealApi, CheckPassesForTheLeastPrivilegeServiceAccount) {
  // The server is what it says: kube-apiserver, and the service account may not do what rbac.yaml leaves out.
  CliRun version = kubectl("bootstorm", {"version", "-o", "json"});
  ASSERT_EQ(version.exit_code, 0) << version.err;
  const std::string server_version = json::parse(version.out)["serverVersion"]["gitVersion"];
  EXPECT_EQ(server_version.rfind("v1.", 0), 0u) << server_version;
  CliRun forbidden = kubectl("bootstorm", {"auth", "can-i", "delete", "nodes"});
  EXPECT_EQ(forbidden.out.rfind("no", 0), 0u) << forbidden.out;

  auto r = bootstorm({"check", plan("least-privilege", 3).string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("UNKNOWN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Kubernetes " + server_version), std::string::npos) << r.out;
  EXPECT_EQ(check_line(r.out, "permissions").rfind("PASS", 0), 0u) << r.out;
  // Read from the KubeVirt CR through the real server's CRD (spec.configuration kept by its schema).
  EXPECT_NE(check_line(r.out, "launch pacing").find("virt-controller 200 QPS, burst 400"), std::string::npos)
      << r.out;
  expect_nothing_made(false);
}

TEST_F(RealApi, AVerbTakenFromTheRoleFailsCheckNamingItAndTheRunMakesNothing) {
  // The cluster admin takes `update` on virtualmachines/start out of rbac.yaml's ClusterRole.
  const json role = kube_json("admin", {"get", "clusterrole", "bootstorm"});
  int index = -1;
  for (std::size_t i = 0; i < role["rules"].size(); ++i)
    if (role["rules"][i]["apiGroups"][0] == "subresources.kubevirt.io") index = static_cast<int>(i);
  ASSERT_GE(index, 0) << role.dump();
  CliRun patched =
      kubectl("admin", {"patch", "clusterrole", "bootstorm", "--type=json", "-p",
                        "[{\"op\":\"remove\",\"path\":\"/rules/" + std::to_string(index) + "\"}]"});
  ASSERT_EQ(patched.exit_code, 0) << patched.err;

  const fs::path p = plan("no-start", 3);
  auto check = bootstorm({"check", p.string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  const std::string permissions = check_line(check.out, "permissions");
  EXPECT_EQ(permissions.rfind("FAIL", 0), 0u) << check.out;
  EXPECT_NE(permissions.find("may not update virtualmachines/start.subresources.kubevirt.io in " +
                             std::string(kNamespace)),
            std::string::npos)
      << check.out;

  auto run = bootstorm({"run", p.string()});
  EXPECT_NE(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE((run.out + run.err).find("virtualmachines/start"), std::string::npos) << run.out << run.err;
  expect_nothing_made(false);
}

TEST_F(RealApi, ANamespaceBeingDeletedIsRefusedBeforeAnyVm) {
  // A namespace that still holds an object with a finalizer stays Terminating after its deletion, as on a
  // cluster while something's controller has not let go (realapi runs the namespace controller: without the
  // finalizer the namespace would be gone at once). NamespaceLifecycle refuses every new object in it.
  ASSERT_EQ(kubectl("admin", {"create", "namespace", kNamespace}).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(
      admin_apply(std::string("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, namespace: ") +
                  kNamespace + ", finalizers: [example.com/held]}\n"));
  ASSERT_EQ(kubectl("admin", {"delete", "namespace", kNamespace, "--wait=false"}).exit_code, 0);
  EXPECT_EQ(kube_json("admin", {"get", "namespace", kNamespace})["status"]["phase"], "Terminating");

  const fs::path p = plan("terminating", 3);
  auto check = bootstorm({"check", p.string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  const std::string ns = check_line(check.out, "namespace");
  EXPECT_EQ(ns.rfind("FAIL", 0), 0u) << check.out;
  EXPECT_NE(ns.find("is being deleted"), std::string::npos) << check.out;

  auto run = bootstorm({"run", p.string()});
  EXPECT_NE(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("namespace " + std::string(kNamespace) + " is being deleted"), std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("RBAC"), std::string::npos) << "not a permission problem\n" << run.err;
  EXPECT_TRUE(all_vms().empty());
}

TEST_F(RealApi, AResourceQuotaTooSmallForTheStormIsRefusedBeforeAnyVm) {
  // A quota of 2 VMs, counted as the cluster's quota controller counts it (its status).
  ASSERT_EQ(kubectl("admin", {"create", "namespace", kNamespace}).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(admin_apply(std::string(R"(apiVersion: v1
kind: ResourceQuota
metadata: {name: desktops, namespace: )") +
                                      kNamespace + R"(}
spec: {hard: {count/virtualmachines.kubevirt.io: "2"}}
)"));
  CliRun counted = kubectl("admin", {"patch", "resourcequota", "desktops", "-n", kNamespace,
                                     "--subresource=status", "--type=merge", "-p",
                                     R"({"status":{"hard":{"count/virtualmachines.kubevirt.io":"2"},)"
                                     R"("used":{"count/virtualmachines.kubevirt.io":"0"}}})"});
  ASSERT_EQ(counted.exit_code, 0) << counted.err;

  const fs::path p = plan("quota", 3);
  auto check = bootstorm({"check", p.string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  const std::string quota = check_line(check.out, "resource quota");
  EXPECT_EQ(quota.rfind("FAIL", 0), 0u) << check.out;
  EXPECT_NE(quota.find("0 in use + 3 for the storm > 2 allowed"), std::string::npos) << check.out;

  auto run = bootstorm({"run", p.string()});
  EXPECT_NE(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("desktops"), std::string::npos) << run.err;
  expect_nothing_made(true);
}

TEST_F(RealApi, AFieldTheClustersKubeVirtLacksIsRefusedBeforeAnyVmNamingIt) {
  // A cluster whose KubeVirt predates a field bootstorm sets: its VirtualMachine schema lacks runStrategy.
  // Without strict validation kube-apiserver would drop the field with a warning and the VMs would start as
  // the schema's default has them, not as bootstorm asked.
  const json crd = kube_json("admin", {"get", "crd", "virtualmachines.kubevirt.io"});
  ASSERT_TRUE(
      crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"].contains(
          "runStrategy"));
  CliRun older = kubectl(
      "admin",
      {"patch", "crd", "virtualmachines.kubevirt.io", "--type=json", "-p",
       R"([{"op":"remove","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/runStrategy"}])"});
  ASSERT_EQ(older.exit_code, 0) << older.err;

  // The namespace exists: `check` has the server judge a VM (dry run) and names the field.
  ASSERT_EQ(kubectl("admin", {"create", "namespace", kNamespace}).exit_code, 0);
  const fs::path p = plan("older-kubevirt", 3);
  auto check = bootstorm({"check", p.string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  const std::string vm = check_line(check.out, "VM object");
  EXPECT_EQ(vm.rfind("FAIL", 0), 0u) << check.out;
  EXPECT_NE(vm.find(R"(unknown field "spec.runStrategy")"), std::string::npos) << check.out;
  auto run = bootstorm({"run", p.string()});
  EXPECT_NE(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find(R"(unknown field "spec.runStrategy")"), std::string::npos) << run.err;
  EXPECT_TRUE(all_vms().empty()) << ::testing::PrintToString(all_vms());

  // A new namespace: the run creates it, has the server judge one VM there, and creates none.
  ASSERT_EQ(kubectl("admin", {"delete", "namespace", kNamespace, "--wait=false"}).exit_code, 0);
  auto fresh_run =
      bootstorm({"run", plan("older-kubevirt-new-namespace", 3, "bootstorm-realapi-new").string()});
  EXPECT_NE(fresh_run.exit_code, 0) << fresh_run.out << fresh_run.err;
  EXPECT_NE(fresh_run.err.find(R"(unknown field "spec.runStrategy")"), std::string::npos) << fresh_run.err;
  // One error for the three clones, said once in full.
  EXPECT_NE(fresh_run.err.find("2 more clones failed the same way"), std::string::npos) << fresh_run.err;
  EXPECT_TRUE(all_vms().empty()) << ::testing::PrintToString(all_vms());
}

}  // namespace
