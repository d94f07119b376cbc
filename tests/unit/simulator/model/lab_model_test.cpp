// The lab model in virtual time: boot physics, contention, jitter, faults, clones, notifications, truth.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/unit/simulator/model/lab_test_support.hpp"

namespace bootstorm::sim::model {
namespace {

using namespace bootstorm::sim::model::testing;

// Uncontended duration of one phase, from the spec alone: I/O, CPU and fixed wait overlap.
double uncontended_phase(const LabSpec& spec, const PhaseSpec& phase) {
  const HostSpec& host = spec.hosts.front();
  const DatastoreSpec& ds = spec.datastores.front();
  const GuestProfile& p = spec.profiles.front();
  const double io_cap =
      p.outstanding_ios * (p.io_size_kb / 1000.0) / ((host.io_latency_ms + ds.latency_ms) / 1000.0);
  const double io_rate =
      std::min({io_cap, host.link_mbps, host.bus_mbps, ds.mbps, ds.iops * p.io_size_kb / 1000.0});
  return std::max(
      {phase.mb_read / io_rate, phase.cpu_core_s / (p.cpu_count * host.core_speed), phase.fixed_s});
}

TEST(LabModel, UncontendedBootTakesExactlyTheSumOfItsPhases) {
  const LabSpec spec = simple_spec();
  Lab lab(spec, virtual_options());
  const std::string id = clone_to(lab, "gold", "vm-a", "h1");
  ASSERT_FALSE(id.empty());
  storm(lab, {id});
  const Vm* vm = lab.find_vm(id);
  ASSERT_NE(vm, nullptr);
  const GuestProfile& p = spec.profiles.front();
  double t = p.power_on_s;
  EXPECT_NEAR(*vm->milestone(Milestone::running) - *vm->start_received, t, 1e-6);
  double agent = 0, port = 0;
  for (const auto& phase : p.phases) {
    t += uncontended_phase(spec, phase);
    if (phase.name == p.agent_phase) agent = t;
    if (phase.name == p.port_phase) port = t + p.port_delay_s;
  }
  EXPECT_NEAR(*vm->milestone(Milestone::guest_agent) - *vm->start_received, agent, 1e-6);
  EXPECT_NEAR(*vm->milestone(Milestone::ip_assigned) - *vm->start_received, agent + p.ip_delay_s, 1e-6);
  EXPECT_NEAR(*vm->milestone(Milestone::port_open) - *vm->start_received, port, 1e-6);
  EXPECT_NEAR(*vm->milestone(Milestone::beacon) - *vm->start_received, t, 1e-6);
  // Sanity of the hand formula: 0.25 + 0.7 + 100/38 + 4/2 + 10/38 + 20/38.
  EXPECT_NEAR(t, 0.25 + 0.7 + 130.0 / 38.0 + 2.0, 1e-9);
  EXPECT_EQ(vm->power, PowerState::powered_on);
  EXPECT_EQ(vm->tools, ToolsState::running);
  EXPECT_FALSE(vm->ip.empty());
  EXPECT_FALSE(vm->milestone(Milestone::scheduled).has_value());  // vCenter VMs are not scheduled by kube
  EXPECT_EQ(lab.flow_stats().active_flows, 0u);
}

std::vector<std::string> clones(Lab& lab, int count, const std::vector<std::string>& hosts) {
  std::vector<std::string> ids;
  for (int i = 0; i < count; ++i) {
    ids.push_back(clone_to(lab, "gold", "vm-" + std::to_string(i), hosts[i % hosts.size()]));
  }
  return ids;
}

TEST(LabModel, DoublingLinkSpeedShortensALinkBoundStorm) {
  // 10 VMs on one host whose 100 MB/s link is far below their latency-bound demand (~74 MB/s each).
  auto run = [](double link) {
    Lab lab(simple_spec(1, link, 0.01), virtual_options());
    const auto ids = clones(lab, 10, {"h1"});
    for (const auto& id : ids) EXPECT_TRUE(lab.power_on(id, nullptr).has_value());
    lab.advance(1.2);  // past power-on and firmware: everyone is reading in os_load
    EXPECT_NEAR(lab.host_link_rate(lab.find_host("h1")->id), link, 1e-6 * link);
    EXPECT_TRUE(lab.run_until_idle(lab.now() + 3600));
    return mean_since_start(lab, ids, Milestone::beacon);
  };
  const double slow = run(100);
  const double fast = run(200);
  // I/O is 130 MB x 10 VMs: ~13 s at 100 MB/s, ~6.5 s at 200 MB/s; the rest (power-on, firmware, CPU) is
  // equal.
  EXPECT_LT(fast, slow - 4.0);
  EXPECT_GT(fast, 0.25 + 0.7 + 2.0);
}

TEST(LabModel, SpreadingALinkBoundStormOverHostsHelps) {
  auto run = [](const std::vector<std::string>& hosts) {
    Lab lab(simple_spec(2, 100, 0.01), virtual_options());
    const auto ids = clones(lab, 10, hosts);
    storm(lab, ids);
    return mean_since_start(lab, ids, Milestone::beacon);
  };
  EXPECT_LT(run({"h1", "h2"}), run({"h1"}) * 0.75);
}

TEST(LabModel, JitterIsSeededAndReproducible) {
  auto run = [](std::optional<std::uint64_t> seed) {
    Lab lab(simple_spec(1, 1000, 0.5, 0.1), virtual_options(seed));
    const auto ids = clones(lab, 6, {"h1"});
    storm(lab, ids);
    std::vector<double> boots;
    for (const auto& id : ids) {
      const Vm* vm = lab.find_vm(id);
      boots.push_back(*vm->milestone(Milestone::beacon) - *vm->start_received);
    }
    return std::make_pair(boots, lab.truth_json());
  };
  const auto a = run(std::nullopt);
  const auto b = run(std::nullopt);
  const auto c = run(99);
  EXPECT_EQ(a.second, b.second);
  EXPECT_EQ(a.first, b.first);
  EXPECT_NE(a.first, c.first);
  // Jitter makes VMs differ from each other.
  EXPECT_GT(std::set<double>(a.first.begin(), a.first.end()).size(), 3u);
}

TEST(LabModel, GuestFaultsNeverBootAndAgentNeverStarts) {
  LabSpec spec = simple_spec();
  spec.faults.never_boot_vms = {"hung"};
  spec.faults.agent_never_starts_vms = {"noagent"};
  Lab lab(spec, virtual_options());
  const auto hung = clone_to(lab, "gold", "hung", "h1");
  const auto noagent = clone_to(lab, "gold", "noagent", "h1");
  const auto fine = clone_to(lab, "gold", "fine", "h1");
  storm(lab, {hung, noagent, fine});
  const Vm* h = lab.find_vm(hung);
  EXPECT_TRUE(h->milestone(Milestone::running).has_value());
  EXPECT_FALSE(h->milestone(Milestone::guest_agent).has_value());
  EXPECT_FALSE(h->milestone(Milestone::beacon).has_value());
  EXPECT_EQ(h->current_phase, "firmware");
  const Vm* n = lab.find_vm(noagent);
  EXPECT_FALSE(n->milestone(Milestone::guest_agent).has_value());
  EXPECT_FALSE(n->milestone(Milestone::ip_assigned).has_value());
  EXPECT_TRUE(n->milestone(Milestone::beacon).has_value());
  EXPECT_EQ(n->tools, ToolsState::not_running);
  EXPECT_TRUE(lab.find_vm(fine)->milestone(Milestone::guest_agent).has_value());
}

TEST(LabModel, NeverBootRateIsAFractionOfVms) {
  LabSpec spec = simple_spec();
  spec.profiles[0].phases = {PhaseSpec{"services", 0, 0, 0.1, 0}, PhaseSpec{"agent", 0, 0, 0.1, 0}};
  spec.faults.never_boot_rate = 0.3;
  Lab lab(spec, virtual_options());
  std::vector<std::string> ids;
  for (int i = 0; i < 400; ++i) {
    Lab::CreateVmSpec vm;
    vm.name = "v" + std::to_string(i);
    vm.profile = "g";
    vm.host_id = "h1";
    vm.created_by_front = "vcenter";
    vm.memory_mb = 64;
    ids.push_back(*lab.create_vm(vm));
  }
  storm(lab, ids);
  int hung = 0;
  for (const auto& id : ids) hung += lab.find_vm(id)->milestone(Milestone::beacon) ? 0 : 1;
  EXPECT_GT(hung, 80);
  EXPECT_LT(hung, 160);
}

TEST(LabModel, CloneKindsConsumeDatastoreAndLinkBandwidth) {
  LabSpec spec = simple_spec(2);
  spec.faults.clone_failure_hosts = {"h2"};
  Lab lab(spec, virtual_options());
  const std::string gold = lab.find_vm_by_name("gold")->id;
  auto timed_clone = [&](CloneKind kind, const std::string& name, const std::string& host) {
    CloneRequest r;
    r.kind = kind;
    r.source_vm_id = gold;
    r.name = name;
    r.host_id = host;
    const double start = lab.now();
    double end = 0;
    bool ok = false;
    std::string error;
    EXPECT_TRUE(lab.clone_vm(r,
                             [&](Expected<std::string> id) {
                               end = lab.now();
                               ok = id.has_value();
                               if (!id) error = id.error().message;
                             })
                    .has_value());
    EXPECT_TRUE(lab.run_until_idle(lab.now() + 3600));
    return std::make_tuple(end - start, ok, error);
  };
  // Full: 1 s overhead + 2,000 MB through the 1,000 MB/s link (the array reads and writes, 2x, but is fast).
  auto [full_s, full_ok, e1] = timed_clone(CloneKind::full, "full", "h1");
  EXPECT_TRUE(full_ok);
  EXPECT_NEAR(full_s, 1.0 + 2.0, 1e-6);
  auto [linked_s, linked_ok, e2] = timed_clone(CloneKind::linked, "linked", "h1");
  EXPECT_TRUE(linked_ok);
  EXPECT_NEAR(linked_s, 1.0 + 0.05, 1e-6);
  auto [failed_s, failed_ok, e3] = timed_clone(CloneKind::linked, "on-h2", "h2");
  EXPECT_FALSE(failed_ok);
  EXPECT_NE(e3.find("injected"), std::string::npos);
  EXPECT_EQ(lab.find_vm_by_name("on-h2"), nullptr);
  // Instant clone needs a powered-on source.
  CloneRequest instant;
  instant.kind = CloneKind::instant;
  instant.source_vm_id = gold;
  instant.name = "ic";
  auto refused = lab.clone_vm(instant, [](Expected<std::string>) {});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, ErrorKind::conflict);
  ASSERT_TRUE(lab.power_on(gold, nullptr).has_value());
  lab.advance(1.0);
  std::string ic;
  ASSERT_TRUE(lab.clone_vm(instant, [&](Expected<std::string> id) { ic = *id; }).has_value());
  EXPECT_TRUE(lab.run_until_idle(lab.now() + 3600));
  ASSERT_FALSE(ic.empty());
  EXPECT_EQ(lab.find_vm(ic)->power, PowerState::powered_on);
  EXPECT_EQ(lab.find_vm(ic)->tools, ToolsState::running);
  // Duplicate names are refused at once.
  CloneRequest dup;
  dup.source_vm_id = gold;
  dup.name = "full";
  EXPECT_EQ(lab.clone_vm(dup, [](Expected<std::string>) {}).error().kind, ErrorKind::conflict);
}

TEST(LabModel, PowerTransitionsAndConflicts) {
  Lab lab(simple_spec(), virtual_options());
  const auto id = clone_to(lab, "gold", "p", "h1");
  bool running = false;
  ASSERT_TRUE(lab.power_on(id, [&](Expected<void> r) { running = r.has_value(); }).has_value());
  auto again = lab.power_on(id, nullptr);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().kind, ErrorKind::conflict);
  lab.advance(0.2);
  EXPECT_FALSE(running);
  lab.advance(0.1);
  EXPECT_TRUE(running);
  lab.advance(1.5);  // mid os_load: flows active
  EXPECT_GT(lab.flow_stats().active_flows, 0u);
  bool off = false;
  ASSERT_TRUE(lab.power_off(id, [&](Expected<void> r) { off = r.has_value(); }).has_value());
  EXPECT_EQ(lab.flow_stats().active_flows, 0u);  // the boot's I/O and CPU stop at once
  EXPECT_TRUE(lab.run_until_idle(lab.now() + 60));
  EXPECT_TRUE(off);
  const Vm* vm = lab.find_vm(id);
  EXPECT_EQ(vm->power, PowerState::powered_off);
  EXPECT_FALSE(vm->milestone(Milestone::guest_agent).has_value());
  EXPECT_EQ(lab.power_off(id, nullptr).error().kind, ErrorKind::conflict);
  EXPECT_EQ(lab.power_on("vm-999999", nullptr).error().kind, ErrorKind::not_found);
  EXPECT_DOUBLE_EQ(lab.find_host("h1")->memory_used_mb, 0.0);
}

