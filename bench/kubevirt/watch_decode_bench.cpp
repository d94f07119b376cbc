// Watch decoding throughput of the KubeVirt provider: one VirtualMachineInstance watch line (as the lab's
// Kubernetes front writes it, ~3 KB) decoded into a WatchEvent, and then turned into milestone events by the
// VmiTracker — the provider's whole per-line work on the observe path. items_per_second is VMI events/s.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "protocol/kube/watch_decode.hpp"
#include "providers/kubevirt/kube_objects.hpp"
#include "providers/kubevirt/vmi_tracker.hpp"

namespace {

using bootstorm::kube::WatchDecode;
using nlohmann::json;

// A Running VMI with the fields the simulator (and KubeVirt) fills in: spec with domain, devices, volumes,
// cloud-init user data; status with phase transitions, conditions, interfaces, guest OS info, volume status.
std::string vmi_line(int index, const char* type = "MODIFIED") {
  const std::string name = fmt::format("bs-1a2b3c-storm-{:05d}", index);
  const std::string ts = "2026-11-30T10:00:01Z";
  json spec = {
      {"domain",
       {{"cpu", {{"cores", 1}, {"sockets", 1}, {"threads", 1}}},
        {"memory", {{"guest", "256Mi"}}},
        {"resources", {{"requests", {{"memory", "256Mi"}}}}},
        {"firmware", {{"uuid", "5d307ca9-b3ef-428c-8861-06e72d69f223"}}},
        {"machine", {{"type", "q35"}}},
        {"devices",
         {{"disks", json::array({{{"name", "rootdisk"}, {"disk", {{"bus", "virtio"}}}},
                                 {{"name", "cloudinitdisk"}, {"disk", {{"bus", "virtio"}}}}})},
          {"interfaces", json::array({{{"name", "default"}, {"masquerade", json::object()}}})}}}}},
      {"networks", json::array({{{"name", "default"}, {"pod", json::object()}}})},
      {"nodeSelector", {{"kubernetes.io/hostname", "worker-1"}}},
      {"volumes",
       json::array({{{"name", "rootdisk"}, {"dataVolume", {{"name", name + "-rootdisk"}}}},
                    {{"name", "cloudinitdisk"},
                     {"cloudInitNoCloud",
                      {{"userData",
                        "#cloud-config\nwrite_files:\n- path: /etc/bootstorm/beacon.env\n  content: |\n"
                        "    BOOTSTORM_BEACON_URL=http://10.0.0.1:8080/v1/ready\n"
                        "    BOOTSTORM_BEACON_TOKEN=0123456789abcdef0123456789abcdef\n"}}}}})}};
  json conditions = json::array();
  for (const char* c : {"Ready", "LiveMigratable", "AgentConnected", "PodScheduled"}) {
    conditions.push_back(
        {{"type", c}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", ts}});
  }
  json status = {
      {"phase", "Running"},
      {"nodeName", "worker-1"},
      {"phaseTransitionTimestamps", json::array({{{"phase", "Pending"}, {"phaseTransitionTimestamp", ts}},
                                                 {{"phase", "Scheduling"}, {"phaseTransitionTimestamp", ts}},
                                                 {{"phase", "Scheduled"}, {"phaseTransitionTimestamp", ts}},
                                                 {{"phase", "Running"}, {"phaseTransitionTimestamp", ts}}})},
      {"conditions", conditions},
      {"interfaces", json::array({{{"name", "default"},
                                   {"mac", "02:1a:2b:3c:4d:00"},
                                   {"infoSource", "domain, guest-agent"},
                                   {"queueCount", 1},
                                   {"linkState", "up"},
                                   {"podInterfaceName", "eth0"},
                                   {"interfaceName", "eth0"},
                                   {"ipAddress", "10.1.4.7"},
                                   {"ipAddresses", json::array({"10.1.4.7"})}}})},
      {"guestOSInfo",
       {{"id", "fedora"}, {"name", "Fedora Linux"}, {"version", "39"}, {"kernelRelease", "6.5.6"}}},
      {"qosClass", "Burstable"},
      {"activePods", {{"9f3c1e0a-4b8d-4f5e-9a7c-2d1b0e6f8a31", "worker-1"}}},
      {"migrationMethod", "BlockMigration"},
      {"migrationTransport", "Unix"},
      {"currentCPUTopology", {{"cores", 1}, {"sockets", 1}, {"threads", 1}}},
      {"launcherContainerImageVersion",
       "registry.redhat.io/container-native-virtualization/virt-launcher-rhel9:v4.16"},
      {"volumeStatus",
       json::array({{{"name", "rootdisk"}, {"target", ""}}, {{"name", "cloudinitdisk"}, {"target", ""}}})}};
  json object = {{"apiVersion", "kubevirt.io/v1"},
                 {"kind", "VirtualMachineInstance"},
                 {"metadata",
                  {{"name", name},
                   {"namespace", "bootstorm"},
                   {"uid", "9f3c1e0a-4b8d-4f5e-9a7c-2d1b0e6f8a31"},
                   {"resourceVersion", std::to_string(100000 + index)},
                   {"generation", 1},
                   {"creationTimestamp", ts},
                   {"labels",
                    {{"bootstorm.io/run", "1a2b3c"},
                     {"bootstorm.io/scenario", "storm"},
                     {"kubevirt.io/vm", name},
                     {"vm.kubevirt.io/name", name},
                     {"kubevirt.io/nodeName", "worker-1"}}},
                   {"annotations",
                    {{"kubevirt.io/vm-generation", "2"},
                     {"kubevirt.io/latest-observed-api-version", "v1"},
                     {"kubevirt.io/storage-observed-api-version", "v1"}}},
                   {"ownerReferences", json::array({{{"apiVersion", "kubevirt.io/v1"},
                                                     {"kind", "VirtualMachine"},
                                                     {"name", name},
                                                     {"uid", "1c6f2a3b-0d4e-4f5a-8b9c-7d6e5f4a3b2c"},
                                                     {"controller", true},
                                                     {"blockOwnerDeletion", true}}})},
                   {"finalizers", json::array({"kubevirt.io/virtualMachineControllerFinalize",
                                               "foregroundDeleteVirtualMachine"})}}},
                 {"spec", spec},
                 {"status", status}};
  return json{{"type", type}, {"object", object}}.dump();
}

std::vector<std::string> lines(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(vmi_line(i));
  return out;
}

void decode(benchmark::State& state, WatchDecode mode) {
  const auto input = lines(1000);
  std::size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const std::string& line = input[i++ % input.size()];
    auto ev = bootstorm::kube::decode_watch_line(line, mode);
    if (!ev) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(ev);
    bytes += line.size();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

void BM_DecodeVmiWatchLine_Full(benchmark::State& state) {
  decode(state, WatchDecode::full);
}
void BM_DecodeVmiWatchLine_MilestoneFields(benchmark::State& state) {
  decode(state, WatchDecode::milestone_fields);
}

// The watch thread's per-line work: the line cut down to the fields the milestones need before it is handed
// to the provider's loop (compact_watch_line). During a burst of VMI updates this, with the socket read, is
// what the watch thread must keep up with; bytes_per_second is the rate of the line's bytes.
void BM_CompactVmiWatchLine(benchmark::State& state) {
  const auto input = lines(1000);
  std::size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const std::string& line = input[i++ % input.size()];
    auto compact = bootstorm::kube::compact_watch_line(line);
    if (!compact) state.SkipWithError("compaction failed");
    benchmark::DoNotOptimize(compact);
    bytes += line.size();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

// The observe path per line: decode (status only, as the provider does) and reconcile into milestones. Every
// VM is new to the tracker the first time round (4 milestones each), then each line is a no-op update.
void BM_DecodeAndTrackVmiEvents(benchmark::State& state) {
  const int vms = static_cast<int>(state.range(0));
  const auto input = lines(vms);
  std::vector<std::string> names;
  for (int i = 0; i < vms; ++i) names.push_back(fmt::format("bs-1a2b3c-storm-{:05d}", i));
  std::size_t milestones = 0, i = 0;
  auto tracker =
      std::make_unique<bootstorm::kubevirt::VmiTracker>(names, bootstorm::kube::ClientInstant::now());
  for (auto _ : state) {
    if (i % input.size() == 0) {
      state.PauseTiming();
      tracker =
          std::make_unique<bootstorm::kubevirt::VmiTracker>(names, bootstorm::kube::ClientInstant::now());
      state.ResumeTiming();
    }
    auto ev = bootstorm::kube::decode_watch_line(input[i++ % input.size()], WatchDecode::milestone_fields);
    auto events = tracker->on_watch_object(ev->object, bootstorm::kube::ClientInstant::now(), false, 0);
    milestones += events.size();
    benchmark::DoNotOptimize(events);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.counters["milestones"] = static_cast<double>(milestones);
}

}  // namespace

BENCHMARK(BM_DecodeVmiWatchLine_Full);
BENCHMARK(BM_DecodeVmiWatchLine_MilestoneFields);
BENCHMARK(BM_CompactVmiWatchLine);
BENCHMARK(BM_DecodeAndTrackVmiEvents)->Arg(1000)->Arg(10000);
