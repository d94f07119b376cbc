// Where a boot's time went: phases at the milestones, per VM and per scenario, and the control-plane verdict.
#include "results/phases.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "results/summary.hpp"
#include "results/summary_json.hpp"

namespace {

using bootstorm::api::Milestone;
using namespace bootstorm::results;

VmRecord vm(const std::string& name, std::vector<std::pair<Milestone, double>> reached, Milestone ready) {
  VmRecord v;
  v.scenario = "s";
  v.name = name;
  v.start_requested_unix_s = 1000;
  for (const auto& [m, at] : reached) v.milestones[m] = MilestoneRecord{at, 0.001, "watch", 1000 + at, ""};
  if (auto it = v.milestones.find(ready); it != v.milestones.end()) {
    v.ready_s = it->second.offset_s;
    v.status = "ready";
  }
  return v;
}

// A KubeVirt VM: every phase's end reported.
VmRecord kubevirt_vm(const std::string& name, double ack, double scheduled, double running, double agent,
                     double beacon) {
  return vm(name,
            {{Milestone::start_acknowledged, ack},
             {Milestone::scheduled, scheduled},
             {Milestone::running, running},
             {Milestone::guest_agent, agent},
             {Milestone::beacon, beacon}},
            Milestone::beacon);
}

TEST(Phases, AKubeVirtBootSplitsIntoFivePhasesThatAddUpToItsBootTime) {
  const auto v = kubevirt_vm("a", 0.01, 4.01, 6.01, 30.01, 31.51);
  const auto p = vm_phases(v, Milestone::beacon);
  ASSERT_TRUE(p[0] && p[1] && p[2] && p[3] && p[4]);
  EXPECT_DOUBLE_EQ(*p[0], 0.01);
  EXPECT_DOUBLE_EQ(*p[1], 4.0);
  EXPECT_DOUBLE_EQ(*p[2], 2.0);
  EXPECT_DOUBLE_EQ(*p[3], 24.0);
  EXPECT_NEAR(*p[4], 1.5, 1e-12);
  EXPECT_NEAR(*p[0] + *p[1] + *p[2] + *p[3] + *p[4], *v.ready_s, 1e-12);
}

TEST(Phases, WithoutScheduledThePowerOnPhaseRunsFromTheAcknowledgement) {
  // vSphere: no scheduled milestone; ready is the guest agent, so there is no ready phase either.
  const auto v =
      vm("b", {{Milestone::start_acknowledged, 0.2}, {Milestone::running, 0.7}, {Milestone::guest_agent, 20}},
         Milestone::guest_agent);
  const auto p = vm_phases(v, Milestone::guest_agent);
  EXPECT_FALSE(p[static_cast<std::size_t>(Phase::control_plane)]);
  EXPECT_FALSE(p[static_cast<std::size_t>(Phase::ready)]);
  EXPECT_DOUBLE_EQ(*p[static_cast<std::size_t>(Phase::launch)], 0.5);
  EXPECT_DOUBLE_EQ(*p[static_cast<std::size_t>(Phase::guest)], 19.3);
}

TEST(Phases, ObservationsOutOfOrderStillAddUpToTheBootTime) {
  // A poll that saw running before scheduled's watch event arrived, and a scheduled seen after ready.
  const auto v = vm("c",
                    {{Milestone::start_acknowledged, 0.1},
                     {Milestone::scheduled, 3.0},
                     {Milestone::running, 2.0},
                     {Milestone::guest_agent, 9.0}},
                    Milestone::guest_agent);
  const auto p = vm_phases(v, Milestone::guest_agent);
  EXPECT_DOUBLE_EQ(*p[static_cast<std::size_t>(Phase::launch)], 0.0);
  double sum = 0;
  for (const auto& x : p) sum += x.value_or(0);
  EXPECT_DOUBLE_EQ(sum, 9.0);
  // A VM that is not ready has no phases.
  auto failed = vm("d", {{Milestone::start_acknowledged, 0.1}}, Milestone::guest_agent);
  for (const auto& x : vm_phases(failed, Milestone::guest_agent)) EXPECT_FALSE(x);
}

TEST(Phases, MeanPartsAddUpToTheMeanBootAndTheControlPlaneVerdictFollowsTheMedians) {
  std::vector<VmRecord> paced = {kubevirt_vm("a", 0.01, 1, 2, 3, 4), kubevirt_vm("b", 0.01, 10, 11, 12, 13),
                                 kubevirt_vm("c", 0.01, 20, 21, 22, 23)};
  std::vector<const VmRecord*> vms;
  for (const auto& v : paced) vms.push_back(&v);
  const auto stats = phase_stats(vms, Milestone::beacon);
  ASSERT_EQ(stats.size(), kPhaseCount);
  double parts = 0;
  for (const auto& s : stats) parts += s.mean_part_s;
  EXPECT_NEAR(parts, (4.0 + 13 + 23) / 3, 1e-9);
  EXPECT_NEAR(*stats[1].dist.p50, 9.99, 1e-9);
  EXPECT_EQ(stats[1].dist.count, 3u);
  auto share = control_plane_share(vms, Milestone::beacon);
  ASSERT_TRUE(share);
  EXPECT_TRUE(share->delayed);
  EXPECT_NEAR(share->median_s, 10.0, 1e-9);
  EXPECT_NEAR(share->median_boot_s, 13.0, 1e-9);

  // Fast scheduling, slow guests: not delayed by the control plane.
  std::vector<VmRecord> guests = {kubevirt_vm("a", 0.01, 0.1, 2, 30, 31),
                                  kubevirt_vm("b", 0.01, 0.2, 2, 40, 41)};
  vms.clear();
  for (const auto& v : guests) vms.push_back(&v);
  share = control_plane_share(vms, Milestone::beacon);
  ASSERT_TRUE(share);
  EXPECT_FALSE(share->delayed);
  EXPECT_EQ(share->largest_other, Phase::guest);

  // No scheduled milestone anywhere (vSphere): no verdict.
  auto v =
      vm("e", {{Milestone::start_acknowledged, 0.2}, {Milestone::running, 0.7}, {Milestone::guest_agent, 20}},
         Milestone::guest_agent);
  EXPECT_FALSE(control_plane_share({&v}, Milestone::guest_agent));
}

TEST(Phases, SummaryJsonCarriesThePhasesAndReadsThemBack) {
  RunRecord record;
  record.run_id = "r";
  record.ready_signal = "beacon";
  ScenarioRecord sc;
  sc.name = "s";
  sc.vms = 2;
  record.scenarios.push_back(sc);
  record.vms = {kubevirt_vm("a", 0.01, 5, 6, 7, 8), kubevirt_vm("b", 0.02, 9, 10, 11, 12)};
  const Summary summary = summarize(record);
  ASSERT_EQ(summary.scenarios.size(), 1u);
  ASSERT_EQ(summary.scenarios[0].phases.size(), kPhaseCount);
  const auto json = summary_to_json(summary);
  ASSERT_TRUE(json["scenarios"][0].contains("phases"));
  EXPECT_TRUE(json["scenarios"][0]["phases"].contains("controlPlane"));
  EXPECT_TRUE(json["scenarios"][0]["controlPlane"]["delayed"].get<bool>());
  auto back = summary_from_json(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->scenarios[0].phases.size(), kPhaseCount);
  EXPECT_EQ(back->scenarios[0].phases[1].phase, Phase::control_plane);
  EXPECT_NEAR(back->scenarios[0].phases[1].mean_part_s, summary.scenarios[0].phases[1].mean_part_s, 1e-6);
  ASSERT_TRUE(back->scenarios[0].control_plane);
  EXPECT_TRUE(back->scenarios[0].control_plane->delayed);
  EXPECT_EQ(summary_to_json_text(*back), summary_to_json_text(summary));
}

}  // namespace