TEST(LabModel, SubscribersSeeAddsMilestonesAndDeletes) {
  Lab lab(simple_spec(), virtual_options());
  std::vector<std::pair<VmEvent::Type, std::optional<Milestone>>> seen;
  std::uint64_t last_rv = 0;
  bool monotonic = true;
  const auto sub = lab.subscribe([&](const VmEvent& e) {
    seen.emplace_back(e.type, e.milestone);
    monotonic = monotonic && e.vm.resource_version > last_rv;
    last_rv = e.vm.resource_version;
  });
  const auto id = clone_to(lab, "gold", "s", "h1");
  storm(lab, {id});
  ASSERT_TRUE(lab.delete_vm(id).has_value());
  EXPECT_EQ(lab.find_vm(id), nullptr);
  EXPECT_EQ(lab.find_vm_by_name("s"), nullptr);
  lab.unsubscribe(sub);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().first, VmEvent::Type::added);
  EXPECT_EQ(seen.back().first, VmEvent::Type::deleted);
  std::vector<Milestone> milestones;
  for (const auto& [type, m] : seen) {
    if (m) milestones.push_back(*m);
  }
  EXPECT_EQ(milestones,
            (std::vector<Milestone>{Milestone::running, Milestone::port_open, Milestone::guest_agent,
                                    Milestone::ip_assigned, Milestone::beacon}));
  EXPECT_TRUE(monotonic);
  EXPECT_EQ(lab.delete_vm(id).error().kind, ErrorKind::not_found);
}

