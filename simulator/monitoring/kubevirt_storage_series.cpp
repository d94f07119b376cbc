// KubeVirt's storage counters, scraped from the lab's storage telemetry (see the header).
#include "simulator/monitoring/kubevirt_storage_series.hpp"

#include <cmath>

namespace bootstorm::sim::monitoring {

namespace {

double field(const model::IoCounters& c, std::size_t index) {
  switch (index) {
    case 0:
      return std::floor(c.read_ios);
    case 1:
      return std::floor(c.write_ios);
    case 2:
      return std::floor(c.read_bytes);
    case 3:
      return std::floor(c.write_bytes);
    case 4:
      return c.read_seconds;
    default:
      return c.write_seconds;
  }
}

}  // namespace

const std::vector<std::string>& kubevirt_storage_metric_names() {
  static const std::vector<std::string> names = {
      "kubevirt_vmi_storage_iops_read_total",          "kubevirt_vmi_storage_iops_write_total",
      "kubevirt_vmi_storage_read_traffic_bytes_total", "kubevirt_vmi_storage_write_traffic_bytes_total",
      "kubevirt_vmi_storage_read_times_seconds_total", "kubevirt_vmi_storage_write_times_seconds_total"};
  return names;
}

KubevirtStorageSeries::KubevirtStorageSeries(const model::StorageTelemetry& telemetry,
                                             double scrape_interval_s, std::vector<std::string> nodes,
                                             double since)
    : telemetry_(telemetry), interval_(scrape_interval_s), nodes_(std::move(nodes)), since_(since) {}

std::vector<prometheus::Series> KubevirtStorageSeries::select(
    const std::vector<prometheus::Matcher>& matchers, double from, double to) const {
  std::vector<prometheus::Series> out;
  const auto& names = kubevirt_storage_metric_names();
  const double last = std::min(to, telemetry_.sampled_until);
  for (const auto& node : nodes_) {
    prometheus::Labels labels{{prometheus::metric_name_label, "up"},
                              {"job", kScrapeJob},
                              {"instance", node + ":8443"},
                              {"namespace", "openshift-cnv"},
                              {"pod", "virt-handler-" + node}};
    if (!prometheus::matches_all(matchers, labels)) continue;
    prometheus::Series series;
    series.labels = std::move(labels);
    for (double k = std::ceil(std::max(from, since_) / interval_ - 1e-9); k * interval_ <= last + 1e-9;
         k += 1) {
      series.samples.push_back({k * interval_, 1});
    }
    out.push_back(std::move(series));
  }
  for (const auto& vm : telemetry_.vms) {
    if (vm.namespace_.empty()) continue;  // a vCenter VM: no VMI, no virt-handler
    const double first = std::max(from, vm.begin);
    const double until = vm.end ? std::min(last, *vm.end) : last;
    for (std::size_t m = 0; m < names.size(); ++m) {
      prometheus::Labels labels{{prometheus::metric_name_label, names[m]},
                                {"name", vm.name},
                                {"namespace", vm.namespace_},
                                {"node", vm.node},
                                {"drive", kDriveName},
                                {"job", "kubevirt-prometheus-metrics"},
                                {"instance", vm.node + ":8443"}};
      if (!prometheus::matches_all(matchers, labels)) continue;
      prometheus::Series series;
      series.labels = std::move(labels);
      // Scrapes fall on multiples of the interval; the lab's grid holds every one of them.
      for (double k = std::ceil(first / interval_ - 1e-9); k * interval_ <= until + 1e-9; k += 1) {
        const double at = k * interval_;
        series.samples.push_back({at, field(vm.history.at(at + 1e-6), m)});  // at, not just before
      }
      out.push_back(std::move(series));
    }
  }
  return out;
}

}  // namespace bootstorm::sim::monitoring
