// Valid plans: the example plans load cleanly and map to the expected model; defaults, durations, JSON.
#include <gtest/gtest.h>

#include "orchestrator/plan/plan.hpp"
#include "providers/kubevirt/settings.hpp"
#include "providers/vsphere/settings.hpp"
#include "tests/unit/orchestrator/plan/plan_test_util.hpp"

namespace bootstorm::plan {
namespace {

using namespace std::chrono_literals;
using testing::example_plans_dir;
using testing::plan_files;
using testing::valid_plans_dir;

const vsphere::Settings& vsphere_of(const StormPlan& plan) {
  return vsphere::settings_of(plan.platform.settings);
}

const kubevirt::Settings& kubevirt_of(const StormPlan& plan) {
  return kubevirt::settings_of(plan.platform.settings);
}

StormPlan load_ok(const std::filesystem::path& path) {
  LoadResult result = load_plan_file(path.string());
  for (const auto& d : result.diagnostics) ADD_FAILURE() << d.to_string();
  if (!result.plan) throw std::runtime_error("plan did not load: " + path.string());
  return *result.plan;
}

StormPlan load_text_ok(const std::string& text) {
  LoadResult result = load_plan_text(text, "inline.yaml");
  for (const auto& d : result.diagnostics) ADD_FAILURE() << d.to_string();
  if (!result.plan) throw std::runtime_error("inline plan did not load");
  return *result.plan;
}

std::vector<Diagnostic> diagnostics_of(const std::string& text) {
  return load_plan_text(text, "inline.yaml").diagnostics;
}

const char* kMinimalHeader =
    "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: t\nplatform: {kind: vsphere}\ngolden: {vm: g}\n"
    "scenarios: [{name: s, placement: [{host: h, vms: 2}]}]\n";

TEST(ExamplePlans, EveryPlanInPlansDirLoadsWithoutDiagnostics) {
  for (const auto& path : plan_files(example_plans_dir(), 2)) {
    LoadResult result = load_plan_file(path.string());
    EXPECT_TRUE(result.plan.has_value()) << path;
    for (const auto& d : result.diagnostics) ADD_FAILURE() << d.to_string();
  }
}

TEST(ExamplePlans, EveryTestDataValidPlanLoads) {
  for (const auto& path : plan_files(valid_plans_dir(), 3)) {
    LoadResult result = load_plan_file(path.string());
    EXPECT_TRUE(result.plan.has_value()) << path;
    for (const auto& d : result.diagnostics) ADD_FAILURE() << d.to_string();
  }
}

TEST(ExamplePlans, ConsolidationPlanMatchesTheDesign) {
  StormPlan p = load_ok(example_plans_dir() / "consolidation-4x16g-vs-1x64g.yaml");
  EXPECT_EQ(p.name, "consolidation-4x16g-vs-1x64g");
  EXPECT_EQ(p.platform.kind, "vsphere");
  EXPECT_EQ(p.platform.endpoint, "embedded");
  EXPECT_EQ(p.platform.lab, "tolly-2024");
  EXPECT_EQ(p.platform.credentials.username_env, "VSPHERE_USER");
  EXPECT_EQ(p.platform.credentials.password_env, "VSPHERE_PASSWORD");
  EXPECT_EQ(vsphere_of(p).vm, "win10-golden");
  EXPECT_EQ(p.platform.settings.clone_kind(), "linked");
  ASSERT_EQ(p.scenarios.size(), 2u);
  EXPECT_EQ(p.scenarios[0].name, "4x R740 16GFC");
  ASSERT_EQ(p.scenarios[0].placement.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(p.scenarios[0].placement[i].host, "r740-0" + std::to_string(i + 1));
    EXPECT_EQ(p.scenarios[0].placement[i].vms, 6);
  }
  EXPECT_EQ(p.scenarios[1].name, "1x R7625 64GFC");
  ASSERT_EQ(p.scenarios[1].placement.size(), 1u);
  EXPECT_EQ(p.scenarios[1].placement[0].host, "r7625-01");
  EXPECT_EQ(p.scenarios[1].placement[0].vms, 24);
  EXPECT_EQ(p.scenarios[0].total_vms(), 24);
  EXPECT_EQ(p.total_vms(), 48);
  EXPECT_EQ(p.storm.mode, "simultaneous");
  EXPECT_EQ(p.storm.timeout, 10min);
  EXPECT_EQ(p.ready.signal, "guest_agent");
  EXPECT_EQ(p.repeat, 1);
  ASSERT_EQ(p.slo.size(), 1u);
  EXPECT_EQ(p.slo[0].milestone, "ready");
  EXPECT_EQ(p.slo[0].stat, "p95");
  EXPECT_DOUBLE_EQ(p.slo[0].max, 60.0);
  EXPECT_FALSE(p.slo[0].is_min);
  EXPECT_EQ(p.cleanup, "always");
  EXPECT_EQ(p.output, "runs");
}

TEST(ExamplePlans, KubevirtDensityPlan) {
  StormPlan p = load_ok(example_plans_dir() / "kubevirt-density.yaml");
  EXPECT_EQ(p.platform.kind, "kubevirt");
  EXPECT_EQ(p.platform.lab, "small");
  EXPECT_EQ(kubevirt_of(p).datasource_name, "fedora-golden");
  EXPECT_EQ(kubevirt_of(p).datasource_namespace, "golden");
  EXPECT_EQ(p.platform.settings.clone_kind(), "auto");
  EXPECT_EQ(kubevirt_of(p).namespace_, "bootstorm-density");
  ASSERT_EQ(p.scenarios.size(), 2u);
  EXPECT_EQ(p.scenarios[0].total_vms(), 30);
  EXPECT_EQ(p.scenarios[1].total_vms(), 30);
  EXPECT_EQ(p.ready.signal, "guest_agent");
}

TEST(Defaults, MinimalVspherePlanGetsEveryDefault) {
  StormPlan p = load_ok(valid_plans_dir() / "minimal-vsphere.yaml");
  EXPECT_EQ(p.api_version, "bootstorm.io/v1");
  EXPECT_EQ(p.kind, "StormPlan");
  EXPECT_EQ(p.platform.endpoint, "embedded");
  EXPECT_EQ(p.platform.lab, "");
  EXPECT_DOUBLE_EQ(p.platform.api_budget.requests_per_second, 50);
  EXPECT_EQ(p.platform.api_budget.max_concurrent, 64);
  EXPECT_FALSE(p.platform.tls.insecure_skip_verify);
  EXPECT_EQ(p.platform.settings.clone_kind(), "linked");
  EXPECT_EQ(p.storm.mode, "simultaneous");
  EXPECT_EQ(p.storm.timeout, 10min);
  EXPECT_EQ(p.storm.settle, 0ms);
  EXPECT_EQ(p.ready.signal, "guest_agent");
  EXPECT_FALSE(p.ready.beacon.enabled);
  EXPECT_EQ(p.ready.port, 0);
  EXPECT_EQ(p.repeat, 1);
  EXPECT_TRUE(p.slo.empty());
  EXPECT_EQ(p.cleanup, "always");
  EXPECT_EQ(p.output, "runs");
  EXPECT_EQ(p.source_path, (valid_plans_dir() / "minimal-vsphere.yaml").string());
}

TEST(Defaults, KubevirtCloneNamespaceAndDataSourceNamespace) {
  StormPlan p = load_text_ok(
      "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: kv\nplatform: {kind: kubevirt}\n"
      "namespace: storm-ns\ngolden: {dataSource: {name: img}}\n"
      "scenarios: [{name: s, placement: [{host: worker-0, vms: 1}]}]\n");
  EXPECT_EQ(p.platform.settings.clone_kind(), "auto");
  EXPECT_EQ(kubevirt_of(p).namespace_, "storm-ns");
  EXPECT_EQ(kubevirt_of(p).datasource_namespace, "storm-ns");

  StormPlan q = load_text_ok(
      "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: kv\nplatform: {kind: kubevirt}\n"
      "golden: {dataSource: {name: img}}\nscenarios: [{name: s, placement: [{host: worker-0, vms: 1}]}]\n");
  EXPECT_EQ(kubevirt_of(q).namespace_, "bootstorm");
  EXPECT_EQ(kubevirt_of(q).datasource_namespace, "bootstorm");
}

TEST(Defaults, TelemetryIsAutoAndAKubevirtPlanNamesItsPrometheusAndRoundTrips) {
  StormPlan p = load_text_ok(std::string(kMinimalHeader));
  EXPECT_EQ(p.telemetry.source, "auto");
  EXPECT_EQ(p.telemetry.interval.count(), 0);
  StormPlan q = load_text_ok(
      "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: kv\nplatform: {kind: kubevirt}\n"
      "golden: {dataSource: {name: img}}\nscenarios: [{name: s, placement: [{host: worker-0, vms: 1}]}]\n"
      "telemetry: {source: prometheus, interval: 30s, endpoint: \"https://prom.example:9091\", "
      "tokenFile: /etc/token, caFile: /etc/ca.pem}\n");
  EXPECT_EQ(q.telemetry.source, "prometheus");
  EXPECT_EQ(q.telemetry.interval, std::chrono::seconds(30));
  EXPECT_EQ(q.telemetry.endpoint, "https://prom.example:9091");
  EXPECT_EQ(q.telemetry.token_file, "/etc/token");
  EXPECT_EQ(q.telemetry.ca_file, "/etc/ca.pem");
  StormPlan again = load_text_ok(to_yaml(q));
  again.source_path = q.source_path;
  EXPECT_EQ(again, q);
}

TEST(Defaults, ReadySignalIsBeaconWhenABeaconIsConfigured) {
  StormPlan p = load_text_ok(std::string(kMinimalHeader) + "ready: {beacon: {listen: \"0.0.0.0:8088\"}}\n");
  EXPECT_EQ(p.ready.signal, "beacon");
  EXPECT_TRUE(p.ready.beacon.enabled);
  EXPECT_EQ(p.ready.beacon.listen, "0.0.0.0:8088");

  StormPlan q = load_text_ok(std::string(kMinimalHeader) + "ready: {port: 22}\n");
  EXPECT_EQ(q.ready.signal, "guest_agent");
  EXPECT_EQ(q.ready.port, 22);

  StormPlan r = load_text_ok(std::string(kMinimalHeader) + "ready: {signal: running, beacon: {}}\n");
  EXPECT_EQ(r.ready.signal, "running");
  EXPECT_EQ(r.ready.beacon.listen, "127.0.0.1:0");
}

TEST(Fields, EverythingSetMapsToTheModel) {
  StormPlan p = load_ok(valid_plans_dir() / "everything-vsphere.yaml");
  EXPECT_EQ(p.name, "everything_v1.2");
  EXPECT_EQ(p.platform.endpoint, "https://vcenter.example.com:8443");
  EXPECT_EQ(p.platform.credentials.file, "/etc/bootstorm/vcenter.yaml");
  EXPECT_EQ(p.platform.tls.ca_file, "/etc/bootstorm/ca.pem");
  EXPECT_TRUE(p.platform.tls.insecure_skip_verify);
  EXPECT_DOUBLE_EQ(p.platform.api_budget.requests_per_second, 12.5);
  EXPECT_EQ(p.platform.api_budget.max_concurrent, 8);
  EXPECT_EQ(p.platform.settings.clone_kind(), "full");
  EXPECT_EQ(vsphere_of(p).datastore, "ds-fc-01");
  EXPECT_EQ(p.scenarios[0].name, "ramp: 4 hosts");
  EXPECT_EQ(p.total_vms(), 15);
  EXPECT_EQ(p.storm.mode, "ramp");
  EXPECT_DOUBLE_EQ(p.storm.ramp_per_second, 2.5);
  EXPECT_EQ(p.storm.timeout, 90min);
  EXPECT_EQ(p.storm.settle, 1500ms);
  EXPECT_EQ(p.storm.start_concurrency, 16);
  EXPECT_EQ(p.ready.signal, "beacon");
  EXPECT_EQ(p.ready.port, 3389);
  EXPECT_EQ(p.ready.beacon.advertise_url, "http://10.0.0.5:8088");
  EXPECT_EQ(p.repeat, 3);
  ASSERT_EQ(p.slo.size(), 4u);
  EXPECT_EQ(p.slo[1].milestone, "guest_agent");
  EXPECT_DOUBLE_EQ(p.slo[1].max, 2.5);
  EXPECT_EQ(p.slo[2].milestone, "ready");
  EXPECT_EQ(p.slo[2].stat, "ready_fraction");
  EXPECT_TRUE(p.slo[2].is_min);
  EXPECT_DOUBLE_EQ(p.slo[2].max, 0.95);
  EXPECT_DOUBLE_EQ(p.slo[3].max, 300.0);
  EXPECT_EQ(p.cleanup, "on-success");
  EXPECT_EQ(p.output, "/var/lib/bootstorm/runs");
}

TEST(Durations, PlanDurationsParse) {
  struct Case {
    const char* text;
    std::chrono::milliseconds expected;
  };
  for (const Case& c : {Case{"10m", 10min}, Case{"30s", 30s}, Case{"1500ms", 1500ms}, Case{"1h30m", 90min},
                        Case{"2.5s", 2500ms}}) {
    StormPlan p = load_text_ok(std::string(kMinimalHeader) + "storm: {timeout: \"" + c.text + "\"}\n");
    EXPECT_EQ(p.storm.timeout, c.expected) << c.text;
  }
}

TEST(Durations, InvalidDurationsAreReportedAtTheValue) {
  for (const char* text : {"ten minutes", "10", "10 m", "-5s", "1d", "", "m"}) {
    auto diags = diagnostics_of(std::string(kMinimalHeader) + "storm: {settle: \"" + text + "\"}\n");
    ASSERT_EQ(diags.size(), 1u) << text;
    EXPECT_EQ(diags[0].line, 7) << text;
    EXPECT_EQ(diags[0].column, 17) << text;
    EXPECT_NE(diags[0].message.find("storm.settle is not a valid duration"), std::string::npos)
        << diags[0].message;
  }
}

TEST(Durations, SubMillisecondPrecisionIsRefused) {
  auto diags = diagnostics_of(std::string(kMinimalHeader) + "storm: {settle: 1500us}\n");
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].to_string(),
            "inline.yaml:7:17: storm.settle must be a whole number of milliseconds, got '1500us'");
}