TEST(LabModel, KubeVmsAreScheduledOnNodes) {
  LabSpec spec = simple_spec();
  HostSpec k = spec.hosts.front();
  k.name = "k1";
  k.inventory = "kube";
  spec.hosts.push_back(k);
  spec.kube.nodes = {NodeSpec{"worker-0", "k1", {}}};
  spec.kube.datastore = "ds";
  spec.kube.schedule_delay_s = 0.1;
  spec.kube.launcher_start_s = 2.0;
  spec.golden_images = {GoldenImageSpec{"fedora-golden", "golden", "g", "", ""}};
  Lab lab(spec, virtual_options());
  Lab::CreateVmSpec create;
  create.name = "kvm";
  create.namespace_ = "ns";
  create.profile = "g";
  const auto id = lab.create_vm(create);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(lab.find_vm_by_name("kvm", "ns")->id, *id);
  EXPECT_EQ(lab.find_vm_by_name("kvm"), nullptr);
  EXPECT_EQ(lab.power_on(*id, nullptr, PowerOnOptions{"worker-9"}).error().kind, ErrorKind::not_found);
  storm(lab, {*id});
  const Vm* vm = lab.find_vm(*id);
  EXPECT_EQ(vm->node, "worker-0");
  EXPECT_EQ(vm->host_id, lab.find_host("k1")->id);
  EXPECT_NEAR(*vm->milestone(Milestone::scheduled) - *vm->start_received, 0.1, 1e-6);
  EXPECT_NEAR(*vm->milestone(Milestone::running) - *vm->start_received, 2.1, 1e-6);
  // CDI clone of a golden image: a flow on the datastore, then a VM in the namespace.
  CloneRequest cdi;
  cdi.kind = CloneKind::cdi_csi_clone;
  cdi.source_image = "fedora-golden";
  cdi.source_image_namespace = "golden";
  cdi.name = "from-dv";
  cdi.namespace_ = "ns";
  cdi.created_by_front = "kube";
  std::string made;
  ASSERT_TRUE(lab.clone_vm(cdi, [&](Expected<std::string> r) { made = *r; }).has_value());
  EXPECT_TRUE(lab.run_until_idle(lab.now() + 3600));
  ASSERT_FALSE(made.empty());
  EXPECT_EQ(lab.find_vm(made)->namespace_, "ns");
  bool volume_done = false;
  VolumeCloneRequest volume;
  volume.source_image = "fedora-golden";
  volume.source_image_namespace = "golden";
  ASSERT_TRUE(lab.clone_volume(volume, [&](Expected<void> r) { volume_done = r.has_value(); }).has_value());
  EXPECT_TRUE(lab.run_until_idle(lab.now() + 3600));
  EXPECT_TRUE(volume_done);
}

