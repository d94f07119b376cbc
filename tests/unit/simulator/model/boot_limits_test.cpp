// What held the boots back (Lab::boot_limits): on small labs where one resource is made scarce, the
// accounting names it, its peak utilisation reaches 1, and clones are not counted as boots.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/unit/simulator/model/lab_test_support.hpp"

namespace bootstorm::sim::model {
namespace {

using namespace bootstorm::sim::model::testing;

const BootLimit& dominant(const BootLimits& limits) {
  return *std::max_element(
      limits.limits.begin(), limits.limits.end(),
      [](const BootLimit& a, const BootLimit& b) { return a.flow_seconds < b.flow_seconds; });
}

const BootLimit* find(const BootLimits& limits, LimitKind kind, const std::string& on) {
  for (const auto& l : limits.limits) {
    if (l.kind == kind && l.on == on) return &l;
  }
  return nullptr;
}

// Clones `n` VMs onto h1 and storms them; the limits count the storm alone.
BootLimits storm_of(LabSpec spec, int n) {
  Lab lab(spec, virtual_options());
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back(clone_to(lab, "gold", "vm-" + std::to_string(i), "h1"));
  const BootLimits after_clones = lab.boot_limits();
  for (const auto& l : after_clones.limits) EXPECT_EQ(l.flow_seconds, 0) << to_string(l.kind) << " " << l.on;
  storm(lab, ids);
  return lab.boot_limits();
}

TEST(BootLimits, AVmAloneIsHeldByItsPerIoLatency) {
  const BootLimits limits = storm_of(simple_spec(1, /*link_mbps=*/10000), 1);
  EXPECT_EQ(dominant(limits).kind, LimitKind::per_io_latency);
  EXPECT_GT(dominant(limits).flow_seconds, 1.0);
  EXPECT_LT(find(limits, LimitKind::host_link, "h1")->peak_utilisation, 0.01);
  EXPECT_TRUE(limits.memory_refusals.empty());
}

TEST(BootLimits, AScarceLinkIsNamedAndRunsFull) {
  const BootLimits limits = storm_of(simple_spec(1, /*link_mbps=*/20), 20);
  EXPECT_EQ(dominant(limits).kind, LimitKind::host_link);
  EXPECT_EQ(dominant(limits).on, "h1");
  EXPECT_NEAR(find(limits, LimitKind::host_link, "h1")->peak_utilisation, 1.0, 1e-6);
  EXPECT_DOUBLE_EQ(find(limits, LimitKind::host_link, "h1")->capacity, 20);
}

TEST(BootLimits, AScarceArrayIsNamed) {
  LabSpec spec = simple_spec(1, /*link_mbps=*/10000);
  spec.datastores[0].mbps = 15;
  EXPECT_EQ(dominant(storm_of(spec, 20)).kind, LimitKind::datastore_bandwidth);
  spec = simple_spec(1, /*link_mbps=*/10000);
  spec.datastores[0].iops = 500;
  const BootLimits iops = storm_of(spec, 20);
  EXPECT_EQ(dominant(iops).kind, LimitKind::datastore_iops);
  EXPECT_EQ(dominant(iops).on, "ds");
}

TEST(BootLimits, ScarceCoresAreNamed) {
  LabSpec spec = simple_spec(1, /*link_mbps=*/10000);
  spec.hosts[0].cores = 1;
  for (auto& phase : spec.profiles[0].phases) phase.mb_read = 0;
  spec.profiles[0].phases[2].cpu_core_s = 20;
  EXPECT_EQ(dominant(storm_of(spec, 20)).kind, LimitKind::host_cpu);
  // One VM alone on the same host: its two vCPUs hold it, not the host's core.
  spec.hosts[0].cores = 64;
  EXPECT_EQ(dominant(storm_of(spec, 1)).kind, LimitKind::vcpus);
}

TEST(BootLimits, PowerOnsRefusedForMemoryAreCountedByHost) {
  LabSpec spec = simple_spec(1, /*link_mbps=*/10000);
  spec.hosts[0].memory_gb = 2;  // two 1 GB VMs
  Lab lab(spec, virtual_options());
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(clone_to(lab, "gold", "vm-" + std::to_string(i), "h1"));
  int refused = 0;
  for (const auto& id : ids) {
    if (!lab.power_on(id, nullptr)) ++refused;
    lab.run_until(lab.now() + 1);  // each power-on reaches running, holding its memory
  }
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(lab.boot_limits().memory_refusals.at("h1"), 1);
  // A front's question before it accepts a power-on counts its refusal too.
  EXPECT_FALSE(lab.admit_memory(ids[2]));
  EXPECT_EQ(lab.boot_limits().memory_refusals.at("h1"), 2);
  lab.reset_boot_limits();
  EXPECT_TRUE(lab.boot_limits().memory_refusals.empty());
  EXPECT_DOUBLE_EQ(lab.boot_limits().since, lab.now());
}

TEST(BootLimits, APowerOnHoldsItsMemoryFromTheRequestSoABurstCannotOvercommit) {
  LabSpec spec = simple_spec(1, /*link_mbps=*/10000);
  spec.hosts[0].memory_gb = 2;  // two 1 GB VMs
  Lab lab(spec, virtual_options());
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(clone_to(lab, "gold", "vm-" + std::to_string(i), "h1"));
  // All three at one instant: none is running yet, the third is still refused.
  EXPECT_TRUE(lab.power_on(ids[0], nullptr));
  EXPECT_TRUE(lab.power_on(ids[1], nullptr));
  EXPECT_FALSE(lab.power_on(ids[2], nullptr));
  // Asked again while it powers on, the first VM's own hold does not count against it.
  EXPECT_TRUE(lab.admit_memory(ids[0]));
  // A power-on cancelled before running gives its memory back.
  EXPECT_TRUE(lab.power_off(ids[1], nullptr));
  lab.run_until(lab.now() + 1);
  EXPECT_TRUE(lab.power_on(ids[2], nullptr));
  lab.run_until(lab.now() + 1);
  EXPECT_DOUBLE_EQ(lab.find_host("h1")->memory_used_mb, 2048);
}

TEST(BootLimits, AnInstantCloneWithoutTheMemoryToRunFails) {
  LabSpec spec = simple_spec(1, /*link_mbps=*/10000);
  spec.hosts[0].memory_gb = 2;  // the golden VM (running, 1 GB) and one instant clone
  Lab lab(spec, virtual_options());
  const Vm* golden = lab.find_vm_by_name("gold");
  ASSERT_TRUE(lab.power_on(golden->id, nullptr));
  lab.run_until_idle(lab.now() + 3600);
  EXPECT_FALSE(clone_to(lab, "gold", "ic-1", "h1", CloneKind::instant).empty());
  CloneRequest request;
  request.kind = CloneKind::instant;
  request.source_vm_id = golden->id;
  request.name = "ic-2";
  request.host_id = "h1";
  std::optional<Error> failed;
  ASSERT_TRUE(lab.clone_vm(request, [&](Expected<std::string> r) {
    if (!r) failed = r.error();
  }));
  lab.run_until_idle(lab.now() + 3600);
  ASSERT_TRUE(failed.has_value());
  EXPECT_NE(failed->message.find("not enough free memory"), std::string::npos) << failed->message;
  EXPECT_EQ(lab.find_vm_by_name("ic-2"), nullptr);
  EXPECT_EQ(lab.boot_limits().memory_refusals.at("h1"), 1);
  EXPECT_DOUBLE_EQ(lab.find_host("h1")->memory_used_mb, 2048);
}

TEST(BootLimits, AResetStartsTheAccountingAgain) {
  LabSpec spec = simple_spec(1, /*link_mbps=*/20);
  Lab lab(spec, virtual_options());
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(clone_to(lab, "gold", "vm-" + std::to_string(i), "h1"));
  storm(lab, ids);
  EXPECT_GT(dominant(lab.boot_limits()).flow_seconds, 0);
  lab.reset_boot_limits();
  for (const auto& l : lab.boot_limits().limits) {
    EXPECT_EQ(l.flow_seconds, 0);
    EXPECT_EQ(l.peak_utilisation, 0);
  }
}

}  // namespace
}  // namespace bootstorm::sim::model
