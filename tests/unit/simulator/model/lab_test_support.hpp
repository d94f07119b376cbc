#pragma once
// Helpers shared by the model tests: small lab specs built in code, cloning and storming in virtual time.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simulator/model/lab.hpp"

namespace bootstorm::sim::model::testing {

inline constexpr double kT0 = 1'800'000'000.0;  // virtual start, unix seconds

// One cluster, `hosts` identical hosts h1..hN, one datastore, one golden VM "gold" with profile "g".
inline LabSpec simple_spec(int hosts = 1, double link_mbps = 1000, double latency_ms = 0.5,
                           double jitter = 0) {
  LabSpec s;
  s.name = "unit";
  s.seed = 11;
  s.clusters = {ClusterSpec{"c1"}};
  for (int i = 1; i <= hosts; ++i) {
    HostSpec h;
    h.name = "h" + std::to_string(i);
    h.cluster = "c1";
    h.cores = 16;
    h.core_speed = 1.0;
    h.link_mbps = link_mbps;
    h.bus_mbps = 1e6;
    h.memory_gb = 1024;
    h.io_latency_ms = latency_ms;
    s.hosts.push_back(h);
  }
  DatastoreSpec d;
  d.name = "ds";
  d.mbps = 1e6;
  d.iops = 1e9;
  d.latency_ms = 0.5;
  s.datastores.push_back(d);
  GuestProfile p;
  p.name = "g";
  p.cpu_count = 2;
  p.memory_mb = 1024;
  p.io_size_kb = 19;
  p.outstanding_ios = 2;
  p.power_on_s = 0.25;
  p.ip_delay_s = 0.1;
  p.port_phase = "services";
  p.port_delay_s = 0.05;
  p.agent_phase = "agent";
  p.clone_overhead_s = 1.0;
  p.linked_delta_mb = 50;
  p.disk_used_gb = 2;
  p.phases = {PhaseSpec{"firmware", 0, 0, 0.7, jitter}, PhaseSpec{"os_load", 100, 1, 0, jitter},
              PhaseSpec{"services", 0, 4, 0, jitter}, PhaseSpec{"agent", 10, 0.1, 0, jitter},
              PhaseSpec{"logon", 20, 0, 0, jitter}};
  s.profiles.push_back(p);
  s.golden_vms.push_back(GoldenVmSpec{"gold", "h1", "ds", "g", ""});
  return s;
}

inline LabOptions virtual_options(std::optional<std::uint64_t> seed = std::nullopt) {
  LabOptions o;
  o.mode = LabOptions::TimeMode::virtual_time;
  o.virtual_start = kT0;
  o.seed = seed;
  return o;
}

// Linked-clones `source` to `name` on `host` and runs until the clone completes; returns the new VM id.
inline std::string clone_to(Lab& lab, const std::string& source_name, const std::string& name,
                            const std::string& host, CloneKind kind = CloneKind::linked) {
  const Vm* source = lab.find_vm_by_name(source_name);
  EXPECT_NE(source, nullptr);
  CloneRequest request;
  request.kind = kind;
  request.source_vm_id = source->id;
  request.name = name;
  request.host_id = host;
  std::string id;
  auto op = lab.clone_vm(request, [&](Expected<std::string> result) {
    EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().what());
    if (result) id = *result;
  });
  EXPECT_TRUE(op.has_value()) << (op ? "" : op.error().what());
  EXPECT_TRUE(lab.run_until_idle(lab.now() + 3600));
  return id;
}

// Powers every VM on at the same instant and runs until all are idle; returns the VM ids.
inline void storm(Lab& lab, const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    auto r = lab.power_on(id, nullptr);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().what());
  }
  EXPECT_TRUE(lab.run_until_idle(lab.now() + 36000));
}

inline double mean_since_start(const Lab& lab, const std::vector<std::string>& ids, Milestone m) {
  double sum = 0;
  for (const auto& id : ids) {
    const Vm* vm = lab.find_vm(id);
    EXPECT_TRUE(vm && vm->milestone(m).has_value());
    if (!vm || !vm->milestone(m)) return -1;
    sum += *vm->milestone(m) - *vm->start_received;
  }
  return sum / static_cast<double>(ids.size());
}

}  // namespace bootstorm::sim::model::testing