TEST(Durations, ZeroTimeoutIsRefusedZeroSettleAccepted) {
  auto diags = diagnostics_of(std::string(kMinimalHeader) + "storm: {timeout: 0s, settle: 0s}\n");
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].to_string(), "inline.yaml:7:18: storm.timeout must be greater than 0s");
}

TEST(Json, JsonPlanLoadsLikeTheEquivalentYaml) {
  StormPlan json = load_ok(valid_plans_dir() / "kubevirt-pvc.json");
  EXPECT_EQ(json.platform.kind, "kubevirt");
  EXPECT_EQ(json.platform.endpoint, "kubeconfig");
  EXPECT_EQ(json.platform.credentials.context, "lab");
  EXPECT_EQ(json.platform.api_budget.max_concurrent, 4000);
  EXPECT_EQ(json.platform.api_budget.starts_per_connection, 8);
  EXPECT_EQ(kubevirt_of(json).pvc, "golden/fedora-root");
  EXPECT_EQ(json.platform.settings.clone_kind(), "csi-clone");
  EXPECT_EQ(json.ready.signal, "scheduled");
  EXPECT_EQ(json.repeat, 2);
  EXPECT_EQ(json.storm.timeout, 15min);
  EXPECT_EQ(json.cleanup, "never");

  StormPlan yaml = load_text_ok(to_yaml(json));
  yaml.source_path = json.source_path;
  EXPECT_EQ(yaml, json);
}

