// vCenter's PerformanceManager, the pure half (see performance.hpp). Field order follows the schema's
// sequences (PerfQuerySpec: entity, startTime, endTime, maxSample, metricId, intervalId, format).
#include "protocol/vim25/performance.hpp"

#include <charconv>

#include "common/rfc3339.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "protocol/vim25/xml_writer.hpp"

namespace bootstorm::vsphere::vim25 {
namespace {

Error malformed(std::string_view what, std::string_view why) {
  return make_error(ErrorKind::protocol, "the vim25 " + std::string(what) + " " + std::string(why),
                    "the endpoint does not answer as vCenter's /sdk does; check platform.endpoint");
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// xsd:int / xsd:long: an optional sign, digits, surrounding whitespace allowed by the schema's collapse.
template <class Int>
std::optional<Int> integer(std::string_view text) {
  text = trimmed(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  Int out{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return out;
}

std::string xsd_date_time(std::chrono::system_clock::time_point t) {
  return format_rfc3339(t, Rfc3339Fraction::millis);
}

Expected<std::pair<std::string, PerfCounter>> decode_counter(const Value& info) {
  const std::string what = "PerfCounterInfo";
  auto key = integer<int>(info.field_text("key"));
  if (!key) return malformed(what, "has no integer key");
  const Value* name = info.field("nameInfo");
  const Value* group = info.field("groupInfo");
  if (!name || name->field_text("key").empty())
    return malformed(what, "of counter " + std::to_string(*key) + " has no nameInfo.key");
  if (!group || group->field_text("key").empty())
    return malformed(what, "of counter " + std::to_string(*key) + " has no groupInfo.key");
  PerfCounter counter;
  counter.key = *key;
  if (const Value* unit = info.field("unitInfo")) counter.unit = unit->field_text("key");
  counter.stats_type = info.field_text("statsType");
  std::string full = group->field_text("key") + "." + name->field_text("key") + "." +
                     std::string(trimmed(info.field_text("rollupType")));
  return std::pair{std::move(full), std::move(counter)};
}

}  // namespace

std::string query_perf(const MoRef& perf_manager, const std::vector<PerfQuerySpec>& specs) {
  XmlWriter w("QueryPerf");
  w.moref("_this", perf_manager);
  for (const PerfQuerySpec& spec : specs) {
    w.open("querySpec").moref("entity", spec.entity);
    if (spec.start_time) w.leaf("startTime", xsd_date_time(*spec.start_time));
    if (spec.end_time) w.leaf("endTime", xsd_date_time(*spec.end_time));
    if (spec.max_sample) w.leaf("maxSample", *spec.max_sample);
    for (const PerfMetricId& id : spec.metric_ids)
      w.open("metricId").leaf("counterId", id.counter_id).leaf("instance", id.instance).close();
    if (spec.interval_id) w.leaf("intervalId", *spec.interval_id);
    if (!spec.format.empty()) w.leaf("format", spec.format);
    w.close();
  }
  return w.finish();
}

std::string query_perf_provider_summary(const MoRef& perf_manager, const MoRef& entity) {
  XmlWriter w("QueryPerfProviderSummary");
  w.moref("_this", perf_manager);
  w.moref("entity", entity);
  return w.finish();
}

Expected<std::optional<int>> decode_refresh_rate(const XmlNode& response) {
  const XmlNode rv = response.child("returnval");
  if (!rv) return malformed("QueryPerfProviderSummary's answer", "has no returnval");
  if (trimmed(rv.child_text("currentSupported").value_or("false")) != "true") return std::optional<int>{};
  auto rate = integer<int>(rv.child_text("refreshRate").value_or(""));
  if (!rate || *rate <= 0) return malformed("PerfProviderSummary", "has no positive integer refreshRate");
  return std::optional<int>(*rate);
}

std::string query_perf_counter(const MoRef& perf_manager, const std::vector<int>& counter_ids) {
  XmlWriter w("QueryPerfCounter");
  w.moref("_this", perf_manager);
  for (int id : counter_ids) w.leaf("counterId", id);
  return w.finish();
}

PropertyFilterSpec perf_counter_spec(const MoRef& perf_manager) {
  return objects_filter_spec({perf_manager}, "PerformanceManager", {"perfCounter"});
}

Expected<PerfCounterMap> decode_perf_counters(const Value& perf_counter) {
  PerfCounterMap out;
  // ArrayOfPerfCounterInfo: every field is one PerfCounterInfo (named so; any name is taken).
  for (const ValueField& field : perf_counter.fields) {
    auto counter = decode_counter(field.value);
    if (!counter) return counter.error();
    out.try_emplace(std::move(counter->first), counter->second);
  }
  return out;
}

Expected<PerfCounterMap> decode_query_perf_counter(const XmlNode& response) {
  PerfCounterMap out;
  for (const XmlNode& rv : response.children("returnval")) {
    auto counter = decode_counter(decode_value(rv));
    if (!counter) return counter.error();
    out.try_emplace(std::move(counter->first), counter->second);
  }
  return out;
}

Expected<std::vector<PerfEntityMetric>> decode_query_perf(const XmlNode& response) {
  std::vector<PerfEntityMetric> out;
  for (const XmlNode& rv : response.children("returnval")) {
    const std::string type = rv.type_name();
    if (type == "PerfEntityMetricCSV" || rv.child("sampleInfoCSV")) {
      return make_error(
          ErrorKind::protocol,
          "vCenter answered QueryPerf in CSV (PerfEntityMetricCSV) although bootstorm asked for "
          "format \"normal\"",
          "the endpoint does not answer QueryPerf as vCenter does; check platform.endpoint");
    }
    PerfEntityMetric metric;
    metric.entity = decode_moref(rv.child("entity"));
    if (metric.entity.empty()) return malformed("PerfEntityMetric", "has no entity");
    const std::string what = "PerfEntityMetric of " + metric.entity.str();
    for (const XmlNode& info : rv.children("sampleInfo")) {
      const auto stamp = info.child_text("timestamp");
      if (!stamp) return malformed(what, "has a sampleInfo without timestamp");
      auto at = parse_rfc3339(trimmed(*stamp));
      if (!at) return malformed(what, "has a sampleInfo timestamp that is not an xsd:dateTime: " + *stamp);
      auto interval = integer<int>(info.child_text("interval").value_or(""));
      if (!interval) return malformed(what, "has a sampleInfo without an integer interval");
      metric.samples.push_back(PerfSample{*at, *interval});
    }
    for (const XmlNode& value : rv.children("value")) {
      if (value.type_name() == "PerfMetricSeriesCSV")
        return malformed(what, "has a CSV series (PerfMetricSeriesCSV) in a \"normal\" answer");
      const XmlNode id = value.child("id");
      auto counter = integer<int>(id.child_text("counterId").value_or(""));
      if (!counter) return malformed(what, "has a series without an integer id.counterId");
      PerfSeries series;
      series.id = {*counter, id.child_text("instance").value_or("")};
      // PerfMetricIntSeries: its longs are <value> children of the series (itself a <value>).
      for (const XmlNode& v : value.children("value")) {
        auto n = integer<std::int64_t>(v.text());
        if (!n) return malformed(what, "has a series value that is not an xsd:long: " + v.text());
        series.values.push_back(*n);
      }
      metric.series.push_back(std::move(series));
    }
    out.push_back(std::move(metric));
  }
  return out;
}

}  // namespace bootstorm::vsphere::vim25