TEST(LabModel, TruthJsonFollowsTheContract) {
  Lab lab(simple_spec(), virtual_options());
  const auto id = clone_to(lab, "gold", "t", "h1");
  storm(lab, {id});
  const auto truth = nlohmann::json::parse(lab.truth_json());
  ASSERT_EQ(truth["vms"].size(), 1u);
  const auto& vm = truth["vms"][0];
  EXPECT_EQ(vm["name"], "t");
  EXPECT_EQ(vm["id"], id);
  EXPECT_GE(vm["startReceived"].get<double>(), kT0);
  for (const char* m : {"running", "guest_agent", "ip_assigned", "port_open", "beacon"}) {
    ASSERT_TRUE(vm["milestones"].contains(m)) << m;
    EXPECT_GT(vm["milestones"][m].get<double>(), vm["startReceived"].get<double>());
    // Virtual time: the model processes every event at its time, so it is visible exactly then.
    ASSERT_TRUE(vm["visible"].contains(m)) << m;
    EXPECT_DOUBLE_EQ(vm["visible"][m].get<double>(), vm["milestones"][m].get<double>()) << m;
  }
  EXPECT_FALSE(vm.contains("delivered"));  // no front pushed anything
}

TEST(LabModel, DeliveredTimesAreTheFirstPushOfTheCurrentBoot) {
  Lab lab(simple_spec(), virtual_options());
  const auto id = clone_to(lab, "gold", "t", "h1");
  storm(lab, {id});
  const double running = *lab.find_vm(id)->milestone(Milestone::running);
  lab.note_milestone_delivered(id, Milestone::running, running + 0.25);
  lab.note_milestone_delivered(id, Milestone::running, running + 0.5);     // a second watcher: later, ignored
  lab.note_milestone_delivered("vm-999999", Milestone::running, running);  // unknown VM: ignored
  lab.note_milestone_written(id, Milestone::guest_agent, running + 1);     // never delivered: ignored
  lab.note_milestone_written(id, Milestone::running, running + 0.3);
  lab.note_milestone_written(id, Milestone::running, running + 0.6);  // the second watcher's write: ignored
  auto vm = nlohmann::json::parse(lab.truth_json())["vms"][0];
  ASSERT_TRUE(vm.contains("delivered"));
  EXPECT_DOUBLE_EQ(vm["delivered"]["running"].get<double>(), running + 0.25);
  EXPECT_FALSE(vm["delivered"].contains("guest_agent"));
  ASSERT_TRUE(vm.contains("written"));
  EXPECT_DOUBLE_EQ(vm["written"]["running"].get<double>(), running + 0.3);
  EXPECT_FALSE(vm["written"].contains("guest_agent"));
  // A new boot starts a new truth.
  bool off = false;
  ASSERT_TRUE(lab.power_off(id, [&](Expected<void>) { off = true; }).has_value());
  lab.advance(5);
  ASSERT_TRUE(off);
  ASSERT_TRUE(lab.power_on(id, nullptr).has_value());
  lab.advance(0.001);
  vm = nlohmann::json::parse(lab.truth_json())["vms"][0];
  EXPECT_FALSE(vm.contains("delivered"));
  EXPECT_FALSE(vm.contains("written"));
}

