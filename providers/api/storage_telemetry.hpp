#pragma once
// Storage telemetry as plain data: what the platform's monitoring measured during a storm, per VM, host (its
// HBA link) and datastore, and the plan's settings for it. No Asio: the stats and reports read these too;
// the source that reads them is providers/api/telemetry.hpp.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel.hpp"

namespace bootstorm::api {

// The plan's `telemetry` section, resolved.
struct TelemetrySettings {
  std::string source = "auto";       // auto | prometheus | vsphere-perf | none
  std::optional<double> interval_s;  // sample step; unset: the source's native one (scrape interval, 20 s)
  std::string endpoint;              // Prometheus base URL, where it cannot be discovered from the cluster
  std::string token_file;            // bearer token for it (a kubeconfig with client certificates has none)
  std::string ca_file;               // CA of its certificate, besides the platform's
};

// What a subject moved over an interval, as mean rates; latency is the mean per I/O, unset without I/O or
// when the source does not measure it.
struct StorageRates {
  double read_bytes_per_s = 0, write_bytes_per_s = 0;
  double read_iops = 0, write_iops = 0;
  std::optional<double> read_latency_s, write_latency_s;
};

enum class StorageSubject {
  vm,    // one VM's disk (KubeVirt: the VMI's drives; vSphere: virtualDisk)
  host,  // everything a node / ESXi host moved (its HBA link: vSphere storageAdapter; KubeVirt: its VMIs)
  datastore,  // one datastore as one host saw it (vSphere datastore.* per host): subject "host/datastore"
};
const char* to_string(StorageSubject subject) noexcept;  // "vm", "host", "datastore"

struct StorageSample {
  StorageSubject kind = StorageSubject::vm;
  std::string subject;  // VM name, host / node name, "host/datastore"
  double from = 0;      // unix seconds: the interval the rates are the mean of
  double to = 0;
  StorageRates rates;
};

// Exact amounts over the whole window, from counter deltas where the source has counters (Prometheus), else
// the sum of its samples: a storm shorter than the sample step still has its totals.
struct StorageTotals {
  StorageSubject kind = StorageSubject::vm;
  std::string subject;
  double read_bytes = 0, write_bytes = 0;
  double read_ios = 0, write_ios = 0;
  std::optional<double> read_latency_s;  // mean per read over the window
};

struct TelemetryRequest {
  double from = 0;                    // unix seconds: before the first start
  double to = 0;                      // one sample step after the last ready
  std::vector<std::string> vm_names;  // the scenario's VMs (platform names)
  std::vector<std::string> hosts;     // their hosts / nodes
  CancelSignal cancel;                // Ctrl-C: the source stops reading at once (ErrorKind::cancelled)
};

struct TelemetryReport {
  std::string source;       // "prometheus", "vsphere-perf"
  std::string endpoint;     // where it was read (no credentials)
  double resolution_s = 0;  // the step of the samples: the scrape interval, vCenter's 20 s
  double from = 0, to = 0;
  std::vector<StorageSample> samples;
  std::vector<StorageTotals> totals;
  // A host's HBA link capacity in bytes/s, by host name, where the platform says it (vSphere: the Fibre
  // Channel HBA's speed); link utilisation is the host's rate against it.
  std::map<std::string, double> link_capacity_bytes_per_s;
  std::vector<std::string> warnings;  // partial answers: what is missing and why
};

}  // namespace bootstorm::api