TEST(Json, DiagnosticsCarryJsonLineAndColumn) {
  std::string text =
      "{\n"
      "  \"apiVersion\": \"bootstorm.io/v1\", \"kind\": \"StormPlan\", \"name\": \"j\",\n"
      "  \"platform\": {\"kind\": \"vsphere\"},\n"
      "  \"golden\": {\"vm\": \"g\", \"clonez\": \"full\"},\n"
      "  \"scenarios\": [{\"name\": \"s\", \"placement\": [{\"host\": \"h\", \"vms\": 0}]}]\n"
      "}\n";
  auto diags = diagnostics_of(text);
  ASSERT_EQ(diags.size(), 2u);
  EXPECT_EQ(diags[0].to_string(),
            "inline.yaml:4:25: unknown key 'clonez' in golden (allowed for vsphere: vm, clone, datastore, "
            "snapshot)");
  EXPECT_EQ(diags[1].to_string(),
            "inline.yaml:5:66: scenarios[0].placement[0].vms must be greater than 0, got 0");
}

TEST(Json, JsonSyntaxErrorIsReported) {
  auto diags = diagnostics_of("{\"apiVersion\": \"bootstorm.io/v1\",\n \"kind\": \n");
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_GT(diags[0].line, 0);
  EXPECT_NE(diags[0].message.find("syntax error"), std::string::npos) << diags[0].message;
}

