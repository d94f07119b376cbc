#pragma once
// KubeVirt's per-VMI storage counters over a storm's window, made into bootstorm's telemetry: per-VMI rates
// between consecutive scrapes, per-node sums on a common grid, and exact totals from counter deltas.
//
// bootstorm reads the raw scraped samples (a range selector, `metric{namespace="ns"}[window]`), not rate():
// differences between scrapes are exact, they carry the scrape interval (the data's resolution), and
// rate() would extrapolate at a series' start and end, which is all of a short storm. A rate() over two
// scrape intervals evaluated at a scrape instant equals the figure here.
//
// Pure: the queries are built and the answers read here; the source (prometheus_source.hpp) does the I/O.
#include <array>
#include <optional>
#include <string>

#include "common/expected.hpp"
#include "providers/api/telemetry.hpp"
#include "providers/prometheus/answer.hpp"

namespace bootstorm::prometheus {

// kubevirt_vmi_storage_*_total, in this order: read I/Os, write I/Os, read bytes, write bytes, read seconds
// (summed latency), write seconds.
inline constexpr std::array<const char*, 6> kStorageMetrics = {
    "kubevirt_vmi_storage_iops_read_total",          "kubevirt_vmi_storage_iops_write_total",
    "kubevirt_vmi_storage_read_traffic_bytes_total", "kubevirt_vmi_storage_write_traffic_bytes_total",
    "kubevirt_vmi_storage_read_times_seconds_total", "kubevirt_vmi_storage_write_times_seconds_total"};

// The raw samples of metric `index` for the VMIs of `namespace_` over the `range_s` seconds before the
// query's time (a PromQL range selector; the namespace is quoted as PromQL strings are).
std::string raw_counter_query(std::size_t index, const std::string& namespace_, double range_s);

// The job of KubeVirt's metrics target (the virt-handlers), as OpenShift's ServiceMonitor names it.
inline constexpr const char* kScrapeJob = "kubevirt-prometheus-metrics";

// The range the window's query needs: the window, plus room for the scrape before it (two scrape intervals
// when known, else two minutes).
double raw_counter_range_s(const api::TelemetryRequest& request, std::optional<double> step_s = std::nullopt);

// The report from the six answers (kStorageMetrics order), for the VMIs named in the request (all when it
// names none). `grid_s`: the width of the per-node bins (the plan's telemetry.interval); unset: the scrape
// interval. `scrape_s`: the scrape interval when the caller knows it (a storm shorter than it has one sample
// per VMI, which tells no spacing); unset, it is the samples' usual spacing.
Expected<api::TelemetryReport> storage_report(const std::array<QueryAnswer, 6>& answers,
                                              const api::TelemetryRequest& request,
                                              std::optional<double> grid_s,
                                              std::optional<double> scrape_s = std::nullopt);

}  // namespace bootstorm::prometheus
