#pragma once
// vCenter's real-time storage statistics as an api::TelemetrySource ("vsphere-perf"), read through the vim25
// provider's session from the PerformanceManager after the storm:
//
//  * per VM: virtualDisk.* (every disk of the VM summed);
//  * per host: storageAdapter.* summed over its HBAs (vmhba0, vmhba1, ...): what crossed the host's links;
//  * per host and datastore: datastore.* of the host, one instance per datastore (its UUID, named through
//    the datastores' summary.url).
//
// Each group reads numberReadAveraged / numberWriteAveraged (I/Os per second), read / write (KB/s, KB = 1024
// bytes) and totalReadLatency / totalWriteLatency (ms per I/O), rollup "average", at vCenter's real-time
// interval of 20 s. vCenter gives rates, not counters: a window's totals are its samples' rates times 20 s.
//
// The source holds the provider by reference: it must not outlive it (the provider's liveness token turns a
// late collect() into an Error instead of a use after free).
#include <array>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "protocol/vim25/performance.hpp"
#include "providers/api/telemetry.hpp"

namespace bootstorm::vsphere::vim25 {

class Vim25Provider;

inline constexpr std::string_view kPerfSourceName = "vsphere-perf";

// The six quantities of each counter group, in this order.
enum class StorageQuantity { reads, writes, read_bytes, write_bytes, read_latency, write_latency };
inline constexpr std::size_t kStorageQuantities = 6;
// "numberReadAveraged", "numberWriteAveraged", "read", "write", "totalReadLatency", "totalWriteLatency".
std::string_view counter_name(StorageQuantity quantity);

// A counter vCenter has, and the factor that turns its values into bytes/s, I/Os per second or seconds.
struct StorageCounter {
  int key = 0;
  double scale = 1;
};

// One group's counters ("virtualDisk", "datastore", "storageAdapter"); a quantity vCenter lacks is unset.
struct StorageCounterGroup {
  std::string group;
  std::array<std::optional<StorageCounter>, kStorageQuantities> counters;
  bool any() const;
  const std::optional<StorageCounter>& operator[](StorageQuantity q) const {
    return counters[static_cast<std::size_t>(q)];
  }
};

struct StorageCounters {
  StorageCounterGroup virtual_disk{"virtualDisk", {}}, datastore{"datastore", {}},
      storage_adapter{"storageAdapter", {}};
};

// The eighteen counters looked up in `perfCounter` by "group.name.average". `missing` gets each one vCenter
// lacks, or has in a unit this source cannot convert, as "group.name.average" (with the unit when that is the
// reason).
StorageCounters resolve_storage_counters(const PerfCounterMap& counters, std::vector<std::string>& missing);

// The names the report gives the entities and instances vCenter answers about.
struct PerfSubjects {
  std::map<std::string, std::string> vms;         // VirtualMachine moref value -> VM name
  std::map<std::string, std::string> hosts;       // HostSystem moref value -> host name
  std::map<std::string, std::string> datastores;  // datastore.* instance (the datastore's UUID) -> name
};

// The report from QueryPerf's answers, for the window [from, to] (unix seconds): a sample (the mean over
// [T - interval, T]) is in the report, and counts toward the totals, when its interval overlaps the window.
// Warnings (subjects without samples, instances it cannot place) go to the report's `warnings`.
api::TelemetryReport build_storage_report(const std::vector<PerfEntityMetric>& metrics,
                                          const StorageCounters& counters, const PerfSubjects& subjects,
                                          double from, double to);

// The datastore UUID, the instance of the datastore.* counters, from a datastore's URL: the last path
// segment ("ds:///vmfs/volumes/5f1a2b3c-.../" -> "5f1a2b3c-..."); "" when there is none.
std::string datastore_instance_of_url(std::string_view url);

// Usable bytes/s, per direction, of a Fibre Channel HBA reporting `speed`. vSphere's reference says bits
// per second, but ESXi reports the link's class in Gbit (8, 16, 32), so a value under 1,000,000 is taken as
// Gbit and a larger one as bit/s converted to Gbit. The FC classes are named for their payload rate: nGFC
// carries n x 100 MB/s (8GFC 800 MB/s, 16GFC 1,600 MB/s, 32GFC 3,200 MB/s; MB = 10^6 bytes), so the usable
// rate is Gbit x 10^8 bytes/s, not Gbit x 10^9 / 8 (the line rate before encoding and framing). 0 when the
// link is down (speed 0 or negative).
double fc_usable_bytes_per_s(std::int64_t speed);

// "a, b, c, d, e and 3 more": names in a finding or a log line.
std::string listed_names(const std::vector<std::string>& names);

class Vim25PerfSource final : public api::TelemetrySource {
 public:
  // `alive` expires when the provider is destroyed.
  Vim25PerfSource(Vim25Provider& provider, std::weak_ptr<const void> alive);

  std::string name() const override { return std::string(kPerfSourceName); }
  // The real-time refresh rate of the request's first host (else VM): QueryPerfProviderSummary. vCenter's
  // is 20 s; collect() queries at the rate found (20 s until asked).
  boost::asio::awaitable<Expected<double>> sample_step_s(const api::TelemetryRequest& request) override;
  // Counter ids (read once), the window's VMs and hosts by name, their datastores and HBAs, then QueryPerf
  // (intervalId = the refresh rate, startTime = from - one interval, endTime = to). Partial answers are
  // warnings; an Error says why nothing could be read.
  boost::asio::awaitable<Expected<api::TelemetryReport>> collect(
      const api::TelemetryRequest& request) override;

 private:
  struct Entities;
  boost::asio::awaitable<Expected<void>> resolve_counters();
  boost::asio::awaitable<Expected<Entities>> resolve_entities(const api::TelemetryRequest& request,
                                                              std::vector<std::string>& warnings);
  boost::asio::awaitable<Expected<std::vector<PerfEntityMetric>>> query(std::vector<PerfQuerySpec> specs,
                                                                        const PerfSubjects& subjects,
                                                                        std::vector<std::string>& warnings,
                                                                        const CancelSignal& cancel);
  Error perf_error(const Error& e) const;

  Vim25Provider& provider_;
  std::weak_ptr<const void> alive_;
  std::optional<StorageCounters> counters_;
  int interval_s_ = kRealtimeIntervalS;
  std::vector<std::string> missing_counters_;
};

}  // namespace bootstorm::vsphere::vim25
