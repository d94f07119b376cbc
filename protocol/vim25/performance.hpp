#pragma once
// vCenter's PerformanceManager, the pure half: the request bodies of QueryPerf and QueryPerfCounter, the
// PropertyCollector spec that reads the manager's `perfCounter`, and the decoders of their answers. No I/O:
// the vim25 provider's telemetry source (vim25_provider/vim25_telemetry.hpp) makes the calls.
//
// Counters are named "group.name.rollup" ("virtualDisk.read.average"), as vSphere's documentation and tools
// name them; their numeric keys differ between vCenters and are only known from `perfCounter`.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "protocol/vim25/types.hpp"
#include "protocol/vim25/xml.hpp"

namespace bootstorm::vsphere::vim25 {

// vCenter's real-time statistics: hosts sample every 20 s (PerfProviderSummary.refreshRate) and vCenter
// keeps about an hour of them.
inline constexpr int kRealtimeIntervalS = 20;

// A metric: a counter of one instance ("" the entity's aggregate; "*" in a query asks for every instance).
struct PerfMetricId {
  int counter_id = 0;
  std::string instance;
  friend bool operator==(const PerfMetricId&, const PerfMetricId&) = default;
};

// PerfQuerySpec: what to read of one entity. Times are vCenter's clock: startTime is exclusive, endTime
// inclusive.
struct PerfQuerySpec {
  MoRef entity;
  std::optional<std::chrono::system_clock::time_point> start_time, end_time;
  // Real-time queries only: the most recent samples of the range, at most this many.
  std::optional<int> max_sample;
  std::vector<PerfMetricId> metric_ids;
  std::optional<int> interval_id = kRealtimeIntervalS;
  std::string format = "normal";  // "csv" answers PerfEntityMetricCSV, which the decoder refuses
};

// PerformanceManager.QueryPerf with one PerfQuerySpec per entity.
std::string query_perf(const MoRef& perf_manager, const std::vector<PerfQuerySpec>& specs);
// PerformanceManager.QueryPerfProviderSummary: whether `entity` has real-time statistics, and how often.
std::string query_perf_provider_summary(const MoRef& perf_manager, const MoRef& entity);
// Its answer's refreshRate in seconds when the entity has real-time statistics (currentSupported); nullopt
// when it has none.
Expected<std::optional<int>> decode_refresh_rate(const XmlNode& response);
// PerformanceManager.QueryPerfCounter: the PerfCounterInfo of counters whose keys are known.
std::string query_perf_counter(const MoRef& perf_manager, const std::vector<int>& counter_ids);
// The PropertyCollector spec for the manager's `perfCounter` (every counter vCenter has), for
// RetrievePropertiesEx.
PropertyFilterSpec perf_counter_spec(const MoRef& perf_manager);

// One PerfCounterInfo: its key and what its values are.
struct PerfCounter {
  int key = 0;
  std::string unit;        // unitInfo.key: "kiloBytesPerSecond", "millisecond", "number", "percent", ...
  std::string stats_type;  // "rate", "absolute", "delta"
};
// By "group.name.rollup" (groupInfo.key, nameInfo.key, rollupType). A name vCenter lists twice keeps the
// first key.
using PerfCounterMap = std::map<std::string, PerfCounter>;

// The `perfCounter` property's value (ArrayOfPerfCounterInfo).
Expected<PerfCounterMap> decode_perf_counters(const Value& perf_counter);
// QueryPerfCounter's answer: one <returnval> per counter asked.
Expected<PerfCounterMap> decode_query_perf_counter(const XmlNode& response);

// One sample time of an entity: the end of the `interval_s` the values are the mean (or the last) of.
struct PerfSample {
  std::chrono::system_clock::time_point timestamp{};
  int interval_s = 0;
};

// PerfMetricIntSeries: one value per sample, in the entity's sample order; vCenter writes -1 where it has no
// value (the callers skip negative values).
struct PerfSeries {
  PerfMetricId id;
  std::vector<std::int64_t> values;
};

// PerfEntityMetric: what vCenter answered for one entity.
struct PerfEntityMetric {
  MoRef entity;
  std::vector<PerfSample> samples;
  std::vector<PerfSeries> series;
};

// QueryPerf's answer: one PerfEntityMetric per entity that had statistics (vCenter leaves out entities it
// cannot resolve). A PerfEntityMetricCSV (format "csv") is refused: ErrorKind::protocol.
Expected<std::vector<PerfEntityMetric>> decode_query_perf(const XmlNode& response);

}  // namespace bootstorm::vsphere::vim25
