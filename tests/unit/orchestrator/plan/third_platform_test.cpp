// A third platform kind, registered next to vsphere and kubevirt, brings its own plan rules and its own plan
// section: its plans load with its keys (golden.image and golden.flavor, which no built-in kind has) into its
// own typed settings, its mistakes are reported in its own terms, and the built-in kinds' messages name it
// where it shares a rule with them. Nothing in orchestrator/plan names it.
#include <gtest/gtest.h>

#include "orchestrator/plan/plan.hpp"
#include "providers/api/platform_descriptor.hpp"
#include "tests/support/fake_platform.hpp"

namespace bootstorm::plan {
namespace {

constexpr const char* kHeader = "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: t\n";
constexpr const char* kScenarios = "scenarios: [{name: s, placement: [{host: h, vms: 2}]}]\n";

class ThirdPlatform : public ::testing::Test {
 protected:
  // After the built-in kinds (builtin_platforms.cpp), so that messages list it last.
  static void SetUpTestSuite() {
    api::register_platform_descriptor(test_support::fake_platform_descriptor());
  }

  static std::vector<std::string> messages_of(const std::string& body) {
    std::vector<std::string> out;
    for (const auto& d : load_plan_text(kHeader + body + kScenarios, "inline.yaml").diagnostics)
      out.push_back(d.to_string());
    return out;
  }
};

TEST_F(ThirdPlatform, ItsPlansLoadWithItsDefaults) {
  LoadResult result = load_plan_text(std::string(kHeader) +
                                         "platform: {kind: fakecloud, endpoint: metadata-service}\n"
                                         "golden: {image: desk-11, flavor: large}\nnamespace: desks\n"
                                         "ready: {signal: running}\n" +
                                         kScenarios,
                                     "inline.yaml");
  for (const auto& d : result.diagnostics) ADD_FAILURE() << d.to_string();
  ASSERT_TRUE(result.plan);
  EXPECT_EQ(result.plan->platform.kind, "fakecloud");
  const auto& settings = result.plan->platform.settings.as<test_support::FakeCloudSettings>();
  EXPECT_EQ(settings.image, "desk-11");
  EXPECT_EQ(settings.flavor, "large");
  EXPECT_EQ(settings.clone, "thin");
  EXPECT_EQ(settings.namespace_, "desks");
  EXPECT_EQ(result.plan->platform.settings.golden_image(), "desk-11");

  // The resolved plan keeps its namespace (the kind has one) and loads again to the same plan.
  const std::string yaml = to_yaml(*result.plan);
  EXPECT_NE(yaml.find("namespace: desks"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("flavor: large"), std::string::npos) << yaml;
  LoadResult again = load_plan_text(yaml, "inline.yaml");
  ASSERT_TRUE(again.plan) << yaml;
  EXPECT_EQ(*again.plan, *result.plan);
}

TEST_F(ThirdPlatform, ItsOwnRulesReportItsMistakes) {
  EXPECT_EQ(messages_of("platform: {kind: fakecloud, credentials: {file: c.yaml}}\ngolden: {image: g}\n"),
            std::vector<std::string>{"inline.yaml:4:43: unknown key 'file' in platform.credentials (allowed "
                                     "for fakecloud: usernameEnv, passwordEnv)"});
  EXPECT_EQ(messages_of("platform: {kind: fakecloud}\ngolden: {clone: linked}\n"),
            (std::vector<std::string>{
                "inline.yaml:5:9: missing required key 'image' in golden (the image to clone)",
                "inline.yaml:5:17: golden.clone must be one of thin, thick for platform kind fakecloud, got "
                "'linked'"}));
  // Its own section's keys, read by its own reader; the built-in kinds' golden keys are not its.
  EXPECT_EQ(
      messages_of("platform: {kind: fakecloud}\ngolden: {image: g, flavor: huge}\n"),
      std::vector<std::string>{"inline.yaml:5:28: golden.flavor must be one of small, large, got 'huge'"});
  EXPECT_EQ(messages_of("platform: {kind: fakecloud}\ngolden: {image: g, vm: w}\n"),
            std::vector<std::string>{"inline.yaml:5:20: unknown key 'vm' in golden (allowed for fakecloud: "
                                     "image, flavor, clone)"});
  EXPECT_EQ(
      messages_of("platform: {kind: fakecloud, endpoint: \"https://fake.example\"}\ngolden: {image: g}\n"),
      std::vector<std::string>{"inline.yaml:4:39: endpoint https://fake.example needs "
                               "platform.credentials (usernameEnv and passwordEnv)"});
  EXPECT_EQ(messages_of("platform: {kind: fakecloud}\ngolden: {image: g}\nready: {signal: guest_agent}\n"),
            std::vector<std::string>{"inline.yaml:6:17: ready.signal must be one of start_acknowledged, "
                                     "running, port_open, beacon for platform kind fakecloud, got "
                                     "'guest_agent'"});
}

TEST_F(ThirdPlatform, TheBuiltInKindsMessagesNameIt) {
  EXPECT_EQ(messages_of("platform: {kind: xen}\ngolden: {vm: g}\n"),
            std::vector<std::string>{
                "inline.yaml:4:18: platform.kind must be one of vsphere, kubevirt, fakecloud, got 'xen'"});
  EXPECT_EQ(messages_of("platform: {kind: vsphere}\ngolden: {vm: g}\nnamespace: n\n"),
            std::vector<std::string>{
                "inline.yaml:6:1: namespace applies only to platform kind kubevirt or fakecloud"});
  EXPECT_EQ(messages_of("platform: {kind: kubevirt, endpoint: metadata-service}\ngolden: {pvc: a/b}\n"),
            std::vector<std::string>{
                "inline.yaml:4:38: platform.endpoint 'metadata-service' applies only to platform kind "
                "fakecloud"});
  EXPECT_EQ(messages_of("platform: {kind: kubevirt, endpoint: \"ftp://x\"}\ngolden: {pvc: a/b}\n"),
            std::vector<std::string>{
                "inline.yaml:4:38: platform.endpoint must be embedded, lab:<state-dir>, "
                "https://<host>[:port], kubeconfig, in-cluster or metadata-service, got 'ftp://x'"});
  EXPECT_EQ(messages_of("platform: {kind: vsphere, apiBudget: {startsPerConnection: 4}}\ngolden: {vm: g}\n"),
            std::vector<std::string>{
                "inline.yaml:4:60: platform.apiBudget.startsPerConnection applies only to platform kind "
                "kubevirt or fakecloud (a vCenter power start blocks until the VM is on, so vSphere starts "
                "need a connection each)"});
}

}  // namespace
}  // namespace bootstorm::plan
