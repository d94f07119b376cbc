#pragma once
// What held the guests' boots back in the lab (Lab::boot_limits, accounted in flow_network.cpp): the types a
// capacity search reads to name the resource that bound a layout.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bootstorm::sim::model {

// What held the guests' boots back (Lab::boot_limits). A boot's reads and CPU run as flows whose rate is
// bounded either by a shared resource (a host's CPU cores, HBA link or I/O bus; a datastore's bandwidth or
// IOPS) or by the VM's own limit: its reads' per-I/O latency at its queue depth (Little's law), its vCPUs.
enum class LimitKind {
  host_cpu,
  host_link,
  host_bus,
  datastore_bandwidth,
  datastore_iops,
  per_io_latency,
  vcpus
};
std::string_view to_string(LimitKind kind);  // "host CPU", "host link", ..., "per-I/O latency", "vCPUs"

struct BootLimit {
  LimitKind kind = LimitKind::per_io_latency;
  std::string on;               // the host's or datastore's name; empty for a VM's own limit
  double capacity = 0;          // cores x core speed, MB/s or IOPS; 0 for a VM's own limit
  double flow_seconds = 0;      // boot flows held at this limit, summed over the time they were held
  double peak_utilisation = 0;  // resources: the highest share of the capacity the boots used at once
};

struct BootLimits {
  double since = 0;               // unix s: the lab's start or the last reset_boot_limits()
  std::vector<BootLimit> limits;  // every host's three resources, every datastore's two, then the VM limits
  std::map<std::string, int> memory_refusals;  // power-ons refused for lack of host memory, by host name
};

}  // namespace bootstorm::sim::model
