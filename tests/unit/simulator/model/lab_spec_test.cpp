// Strict lab profile loading: the shipped labs load, and mistakes are reported with file:line:col.
#include <gtest/gtest.h>

#include "simulator/model/lab.hpp"

namespace bootstorm::sim::model {
namespace {

TEST(LabSpec, ShippedLabsLoad) {
  for (const char* name : {"tolly-2024", "small"}) {
    auto spec = load_lab_spec(name);
    ASSERT_TRUE(spec.has_value()) << name << ": " << spec.error().what();
    EXPECT_EQ(spec->name, name);
    EXPECT_EQ(spec->kube.nodes.size(), 3u);
    EXPECT_FALSE(spec->vcenter.password.empty());
    EXPECT_FALSE(spec->kube.token.empty());
  }
  auto tolly = load_lab_spec("tolly-2024");
  ASSERT_TRUE(tolly.has_value());
  int purley = 0;
  for (const auto& h : tolly->hosts) {
    if (h.name.rfind("r740-", 0) == 0) {
      ++purley;
      EXPECT_DOUBLE_EQ(h.link_mbps, 1600);
    }
    if (h.name == "r7625-01") {
      EXPECT_DOUBLE_EQ(h.link_mbps, 6400);
    }
  }
  EXPECT_EQ(purley, 4);
  EXPECT_GE(tolly->datastores.front().mbps, 8000);
}

TEST(LabSpec, UnknownKeyIsReportedWithLineAndColumn) {
  const std::string yaml =
      "name: x\n"
      "hosts:\n"
      "  - {name: h1, linkMbps: 10}\n"
      "datastores: [{name: d}]\n"
      "profiles: [{name: p, phases: [{name: agent_start}, {name: services}]}]\n";
  auto spec = parse_lab_spec(yaml, "lab.yaml");
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(spec.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(spec.error().message.find("lab.yaml:3:"), std::string::npos) << spec.error().message;
  EXPECT_NE(spec.error().message.find("linkMbps"), std::string::npos);
}

TEST(LabSpec, WrongTypesAndDanglingReferencesAreErrors) {
  const std::string base =
      "name: x\n"
      "hosts: [{name: h1}]\n"
      "datastores: [{name: d}]\n"
      "profiles: [{name: p, phases: [{name: agent_start}, {name: services}]}]\n";
  EXPECT_TRUE(parse_lab_spec(base, "ok.yaml").has_value());
  auto wrong_type = parse_lab_spec(base + "seed: many\n", "t.yaml");
  ASSERT_FALSE(wrong_type.has_value());
  EXPECT_NE(wrong_type.error().message.find("t.yaml:5:"), std::string::npos) << wrong_type.error().message;
  auto dangling =
      parse_lab_spec(base + "goldenVMs: [{name: g, host: nope, datastore: d, profile: p}]\n", "t.yaml");
  ASSERT_FALSE(dangling.has_value());
  EXPECT_NE(dangling.error().message.find("nope"), std::string::npos);
  auto negative = parse_lab_spec(
      "name: x\nhosts: [{name: h1, linkMBps: -5}]\ndatastores: [{name: d}]\n"
      "profiles: [{name: p, phases: [{name: agent_start}, {name: services}]}]\n",
      "n.yaml");
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(negative.error().message.find("n.yaml:2:"), std::string::npos);
  auto no_agent = parse_lab_spec(
      "name: x\nhosts: [{name: h1}]\ndatastores: [{name: d}]\n"
      "profiles: [{name: p, phases: [{name: services}]}]\n",
      "a.yaml");
  ASSERT_FALSE(no_agent.has_value());
  EXPECT_NE(no_agent.error().message.find("agentPhase"), std::string::npos);
  EXPECT_FALSE(load_lab_spec("no-such-lab").has_value());
}

}  // namespace
}  // namespace bootstorm::sim::model