TEST(LabModel, BeaconHookFiresOnlyWithAUrl) {
  Lab lab(simple_spec(), virtual_options());
  std::vector<std::string> called;
  lab.set_beacon_hook(
      [&](const Vm& vm) { called.push_back(vm.name + " " + vm.guestinfo.at(std::string(kBeaconUrlKey))); });
  const auto with = clone_to(lab, "gold", "with", "h1");
  const auto without = clone_to(lab, "gold", "without", "h1");
  ASSERT_TRUE(
      lab.modify_vm(with, [](Vm& vm) { vm.guestinfo[std::string(kBeaconUrlKey)] = "http://127.0.0.1:1/b"; }));
  storm(lab, {with, without});
  ASSERT_EQ(called.size(), 1u);
  EXPECT_EQ(called[0], "with http://127.0.0.1:1/b");
}

TEST(LabModel, FaultsJsonPatchIsStrictAndPartial) {
  Faults f;
  ASSERT_TRUE(
      patch_faults_json(f, R"({"errorRate": 0.25, "latencyMs": 40, "neverBootVms": ["a"]})").has_value());
  EXPECT_DOUBLE_EQ(f.error_rate, 0.25);
  EXPECT_DOUBLE_EQ(f.latency_ms, 40);
  EXPECT_EQ(f.never_boot_vms, std::vector<std::string>{"a"});
  EXPECT_EQ(f.error_status, 503);
  EXPECT_FALSE(patch_faults_json(f, R"({"errorRate": 2})").has_value());
  EXPECT_FALSE(patch_faults_json(f, R"({"bogus": 1})").has_value());
  EXPECT_FALSE(patch_faults_json(f, R"({"errorRate": 0.5, "latencyMs": "x"})").has_value());
  EXPECT_DOUBLE_EQ(f.error_rate, 0.25);  // all or nothing
  EXPECT_FALSE(patch_faults_json(f, "not json").has_value());
  Faults g;
  ASSERT_TRUE(patch_faults_json(g, faults_to_json(f)).has_value());
  EXPECT_EQ(faults_to_json(g), faults_to_json(f));
}

