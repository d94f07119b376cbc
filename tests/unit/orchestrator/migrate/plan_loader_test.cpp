// MigrationPlan loading: the example plan, defaults, and invalid plans with their exact file:line:col
// messages.
#include <gtest/gtest.h>

#include "orchestrator/migrate/migration_plan.hpp"

namespace bootstorm::migrate {
namespace {

const char* kValid = R"(apiVersion: bootstorm.io/v1
kind: MigrationPlan
name: move-desktops
source:
  endpoint: https://vcenter.example.com
  credentials: {usernameEnv: VSPHERE_USER, passwordEnv: VSPHERE_PASSWORD}
destination:
  endpoint: kubeconfig
  credentials: {kubeconfig: /tmp/kc, context: prod}
vms: [desk-01, desk-02]
networkMap:
  - {source: VM Network, destination: {type: multus, name: vlan10, namespace: nets}}
storageMap:
  - {source: ds01, destination: {storageClass: rbd, accessMode: ReadWriteMany, volumeMode: Block}}
targetNamespace: desktops
warm: true
timeout: 90m
)";

std::vector<std::string> messages(const MigrationLoadResult& r) {
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) out.push_back(d.to_string());
  return out;
}

// Replaces the first occurrence of `from` in the valid plan.
std::string with(const std::string& from, const std::string& to) {
  std::string text = kValid;
  auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

TEST(MigrationPlanLoader, LoadsAValidPlanWithEveryField) {
  auto r = load_migration_plan_text(kValid, "m.yaml");
  ASSERT_TRUE(r.plan) << ::testing::PrintToString(messages(r));
  const MigrationPlan& p = *r.plan;
  EXPECT_EQ(p.name, "move-desktops");
  EXPECT_EQ(p.source.endpoint, "https://vcenter.example.com");
  EXPECT_EQ(p.source.credentials.username_env, "VSPHERE_USER");
  EXPECT_EQ(p.destination.endpoint, "kubeconfig");
  EXPECT_EQ(p.destination.credentials.kubeconfig, "/tmp/kc");
  EXPECT_EQ(p.destination.credentials.context, "prod");
  EXPECT_EQ(p.destination.namespace_, "openshift-mtv");  // default
  EXPECT_EQ(p.vms.names, (std::vector<std::string>{"desk-01", "desk-02"}));
  ASSERT_EQ(p.network_map.size(), 1u);
  EXPECT_EQ(p.network_map[0].source, "VM Network");
  EXPECT_EQ(p.network_map[0].type, "multus");
  EXPECT_EQ(p.network_map[0].name, "vlan10");
  EXPECT_EQ(p.network_map[0].namespace_, "nets");
  ASSERT_EQ(p.storage_map.size(), 1u);
  EXPECT_EQ(p.storage_map[0].storage_class, "rbd");
  EXPECT_EQ(p.storage_map[0].access_mode, "ReadWriteMany");
  EXPECT_EQ(p.storage_map[0].volume_mode, "Block");
  EXPECT_EQ(p.target_namespace, "desktops");
  EXPECT_TRUE(p.warm);
  EXPECT_EQ(p.timeout, std::chrono::minutes(90));
  EXPECT_EQ(p.ready.signal, "guest_agent");  // default
}

TEST(MigrationPlanLoader, TheExamplePlanLoadsAndRoundTrips) {
  auto r = load_migration_plan_file(std::string(BOOTSTORM_SOURCE_DIR) +
                                    "/plans/migrate-vsphere-to-openshift.yaml");
  ASSERT_TRUE(r.plan) << ::testing::PrintToString(messages(r));
  const MigrationPlan& p = *r.plan;
  EXPECT_EQ(p.source.endpoint, "embedded");
  EXPECT_EQ(p.source.lab, "tolly-2024");
  ASSERT_TRUE(p.vms.from_storm);
  EXPECT_EQ(p.vms.from_storm->golden.vm, "win10-golden");
  ASSERT_EQ(p.vms.from_storm->placement.size(), 1u);
  EXPECT_EQ(p.vms.from_storm->placement[0].host, "r7625-01");
  EXPECT_GT(p.vms.from_storm->placement[0].vms, 1);
  // plan.yaml of the run directory reads back to the same plan.
  auto again = load_migration_plan_text(to_yaml(p), "plan.yaml");
  ASSERT_TRUE(again.plan) << ::testing::PrintToString(messages(again)) << to_yaml(p);
  MigrationPlan a = *again.plan;
  a.source_path = p.source_path;
  EXPECT_EQ(a, p);
}

TEST(MigrationPlanLoader, FromRunAndNamesForms) {
  auto r = load_migration_plan_text(with("vms: [desk-01, desk-02]", "vms: {fromRun: runs/x}"), "m.yaml");
  ASSERT_TRUE(r.plan);
  EXPECT_EQ(r.plan->vms.from_run, "runs/x");
  r = load_migration_plan_text(with("vms: [desk-01, desk-02]", "vms: {names: [a]}"), "m.yaml");
  ASSERT_TRUE(r.plan);
  EXPECT_EQ(r.plan->vms.names, std::vector<std::string>{"a"});
}

TEST(MigrationPlanLoader, IsMigrationPlanSniffsTheKind) {
  EXPECT_TRUE(is_migration_plan_text(kValid));
  EXPECT_FALSE(is_migration_plan_text("kind: StormPlan\n"));
  EXPECT_FALSE(is_migration_plan_text("{{{"));
}

struct InvalidCase {
  std::string from, to;
  std::vector<std::string> expected;
};

class InvalidPlans : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidPlans, ReportExactMessages) {
  const auto& c = GetParam();
  auto r = load_migration_plan_text(with(c.from, c.to), "m.yaml");
  EXPECT_FALSE(r.plan);
  EXPECT_EQ(messages(r), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    MigrationPlanLoader, InvalidPlans,
    ::testing::Values(
        InvalidCase{"kind: MigrationPlan",
                    "kind: StormPlan",
                    {"m.yaml:2:7: kind must be MigrationPlan, got 'StormPlan'"}},
        InvalidCase{
            "warm: true", "warm: yes please", {"m.yaml:16:7: warm must be true or false, got 'yes please'"}},
        InvalidCase{
            "targetNamespace: desktops",
            "targetNamespace: Desktops_1",
            {"m.yaml:15:18: targetNamespace must be a DNS label (a-z, 0-9, '-', at most 63 characters), got "
             "'Desktops_1'"}},
        InvalidCase{"targetNamespace: desktops\n",
                    "",
                    {"m.yaml:1:1: missing required key 'targetNamespace' in plan"}},
        InvalidCase{"vms: [desk-01, desk-02]",
                    "vms: [desk-01, desk-01]",
                    {"m.yaml:10:16: duplicate VM 'desk-01' in vms (first at line 10)"}},
        InvalidCase{"vms: [desk-01, desk-02]",
                    "vms: {fromRun: a, names: [b]}",
                    {"m.yaml:10:6: vms takes exactly one of names, fromRun, fromStorm"}},
        InvalidCase{"vms: [desk-01, desk-02]", "vms: []", {"m.yaml:10:6: vms must name at least one VM"}},
        InvalidCase{"type: multus, name: vlan10, namespace: nets",
                    "type: bridge",
                    {"m.yaml:12:46: networkMap[0].destination.type must be one of pod, multus, ignored, got "
                     "'bridge'"}},
        InvalidCase{"storageClass: rbd, ",
                    "",
                    {"m.yaml:14:33: missing required key 'storageClass' in storageMap[0].destination"}},
        InvalidCase{"accessMode: ReadWriteMany",
                    "accessMode: RWX",
                    {"m.yaml:14:65: storageMap[0].destination.accessMode must be one of ReadWriteOnce, "
                     "ReadWriteMany, "
                     "ReadOnlyMany, got 'RWX'"}},
        InvalidCase{"endpoint: kubeconfig",
                    "endpoint: https://api.example.com:6443",
                    {"m.yaml:8:13: destination.endpoint must be embedded, kubeconfig, in-cluster or "
                     "lab:<state-dir>, got "
                     "'https://api.example.com:6443'",
                     "m.yaml:9:16: destination.credentials applies only to endpoint kubeconfig"}},
        InvalidCase{
            "endpoint: kubeconfig",
            "endpoint: embedded",
            {"m.yaml:8:3: destination.endpoint embedded means the source's embedded lab, but source.endpoint "
             "is 'https://vcenter.example.com'",
             "m.yaml:9:16: destination.credentials applies only to endpoint kubeconfig"}},
        InvalidCase{"timeout: 90m",
                    "timeout: soon",
                    {"m.yaml:17:10: timeout is not a valid duration: 'soon' (write a number with a unit h, "
                     "m, s or ms, "
                     "e.g. 10m, 30s, 1500ms, 1h30m)"}},
        InvalidCase{"warm: true",
                    "warm: true\ncolor: blue",
                    {"m.yaml:17:1: unknown key 'color' in plan (allowed: apiVersion, kind, name, source, "
                     "destination, "
                     "vms, networkMap, storageMap, targetNamespace, warm, ready, storm, timeout, output)"}}));

TEST(MigrationPlanLoader, FromStormNeedsPositiveCountsAndAKnownCloneType) {
  auto r = load_migration_plan_text(
      with("vms: [desk-01, desk-02]",
           "vms:\n  fromStorm:\n    golden: {vm: g, clone: deep}\n    placement: [{host: h1, vms: 0}]"),
      "m.yaml");
  EXPECT_FALSE(r.plan);
  EXPECT_EQ(messages(r),
            (std::vector<std::string>{
                "m.yaml:12:28: vms.fromStorm.golden.clone must be one of full, linked, instant, got 'deep'",
                "m.yaml:13:33: vms.fromStorm.placement[0].vms must be greater than 0, got 0"}));
}

TEST(MigrationPlanLoader, EmptyAndSyntaxErrors) {
  auto r = load_migration_plan_text("", "e.yaml");
  EXPECT_EQ(
      messages(r),
      std::vector<std::string>{
          "e.yaml:1:1: the plan is empty (expected a MigrationPlan: apiVersion, kind, name, source, ...)"});
  r = load_migration_plan_text("a: [b\n", "s.yaml");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].file, "s.yaml");
  EXPECT_NE(r.diagnostics[0].message.find("syntax error"), std::string::npos);
  EXPECT_GT(r.diagnostics[0].line, 0);
}

}  // namespace
}  // namespace bootstorm::migrate
