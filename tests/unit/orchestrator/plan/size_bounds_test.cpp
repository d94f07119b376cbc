// The size bounds a command applies to a loaded plan (orchestrator/plan/size_bounds.hpp): the count against
// --max-vms at the placement that crosses it, a shard's share, and each host's memory against its desktops.
#include "orchestrator/plan/size_bounds.hpp"

#include <gtest/gtest.h>

#include <string>

#include "orchestrator/plan/plan.hpp"

namespace bootstorm::plan {
namespace {

const char* kPlan = R"(apiVersion: bootstorm.io/v1
kind: StormPlan
name: sizes
platform: {kind: vsphere, endpoint: embedded, lab: tolly-2024}
golden: {vm: win10-golden}
scenarios:
  - name: four
    placement: [{host: r740-01, vms: 6}, {host: r740-02, vms: 6}]
  - name: one
    placement: [{host: r7625-01, vms: 400}]
)";

StormPlan loaded() {
  LoadResult r = load_plan_text(kPlan, "sizes.yaml");
  EXPECT_TRUE(r.plan.has_value()) << (r.diagnostics.empty() ? "" : r.diagnostics.front().to_string());
  return r.plan.value_or(StormPlan{});
}

HostMemory tolly() {
  HostMemory h;
  h.source = "lab tolly-2024";
  h.host_word = "host";
  h.host_mib = {{"r740-01", 768 * 1024}, {"r740-02", 768 * 1024}, {"r7625-01", 1536 * 1024}};
  h.desktop_mib = 4096;
  h.desktop = "4096 MiB per desktop";
  return h;
}

TEST(SizeBounds, TheCountIsReportedAtThePlacementThatCrossesIt) {
  SizeLimits limits;
  limits.bound_by = "run creates";
  limits.max_vms = 100;
  const auto d = check_plan_size(loaded(), limits);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(
      d[0].to_string(),
      "sizes.yaml:10:39: scenarios[1].placement[0].vms: with it the plan has 412 VMs, more than the 100 "
      "that run creates without a larger --max-vms; pass --max-vms 412 if that is what you mean");
  limits.max_vms = 412;
  EXPECT_TRUE(check_plan_size(loaded(), limits).empty());
  limits.max_vms = 10;
  const auto first = check_plan_size(loaded(), limits);
  ASSERT_EQ(first.size(), 1u) << "one count diagnostic per plan";
  EXPECT_EQ(first[0].line, 8);
  EXPECT_EQ(first[0].column, 63);
}

TEST(SizeBounds, AShardCountsItsShareOfEachScenario) {
  SizeLimits limits;
  limits.bound_by = "run creates";
  limits.max_vms = 250;
  EXPECT_EQ(check_plan_size(loaded(), limits).size(), 1u);
  limits.share = [](int vms) { return (vms + 1) / 2; };  // shard 1 of 2
  EXPECT_TRUE(check_plan_size(loaded(), limits).empty());
  limits.max_vms = 205;
  const auto d = check_plan_size(loaded(), limits);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("206 VMs in this shard"), std::string::npos) << d[0].message;
}

TEST(SizeBounds, DesktopsBeyondAHostsMemoryAreReportedWithWhatFits) {
  SizeLimits limits;
  limits.hosts = tolly();
  const auto d = check_plan_size(loaded(), limits);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(
      d[0].to_string(),
      "sizes.yaml:10:39: scenarios[1].placement[0].vms: 400 desktops need 1600 GiB of memory on host "
      "r7625-01, which has 1536 GiB (lab tolly-2024; 4096 MiB per desktop): at most 384 fit. Place fewer "
      "there, or spread them over more hosts");
  // Exactly full fits.
  limits.hosts->host_mib["r7625-01"] = 400 * 4096;
  EXPECT_TRUE(check_plan_size(loaded(), limits).empty());
}

TEST(SizeBounds, AHostTheLabDoesNotHaveIsNamedAtItsLine) {
  SizeLimits limits;
  limits.hosts = tolly();
  limits.hosts->host_mib.erase("r740-02");
  const auto d = check_plan_size(loaded(), limits);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(
      d[0].to_string(),
      "sizes.yaml:8:49: scenarios[0].placement[1].host: lab tolly-2024 has no host 'r740-02' (its hosts: "
      "r740-01, r7625-01)");
}

TEST(SizeBounds, AMigrationStormsPlacementIsBoundedAlike) {
  std::vector<Placement> placement(2);
  placement[0] = {"esx-01", 300, {3, 10}, {3, 20}};
  placement[1] = {"esx-02", 300, {4, 10}, {4, 20}};
  SizeLimits limits;
  limits.bound_by = "migrate creates";
  limits.max_vms = 500;
  const auto d = check_placement_size("m.yaml", "vms.fromStorm.placement", placement, limits);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(
      d[0].to_string().rfind("m.yaml:4:20: vms.fromStorm.placement[1].vms: with it the plan has 600 VMs", 0),
      0u)
      << d[0].to_string();
}

TEST(SizeBounds, PositionsAreNotPartOfThePlansMeaning) {
  StormPlan a = loaded();
  StormPlan b = a;
  b.scenarios[0].placement[0].vms_at = {99, 99};
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace bootstorm::plan