TEST(Json, TabIndentedJsonLoads) {
  std::string text =
      "{\n\t\"apiVersion\": \"bootstorm.io/v1\",\n\t\"kind\": \"StormPlan\",\n\t\"name\": \"tabs\",\n"
      "\t\"platform\": {\"kind\": \"vsphere\"},\n\t\"golden\": {\"vm\": \"g\"},\n"
      "\t\"scenarios\": [\n\t\t{\"name\": \"s\", \"placement\": [{\"host\": \"h\", \"vms\": 0}]}\n\t]\n}\n";
  auto diags = diagnostics_of(text);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].to_string(),
            "inline.yaml:8:52: scenarios[0].placement[0].vms must be greater than 0, got 0");
}

TEST(Yaml, CrlfLineEndingsKeepLineNumbers) {
  std::string text = std::string(kMinimalHeader) + "repeat: 0\n";
  std::string crlf;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  auto diags = diagnostics_of(crlf);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].to_string(), "inline.yaml:7:9: repeat must be greater than 0, got 0");
}

TEST(Validation, CrossFieldRules) {
  auto check = [](const std::string& tail, const std::string& expected) {
    auto diags = diagnostics_of(std::string(kMinimalHeader) + tail);
    ASSERT_EQ(diags.size(), 1u) << tail;
    EXPECT_EQ(diags[0].to_string(), expected);
  };
  check("storm: {perSecond: 5}\n", "inline.yaml:7:9: storm.perSecond applies only to storm.mode ramp");
  check("storm: {mode: ramp, perSecond: 0}\n",
        "inline.yaml:7:32: storm.perSecond must be greater than 0, got 0");
  check("ready: {port: 70000}\n", "inline.yaml:7:15: ready.port must be between 1 and 65535, got 70000");
  check("ready: {beacon: {listen: nowhere}}\n",
        "inline.yaml:7:26: ready.beacon.listen must be host:port (port 0 picks a free one), got 'nowhere'");
  check("slo: [{stat: p95}]\n", "inline.yaml:7:7: missing required key 'max' in slo[0] (e.g. max: 60s)");
  check("slo: [{stat: ready_fraction, min: 1.5}]\n",
        "inline.yaml:7:35: slo[0].min must be a fraction between 0 and 1, got 1.5");
  check("slo: [{stat: p50, min: 0.5}]\n",
        "inline.yaml:7:19: slo[0]: stat p50 is bounded above: use max: <duration>");
  check("slo: [{milestone: booted, stat: p50, max: 1m}]\n",
        "inline.yaml:7:19: slo[0].milestone must be one of ready, start_requested, start_acknowledged, "
        "scheduled, "
        "running, guest_agent, ip_assigned, port_open, beacon, got 'booted'");
  check("output: \"\"\n", "inline.yaml:7:9: output must name a directory, got an empty string");
}

