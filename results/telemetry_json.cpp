// The JSON form of a storm's storage telemetry (see the header).
#include "results/telemetry_json.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace bootstorm::results {

namespace {

using nlohmann::json;

std::optional<api::StorageSubject> subject_from(const std::string& text) {
  for (auto kind : {api::StorageSubject::vm, api::StorageSubject::host, api::StorageSubject::datastore}) {
    if (text == api::to_string(kind)) return kind;
  }
  return std::nullopt;
}

double number(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::optional<double> optional_number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

json telemetry_json(const api::TelemetryReport& report) {
  json samples = json::array();
  for (const auto& s : report.samples) {
    json entry{{"kind", api::to_string(s.kind)},
               {"subject", s.subject},
               {"from", s.from},
               {"to", s.to},
               {"readBps", s.rates.read_bytes_per_s},
               {"writeBps", s.rates.write_bytes_per_s},
               {"readIops", s.rates.read_iops},
               {"writeIops", s.rates.write_iops}};
    if (s.rates.read_latency_s) entry["readLatencyS"] = *s.rates.read_latency_s;
    if (s.rates.write_latency_s) entry["writeLatencyS"] = *s.rates.write_latency_s;
    samples.push_back(std::move(entry));
  }
  json totals = json::array();
  for (const auto& t : report.totals) {
    json entry{{"kind", api::to_string(t.kind)}, {"subject", t.subject},  {"readBytes", t.read_bytes},
               {"writeBytes", t.write_bytes},    {"readIos", t.read_ios}, {"writeIos", t.write_ios}};
    if (t.read_latency_s) entry["readLatencyS"] = *t.read_latency_s;
    totals.push_back(std::move(entry));
  }
  json capacity = json::object();
  for (const auto& [host, bps] : report.link_capacity_bytes_per_s) capacity[host] = bps;
  return {{"source", report.source},
          {"endpoint", report.endpoint},
          {"resolutionS", report.resolution_s},
          {"from", report.from},
          {"to", report.to},
          {"samples", std::move(samples)},
          {"totals", std::move(totals)},
          {"linkCapacityBps", std::move(capacity)},
          {"warnings", report.warnings}};
}

void merge_telemetry(api::TelemetryReport& into, api::TelemetryReport other) {
  into.from = std::min(into.from, other.from);
  into.to = std::max(into.to, other.to);
  into.resolution_s = std::max(into.resolution_s, other.resolution_s);
  for (auto& s : other.samples) into.samples.push_back(std::move(s));
  for (auto& t : other.totals) {
    auto same = std::find_if(into.totals.begin(), into.totals.end(), [&](const api::StorageTotals& x) {
      return x.kind == t.kind && x.subject == t.subject;
    });
    if (same == into.totals.end()) {
      into.totals.push_back(std::move(t));
      continue;
    }
    // A host of both shards: amounts add, the latency is weighted by reads.
    const double reads = same->read_ios + t.read_ios;
    if (same->read_latency_s && t.read_latency_s && reads > 0) {
      same->read_latency_s =
          (*same->read_latency_s * same->read_ios + *t.read_latency_s * t.read_ios) / reads;
    }
    same->read_bytes += t.read_bytes;
    same->write_bytes += t.write_bytes;
    same->read_ios += t.read_ios;
    same->write_ios += t.write_ios;
  }
  for (auto& [host, bps] : other.link_capacity_bytes_per_s) into.link_capacity_bytes_per_s.emplace(host, bps);
  for (auto& w : other.warnings) into.warnings.push_back(std::move(w));
}

std::optional<api::TelemetryReport> telemetry_from_json(const json& j) {
  if (!j.is_object() || !j.contains("source")) return std::nullopt;
  api::TelemetryReport report;
  report.source = text(j, "source");
  report.endpoint = text(j, "endpoint");
  report.resolution_s = number(j, "resolutionS");
  report.from = number(j, "from");
  report.to = number(j, "to");
  if (auto it = j.find("samples"); it != j.end() && it->is_array()) {
    for (const auto& s : *it) {
      if (!s.is_object()) continue;
      auto kind = subject_from(text(s, "kind"));
      if (!kind) continue;
      api::StorageSample sample;
      sample.kind = *kind;
      sample.subject = text(s, "subject");
      sample.from = number(s, "from");
      sample.to = number(s, "to");
      sample.rates.read_bytes_per_s = number(s, "readBps");
      sample.rates.write_bytes_per_s = number(s, "writeBps");
      sample.rates.read_iops = number(s, "readIops");
      sample.rates.write_iops = number(s, "writeIops");
      sample.rates.read_latency_s = optional_number(s, "readLatencyS");
      sample.rates.write_latency_s = optional_number(s, "writeLatencyS");
      report.samples.push_back(std::move(sample));
    }
  }
  if (auto it = j.find("totals"); it != j.end() && it->is_array()) {
    for (const auto& t : *it) {
      if (!t.is_object()) continue;
      auto kind = subject_from(text(t, "kind"));
      if (!kind) continue;
      api::StorageTotals total;
      total.kind = *kind;
      total.subject = text(t, "subject");
      total.read_bytes = number(t, "readBytes");
      total.write_bytes = number(t, "writeBytes");
      total.read_ios = number(t, "readIos");
      total.write_ios = number(t, "writeIos");
      total.read_latency_s = optional_number(t, "readLatencyS");
      report.totals.push_back(std::move(total));
    }
  }
  if (auto it = j.find("linkCapacityBps"); it != j.end() && it->is_object()) {
    for (const auto& [host, bps] : it->items()) {
      if (bps.is_number()) report.link_capacity_bytes_per_s[host] = bps.get<double>();
    }
  }
  if (auto it = j.find("warnings"); it != j.end() && it->is_array()) {
    for (const auto& w : *it) {
      if (w.is_string()) report.warnings.push_back(w.get<std::string>());
    }
  }
  return report;
}

}  // namespace bootstorm::results
