// to_yaml() writes the resolved plan; loading it again must give the same plan (the run directory's
// plan.yaml is reloaded by `bootstorm report` and `cleanup`).
#include <gtest/gtest.h>

#include "orchestrator/plan/plan.hpp"
#include "providers/vsphere/settings.hpp"
#include "tests/unit/orchestrator/plan/plan_test_util.hpp"

namespace bootstorm::plan {
namespace {

using testing::example_plans_dir;
using testing::plan_files;
using testing::valid_plans_dir;

void expect_round_trip(const std::filesystem::path& path) {
  LoadResult first = load_plan_file(path.string());
  ASSERT_TRUE(first.plan.has_value()) << path;
  std::string yaml = to_yaml(*first.plan);
  LoadResult second = load_plan_text(yaml, path.string());
  for (const auto& d : second.diagnostics) ADD_FAILURE() << d.to_string() << "\n" << yaml;
  ASSERT_TRUE(second.plan.has_value()) << path;
  EXPECT_EQ(*second.plan, *first.plan) << path << "\n" << yaml;
  // Writing is deterministic: the second rendering is byte-identical to the first.
  EXPECT_EQ(to_yaml(*second.plan), yaml);
}

TEST(RoundTrip, ExamplePlans) {
  for (const auto& path : plan_files(example_plans_dir(), 2)) expect_round_trip(path);
}

TEST(RoundTrip, TestDataValidPlans) {
  for (const auto& path : plan_files(valid_plans_dir(), 3)) expect_round_trip(path);
}

TEST(RoundTrip, ResolvedYamlSpellsOutDefaults) {
  LoadResult result = load_plan_file((valid_plans_dir() / "minimal-vsphere.yaml").string());
  ASSERT_TRUE(result.plan.has_value());
  std::string yaml = to_yaml(*result.plan);
  for (const char* expected :
       {"endpoint: embedded", "requestsPerSecond: 50", "maxConcurrent: 64", "clone: linked", "api: auto",
        "powerOn: multi", "mode: simultaneous", "timeout: 10m", "settle: 0s", "signal: guest_agent",
        "repeat: 1", "cleanup: always", "output: runs"}) {
    EXPECT_NE(yaml.find(expected), std::string::npos) << expected << " not in\n" << yaml;
  }
  // vSphere plans have no namespace.
  EXPECT_EQ(yaml.find("namespace"), std::string::npos) << yaml;
}

TEST(RoundTrip, ProgrammaticPlanWithAwkwardStrings) {
  StormPlan p;
  p.name = "awk";
  p.platform.kind = "vsphere";
  p.platform.credentials.username_env = "U";
  p.platform.credentials.password_env = "P";
  vsphere::Settings golden;
  golden.api = "vim25";
  golden.power_on = "each";
  golden.vm = "true";  // a string that looks like a boolean
  p.platform.settings = api::make_settings(golden);
  Scenario s;
  s.name = "#1: 'quoted' \"both\" - yes";
  s.placement = {{"123", 4}, {"null", 1}};
  p.scenarios = {s};
  p.ready.signal = "ip_assigned";
  p.storm.timeout = std::chrono::milliseconds(61'500);
  Slo slo;
  slo.stat = "p99";
  slo.max = 0.25;
  p.slo = {slo};
  std::string yaml = to_yaml(p);
  LoadResult back = load_plan_text(yaml, "");
  for (const auto& d : back.diagnostics) ADD_FAILURE() << d.to_string() << "\n" << yaml;
  ASSERT_TRUE(back.plan.has_value());
  EXPECT_EQ(*back.plan, p) << yaml;
}

}  // namespace
}  // namespace bootstorm::plan