TEST(Validation, AVsphereEndpointWithTheApisPathNamesTheAddressToGive) {
  for (const std::string endpoint : {"https://vc.example.com/sdk", "https://vc.example.com:8443/api/"}) {
    auto diags = diagnostics_of(
        "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: t\n"
        "platform: {kind: vsphere, endpoint: \"" +
        endpoint +
        "\", credentials: {usernameEnv: U, passwordEnv: P}}\ngolden: {vm: g}\n"
        "scenarios: [{name: s, placement: [{host: h, vms: 2}]}]\n");
    ASSERT_EQ(diags.size(), 1u) << endpoint;
    const std::string base =
        endpoint.find("8443") != std::string::npos ? "https://vc.example.com:8443" : "https://vc.example.com";
    const std::string path = endpoint.find("/sdk") != std::string::npos ? "/sdk" : "/api";
    EXPECT_EQ(diags[0].to_string(), "inline.yaml:4:37: platform.endpoint " + endpoint + " ends with " + path +
                                        ": give vCenter's address without it (" + base +
                                        "); bootstorm adds the API's path itself");
  }
  // A path that is not an API's is the user's business (a reverse proxy's prefix).
  EXPECT_TRUE(diagnostics_of("apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: t\n"
                             "platform: {kind: vsphere, endpoint: \"https://proxy.example.com/vcenter\", "
                             "credentials: {usernameEnv: U, passwordEnv: P}}\ngolden: {vm: g}\n"
                             "scenarios: [{name: s, placement: [{host: h, vms: 2}]}]\n")
                  .empty());
}

