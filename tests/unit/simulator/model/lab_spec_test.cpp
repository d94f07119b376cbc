// Strict lab profile loading: the shipped labs load, and mistakes are reported with file:line:col.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "simulator/model/lab.hpp"
#include "tests/support/scratch_dir.hpp"

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

TEST(LabSpec, VcenterUsersRolesAndPermissionsAreCheckedWhereTheyAreWritten) {
  const std::string base =
      "name: x\n"
      "hosts: [{name: h1}]\n"
      "datastores: [{name: d}]\n"
      "profiles: [{name: p, phases: [{name: agent_start}, {name: services}]}]\n"
      "goldenVMs: [{name: g, host: h1, datastore: d, profile: p}]\n";
  auto vcenter = [&](const std::string& body) {
    return parse_lab_spec(base + "vcenter:\n" + body, "v.yaml");
  };
  auto ok = vcenter(
      "  roles: [{name: power, privileges: [VirtualMachine.Interact.PowerOn]}]\n"
      "  users: [{name: u@vsphere.local, password: pw, permissions: [{entity: g, role: power}, "
      "{entity: '/', role: ReadOnly, propagate: false}]}]\n");
  ASSERT_TRUE(ok.has_value()) << ok.error().what();
  ASSERT_EQ(ok->vcenter.users.size(), 1u);
  EXPECT_EQ(ok->vcenter.users[0].permissions.size(), 2u);
  EXPECT_FALSE(ok->vcenter.users[0].permissions[1].propagate);
  EXPECT_EQ(ok->vcenter.roles[0].privileges, std::vector<std::string>{"VirtualMachine.Interact.PowerOn"});

  const std::vector<std::pair<std::string, std::string>> bad{
      {"  users: [{name: u, password: pw, permissions: [{entity: g, role: nope}]}]\n", "role 'nope'"},
      {"  users: [{name: u, password: pw, permissions: [{entity: nowhere, role: Admin}]}]\n", "'nowhere'"},
      {"  users: [{name: administrator@vsphere.local, password: pw}]\n", "defined twice"},
      {"  users: [{name: u, password: ''}]\n", "needs a password"},
      {"  roles: [{name: Admin, privileges: [System.View]}]\n", "built in"},
      {"  roles: [{name: r, privileges: [PowerOn]}]\n", "not a privilege id"},
  };
  for (const auto& [body, says] : bad) {
    auto refused = vcenter(body);
    ASSERT_FALSE(refused.has_value()) << body;
    EXPECT_NE(refused.error().message.find(says), std::string::npos) << body << refused.error().message;
    EXPECT_NE(refused.error().message.find("v.yaml:"), std::string::npos) << refused.error().message;
  }
}

// Where a lab name is looked up: $BOOTSTORM_LABS_DIR alone when set; else next to an installed binary, then
// the source tree of a development build. An unknown name says where it looked and which labs exist.
class LabsDirectories : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* env = std::getenv("BOOTSTORM_LABS_DIR")) saved_ = env;
    ::unsetenv("BOOTSTORM_LABS_DIR");
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("BOOTSTORM_LABS_DIR", saved_->c_str(), 1);
    } else {
      ::unsetenv("BOOTSTORM_LABS_DIR");
    }
  }
  std::optional<std::string> saved_;
};

TEST_F(LabsDirectories, InstalledLayoutFirstThenTheSourceTree) {
  const auto dirs = labs_directories();
  ASSERT_EQ(dirs.size(), 2u);
  // This test program lives in <build>/tests/unit/simulator/model: "installed" would be <build>/tests/unit/
  // simulator/share/bootstorm/labs, which does not exist, so the source tree answers.
  EXPECT_TRUE(dirs[0].ends_with("/share/bootstorm/labs")) << dirs[0];
  EXPECT_EQ(dirs[1], std::string(BOOTSTORM_SOURCE_DIR) + "/simulator/labs");
  EXPECT_TRUE(load_lab_spec("small").has_value());
}

TEST_F(LabsDirectories, TheEnvironmentVariableAloneDecides) {
  const test_support::ScratchDir scratch("labs");
  const auto& dir = scratch.path();
  ::setenv("BOOTSTORM_LABS_DIR", dir.c_str(), 1);
  EXPECT_EQ(labs_directories(), std::vector<std::string>{dir.string()});
  auto missing = load_lab_spec("small");  // only in the source tree, which is no longer looked at
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("looked in " + dir.string()), std::string::npos)
      << missing.error().message;
  std::filesystem::copy_file(std::string(BOOTSTORM_SOURCE_DIR) + "/simulator/labs/small.yaml",
                             dir / "mine.yaml");
  EXPECT_TRUE(load_lab_spec("mine").has_value());
  auto unknown = load_lab_spec("nope");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().hint.find("known labs: mine"), std::string::npos) << unknown.error().hint;
}

TEST_F(LabsDirectories, AnUnknownNameSaysWhereItLooked) {
  auto unknown = load_lab_spec("no-such-lab");
  ASSERT_FALSE(unknown.has_value());
  const std::string m = unknown.error().message;
  EXPECT_NE(m.find("/share/bootstorm/labs"), std::string::npos) << m;
  EXPECT_NE(m.find(std::string(BOOTSTORM_SOURCE_DIR) + "/simulator/labs"), std::string::npos) << m;
  EXPECT_NE(unknown.error().hint.find("small"), std::string::npos);
  EXPECT_NE(unknown.error().hint.find("tolly-2024"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm::sim::model
