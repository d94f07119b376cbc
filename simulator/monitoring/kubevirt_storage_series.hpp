#pragma once
// KubeVirt's per-VMI storage counters as Prometheus has scraped them from virt-handler, made from the lab's
// storage counters (model::StorageTelemetry): one series per metric and boot of a VM of the Kubernetes front,
// with a sample at every scrape instant (multiples of the lab's scrape interval in unix time) from the VMI's
// start to its stop, while the counters are known.
//
//   kubevirt_vmi_storage_iops_read_total / _iops_write_total           I/Os
//   kubevirt_vmi_storage_read_traffic_bytes_total / _write_traffic_...  bytes
//   kubevirt_vmi_storage_read_times_seconds_total / _write_times_...    summed I/O latency, seconds
//
// Labels: name, namespace, node, drive ("rootdisk"), job and instance (virt-handler on the node). Counts of
// I/Os and bytes are whole numbers, as virt-handler reports them.
//
// Besides, `up` of each node's virt-handler target (job "kubevirt-prometheus-metrics", 1 at every scrape
// since `since`), as Prometheus records for every target it scrapes: clients learn the scrape interval from
// it.
#include <string>
#include <vector>

#include "simulator/model/lab.hpp"
#include "simulator/prometheus/series_store.hpp"

namespace bootstorm::sim::monitoring {

inline constexpr const char* kDriveName = "rootdisk";
inline constexpr const char* kScrapeJob = "kubevirt-prometheus-metrics";

// The metric names above, in the order of their IoCounters fields.
const std::vector<std::string>& kubevirt_storage_metric_names();

class KubevirtStorageSeries : public prometheus::SeriesStore {
 public:
  // `telemetry` must outlive the store (the lab's, read on the lab's executor).
  // `nodes`: the Kubernetes nodes (one virt-handler target each), scraped since `since` (unix s).
  KubevirtStorageSeries(const model::StorageTelemetry& telemetry, double scrape_interval_s,
                        std::vector<std::string> nodes, double since);

  std::vector<prometheus::Series> select(const std::vector<prometheus::Matcher>& matchers, double from,
                                         double to) const override;

 private:
  const model::StorageTelemetry& telemetry_;
  double interval_;
  std::vector<std::string> nodes_;
  double since_;
};

}  // namespace bootstorm::sim::monitoring