TEST(LabModel, TenThousandVmsBootInTheSmallLab) {
  auto spec = load_lab_spec("small");
  ASSERT_TRUE(spec.has_value()) << spec.error().what();
  Lab lab(*spec, virtual_options());
  std::vector<std::string> ids;
  const std::vector<std::string> hosts{"host-01", "host-02", "host-03", "host-04"};
  for (int i = 0; i < 10000; ++i) {
    Lab::CreateVmSpec vm;
    vm.name = "scale-" + std::to_string(i);
    vm.profile = "tiny";
    vm.host_id = hosts[i % 4];
    vm.created_by_front = "vcenter";
    auto id = lab.create_vm(vm);
    ASSERT_TRUE(id.has_value());
    ids.push_back(*id);
  }
  storm(lab, ids);
  int ready = 0;
  for (const auto& id : ids) ready += lab.find_vm(id)->milestone(Milestone::beacon) ? 1 : 0;
  EXPECT_EQ(ready, 10000);
  EXPECT_EQ(lab.flow_stats().active_flows, 0u);
}

TEST(LabModel, RealTimeModeFollowsTheClock) {
  boost::asio::io_context io;
  LabSpec spec = simple_spec();
  spec.profiles[0].power_on_s = 0.02;
  spec.profiles[0].phases = {PhaseSpec{"services", 0.5, 0, 0, 0}, PhaseSpec{"agent", 0, 0, 0.05, 0}};
  spec.profiles[0].clone_overhead_s = 0.01;
  LabOptions options;
  options.executor = io.get_executor();
  Lab lab(spec, options);
  const std::string gold = lab.find_vm_by_name("gold")->id;
  const double before = lab.now();
  bool running = false;
  ASSERT_TRUE(lab.power_on(gold, [&](Expected<void> r) { running = r.has_value(); }).has_value());
  io.run_for(std::chrono::milliseconds(500));
  const Vm* vm = lab.find_vm(gold);
  EXPECT_TRUE(running);
  ASSERT_TRUE(vm->milestone(Milestone::beacon).has_value());
  const double boot = *vm->milestone(Milestone::beacon) - *vm->start_received;
  // 0.02 power-on + 0.5 MB at 38 MB/s + 0.05 fixed = 0.0832 s of lab time, on the wall clock.
  EXPECT_NEAR(boot, 0.02 + 0.5 / 38.0 + 0.05, 1e-6);
  EXPECT_GE(*vm->start_received, before);
  EXPECT_LE(*vm->milestone(Milestone::beacon), lab.now());
  // Real time: visible when the lab thread processed it, never before the model time.
  for (Milestone m : {Milestone::running, Milestone::guest_agent, Milestone::beacon}) {
    ASSERT_TRUE(vm->visible[static_cast<std::size_t>(m)].has_value()) << to_string(m);
    EXPECT_GE(*vm->visible[static_cast<std::size_t>(m)], *vm->milestone(m)) << to_string(m);
    EXPECT_LE(*vm->visible[static_cast<std::size_t>(m)], lab.now()) << to_string(m);
  }
  lab.shutdown();
}

}  // namespace
}  // namespace bootstorm::sim::model
