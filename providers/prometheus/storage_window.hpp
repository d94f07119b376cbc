#pragma once
// KubeVirt's per-VMI storage counters over a storm's window, made into bootstorm's telemetry: per-VMI rates
// between consecutive scrapes, per-node sums on a common grid, and exact totals from counter deltas.
//
// bootstorm reads the raw scraped samples (a range selector, `metric{namespace="ns"}[window]`), not rate():
// differences between scrapes are exact, they carry the scrape interval (the data's resolution), and
// rate() would extrapolate at a series' start and end, which is all of a short storm. A rate() over two
// scrape intervals evaluated at a scrape instant equals the figure here.
//
// A scenario of more VMIs than the source reads one by one (PrometheusSourceOptions::per_vmi_limit) is read
// as per-node sums instead: `sum by (node)` of the raw counters, evaluated by a range query on a grid that
// ends at the window's end. Differences between the grid's instants are exact there too (each instant takes
// every VMI's last scrape); what is lost is the per-VMI detail and the read latency percentiles over VMIs.
//
// Pure: the queries are built and the answers read here; the source (prometheus_source.hpp) does the I/O.
#include <array>
#include <optional>
#include <string>
#include <vector>

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

// ---- Per-node sums --------------------------------------------------------------------------------------

// A RE2 pattern for the run's VMIs of one scenario: their names' common prefix (cut back to before any
// trailing digits), then `[0-9]+` when every name goes on with digits alone, else `.*`. bootstorm's names
// ("bs-<run id>-<scenario>-<nnn>") give "bs-<run id>-<scenario>-[0-9]+". No names: ".*".
std::string name_pattern(const std::vector<std::string>& names);

// `sum by (node) (metric{namespace="ns",name=~"pattern"})` for metric `index`.
std::string node_sum_query(std::size_t index, const std::string& namespace_, const std::string& pattern);

// The range query's instants: end = the window's end, start = the first instant at or before its start,
// `step` apart (widened so that there are at most 10,000).
struct NodeSumGrid {
  double start = 0, end = 0, step = 0;
};
NodeSumGrid node_sum_grid(const api::TelemetryRequest& request, double step);

// The report from the six range answers (kStorageMetrics order): each node's amounts between consecutive
// instants as host samples, and its totals over the window. A sum that drops (a VMI deleted or restarted)
// counts nothing for that interval. `scrape_s` is the data's resolution.
Expected<api::TelemetryReport> node_sum_report(const std::array<QueryAnswer, 6>& answers,
                                               const api::TelemetryRequest& request, const NodeSumGrid& grid,
                                               double scrape_s);

}  // namespace bootstorm::prometheus