TEST(Validation, CredentialsRules) {
  auto diags = diagnostics_of(
      "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: t\n"
      "platform: {kind: vsphere, endpoint: \"https://vc.example.com\"}\ngolden: {vm: g}\n"
      "scenarios: [{name: s, placement: [{host: h, vms: 2}]}]\n");
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].to_string(),
            "inline.yaml:4:37: endpoint https://vc.example.com needs platform.credentials (usernameEnv and "
            "passwordEnv, or file)");

  diags = diagnostics_of(
      "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: t\n"
      "platform: {kind: vsphere, credentials: {usernameEnv: VC_USER}}\ngolden: {vm: g}\n"
      "scenarios: [{name: s, placement: [{host: h, vms: 2}]}]\n");
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].to_string(), "inline.yaml:4:41: platform.credentials.usernameEnv needs passwordEnv too");
}

TEST(Validation, UnknownPlatformKindStillChecksTheRest) {
  auto diags = diagnostics_of(
      "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: t\nplatform: {kind: xen}\n"
      "golden: {vm: g, clone: weird}\nscenarios: [{name: s, placement: [{host: h, vms: -1}]}]\n");
  ASSERT_EQ(diags.size(), 2u);
  EXPECT_EQ(diags[0].line, 4);
  EXPECT_EQ(diags[1].to_string(),
            "inline.yaml:6:50: scenarios[0].placement[0].vms must be greater than 0, got -1");
}

}  // namespace
}  // namespace bootstorm::plan
