#pragma once
// The storage figures of one storm, from its telemetry: what a VDI sizing engineer reads after the boot
// times — peak and mean MB/s, peak IOPS and IOPS per desktop, read latency P50/P95, and how full each host's
// link was. Pure computation.
//
// The storage series is the sum over subjects per interval: the datastore as every host saw it where the
// source has that (vSphere's per-host datastore counters), else the hosts (vSphere's HBA links, KubeVirt's
// nodes), else the VMs; a kind whose samples are all zeros gives way to the next that carries data.
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "providers/api/storage_telemetry.hpp"

namespace bootstorm::results {

struct HostStorage {
  std::string host;
  double peak_bytes_per_s = 0;                 // read + write, the busiest interval
  std::optional<double> capacity_bytes_per_s;  // the HBA link's, where the platform says it
  std::optional<double> peak_utilisation;      // peak / capacity
  double bytes = 0;                            // over the window
  bool operator==(const HostStorage&) const = default;
};

// One interval of the storage series (summed over subjects), for the panel and the peaks.
struct StoragePoint {
  double from = 0, to = 0;               // unix s
  double bytes_per_s = 0;                // read + write
  double iops = 0;                       // read + write
  std::optional<double> read_latency_s;  // read-I/O-weighted mean over the subjects
  bool operator==(const StoragePoint&) const = default;
};

struct StorageFigures {
  std::string source;  // prometheus, vsphere-perf
  std::string endpoint;
  std::string series;  // what the series sums: "datastore", "hosts" or "vms"
  double resolution_s = 0;
  double window_s = 0;  // from before the first start to one step after the last ready
  // Means are over the window, or over the samples' span where whole samples reach beyond it.
  int desktops = 0;
  double bytes = 0;  // read + write over the window
  double ios = 0;
  double peak_bytes_per_s = 0;
  double mean_bytes_per_s = 0;
  double peak_iops = 0;
  double peak_iops_per_desktop = 0;
  double mean_iops_per_desktop = 0;
  std::optional<double> read_latency_p50_s, read_latency_p95_s;  // over the VMs' intervals with reads
  std::vector<HostStorage> hosts;
  std::vector<StoragePoint> points;
  std::vector<std::string> warnings;
  bool operator==(const StorageFigures&) const = default;
};

StorageFigures storage_figures(const api::TelemetryReport& report, int desktops);

// summary.json's scenario "telemetry" (MB/s as 1e6 bytes/s, latency in ms), and back (nullopt when `j` is not
// such an object).
nlohmann::json storage_figures_json(const StorageFigures& f);
std::optional<StorageFigures> storage_figures_from_json(const nlohmann::json& j);

}  // namespace bootstorm::results
