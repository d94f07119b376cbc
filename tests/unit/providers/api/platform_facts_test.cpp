#include "providers/api/platform_facts.hpp"

#include <gtest/gtest.h>

namespace bootstorm::api {
namespace {

PlatformFacts cluster(const std::string& kubevirt) {
  PlatformFacts f;
  f.product = "Kubernetes";
  f.version = "v1.27.6";
  f.build = "abc123";
  f.components = {{"KubeVirt", kubevirt}, {"CDI", "v1.58.0"}};
  f.hosts = {{"worker-0", "Skylake-Server", "v1.27.6"}, {"worker-1", "Skylake-Server", "v1.27.6"}};
  f.storage_class = "ocs-storagecluster-ceph-rbd";
  f.provisioner = "openshift-storage.rbd.csi.ceph.com";
  return f;
}

TEST(PlatformFacts, JsonRoundTripLeavesUnknownFactsOut) {
  const PlatformFacts f = cluster("v1.2.0");
  const auto j = facts_to_json(f);
  EXPECT_EQ(j["components"]["KubeVirt"], "v1.2.0");
  EXPECT_EQ(j["hosts"][1]["name"], "worker-1");
  EXPECT_FALSE(j.contains("simulator"));  // empty: not a simulator, not written
  EXPECT_EQ(facts_from_json(nlohmann::json::parse(j.dump())), f);
  EXPECT_EQ(facts_to_json(PlatformFacts{}).dump(), "{}");
  // What a reader does not understand is skipped, not fatal.
  const auto odd = facts_from_json(nlohmann::json::parse(R"({"product": 7, "hosts": [3, {"name": "h"}]})"));
  EXPECT_EQ(odd.product, "");
  ASSERT_EQ(odd.hosts.size(), 1u);
  EXPECT_EQ(odd.hosts[0].name, "h");
}

TEST(PlatformFacts, OneLineSaysWhatRanWhere) {
  PlatformFacts f = cluster("v1.2.0");
  f.simulator = "bootstorm lab small";
  EXPECT_EQ(
      describe(f),
      "Kubernetes v1.27.6 build abc123; CDI v1.58.0; KubeVirt v1.2.0; v1.27.6 on 2 hosts; storage class "
      "ocs-storagecluster-ceph-rbd (openshift-storage.rbd.csi.ceph.com) [bootstorm lab small]");
  f.hosts[1].version = "v1.28.1";  // a node upgraded on its own: each version with its hosts
  EXPECT_NE(describe(f).find("v1.27.6 on worker-0, v1.28.1 on worker-1"), std::string::npos) << describe(f);
  EXPECT_EQ(describe(PlatformFacts{}), "");
}

TEST(PlatformFacts, DifferencesNameEachFactThatChanged) {
  EXPECT_TRUE(differences(cluster("v1.2.0"), cluster("v1.2.0")).empty());
  const auto kubevirt = differences(cluster("v1.2.0"), cluster("v1.3.0"));
  ASSERT_EQ(kubevirt.size(), 1u);
  EXPECT_EQ(kubevirt[0], "KubeVirt: v1.2.0 vs v1.3.0");

  PlatformFacts lab = cluster("v1.2.0");
  lab.simulator = "bootstorm lab small";
  const auto sim = differences(cluster("v1.2.0"), lab);
  ASSERT_EQ(sim.size(), 1u);
  EXPECT_EQ(sim[0], "simulator: none vs bootstorm lab small");

  PlatformFacts other_cpu = cluster("v1.2.0");
  other_cpu.hosts[0].cpu_model = other_cpu.hosts[1].cpu_model = "Icelake-Server";
  other_cpu.storage_class = "gp3-csi";
  const auto hw = differences(cluster("v1.2.0"), other_cpu);
  ASSERT_EQ(hw.size(), 2u);
  EXPECT_EQ(hw[0], "CPU models: Skylake-Server vs Icelake-Server");
  EXPECT_EQ(hw[1], "storage class: ocs-storagecluster-ceph-rbd vs gp3-csi");

  // A run from before the facts were recorded differs in nothing.
  EXPECT_TRUE(differences(PlatformFacts{}, cluster("v1.3.0")).empty());
}

TEST(PlatformFacts, LabProfileOfALabSimulatorName) {
  EXPECT_EQ(lab_profile_of(lab_simulator_name("tolly-2024")), "tolly-2024");
  EXPECT_EQ(lab_profile_of("govmomi vcsim"), "govmomi vcsim");
}

}  // namespace
}  // namespace bootstorm::api
