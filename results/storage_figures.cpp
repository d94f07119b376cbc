// The storage figures of one storm (see the header).
#include "results/storage_figures.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "results/descriptive.hpp"

namespace bootstorm::results {

namespace {

// Interval ends of different subjects meet on the same instants up to clock noise: a millisecond key.
long long instant_key(double t) {
  return std::llround(t * 1000);
}

}  // namespace

StorageFigures storage_figures(const api::TelemetryReport& report, int desktops) {
  StorageFigures f;
  f.source = report.source;
  f.endpoint = report.endpoint;
  f.resolution_s = report.resolution_s;
  f.window_s = std::max(0.0, report.to - report.from);
  f.desktops = desktops;
  f.warnings = report.warnings;
  // The series sums the widest subjects that carry data: the datastore, else the hosts, else the VMs (a
  // source whose datastore and host series are all zeros while its VMs moved bytes would give a peak below
  // the mean).
  auto has = [&](api::StorageSubject kind, bool with_data) {
    return std::any_of(report.samples.begin(), report.samples.end(), [&](const auto& s) {
      const auto& r = s.rates;
      return s.kind == kind &&
             (!with_data || r.read_bytes_per_s + r.write_bytes_per_s + r.read_iops + r.write_iops > 0);
    });
  };
  api::StorageSubject series_kind =
      has(api::StorageSubject::datastore, false) ? api::StorageSubject::datastore : api::StorageSubject::host;
  for (auto kind : {api::StorageSubject::datastore, api::StorageSubject::host, api::StorageSubject::vm}) {
    if (has(kind, true)) {
      series_kind = kind;
      break;
    }
  }
  f.series = series_kind == api::StorageSubject::datastore ? "datastore"
             : series_kind == api::StorageSubject::host    ? "hosts"
                                                           : "vms";

  struct Sum {
    double from = 0, to = 0, bytes_per_s = 0, iops = 0, read_iops = 0, read_latency_weighted = 0;
  };
  std::map<long long, Sum> sums;
  std::map<std::string, HostStorage> hosts;
  std::map<std::pair<std::string, long long>, double> host_intervals;
  std::vector<double> vm_latencies;
  for (const auto& s : report.samples) {
    const double bps = s.rates.read_bytes_per_s + s.rates.write_bytes_per_s;
    const double iops = s.rates.read_iops + s.rates.write_iops;
    if (s.kind == series_kind) {
      Sum& sum = sums[instant_key(s.to)];
      sum.from = sum.bytes_per_s == 0 && sum.iops == 0 && sum.from == 0 ? s.from : std::min(sum.from, s.from);
      sum.to = s.to;
      sum.bytes_per_s += bps;
      sum.iops += iops;
      if (s.rates.read_latency_s && s.rates.read_iops > 0) {
        sum.read_iops += s.rates.read_iops;
        sum.read_latency_weighted += *s.rates.read_latency_s * s.rates.read_iops;
      }
    }
    if (s.kind == api::StorageSubject::host) {
      HostStorage& h = hosts[s.subject];
      h.host = s.subject;
      // Shards of one storm each saw their own VMs on a host: the same interval adds up.
      host_intervals[{s.subject, instant_key(s.to)}] += bps;
      h.bytes += bps * (s.to - s.from);
    }
    if (s.kind == api::StorageSubject::vm && s.rates.read_latency_s && s.rates.read_iops > 0) {
      vm_latencies.push_back(*s.rates.read_latency_s);
    }
  }
  for (const auto& [key, sum] : sums) {
    StoragePoint p;
    p.from = sum.from;
    p.to = sum.to;
    p.bytes_per_s = sum.bytes_per_s;
    p.iops = sum.iops;
    if (sum.read_iops > 0) p.read_latency_s = sum.read_latency_weighted / sum.read_iops;
    f.peak_bytes_per_s = std::max(f.peak_bytes_per_s, p.bytes_per_s);
    f.peak_iops = std::max(f.peak_iops, p.iops);
    f.points.push_back(p);
  }
  // Totals: the VMs' exact ones where the source has them, else the series integrated.
  bool vm_totals = false;
  for (const auto& t : report.totals) {
    if (t.kind != api::StorageSubject::vm) continue;
    vm_totals = true;
    f.bytes += t.read_bytes + t.write_bytes;
    f.ios += t.read_ios + t.write_ios;
  }
  if (!vm_totals) {
    for (const auto& p : f.points) {
      f.bytes += p.bytes_per_s * (p.to - p.from);
      f.ios += p.iops * (p.to - p.from);
    }
  }
  // The mean over the time the amounts were measured: the window, or the samples' span where whole samples
  // reach beyond it (vCenter's 20 s samples around an 8 s storm).
  double span = f.window_s;
  if (!f.points.empty()) {
    double lo = f.points.front().from, hi = f.points.front().to;
    for (const auto& p : f.points) {
      lo = std::min(lo, p.from);
      hi = std::max(hi, p.to);
    }
    span = std::max(span, hi - lo);
  }
  if (span > 0) f.mean_bytes_per_s = f.bytes / span;
  if (desktops > 0) {
    f.peak_iops_per_desktop = f.peak_iops / desktops;
    if (span > 0) f.mean_iops_per_desktop = f.ios / span / desktops;
  }
  if (!vm_latencies.empty()) {
    f.read_latency_p50_s = quantile(vm_latencies, 0.5);
    f.read_latency_p95_s = quantile(vm_latencies, 0.95);
  }
  for (const auto& [key, bps] : host_intervals) {
    HostStorage& h = hosts[key.first];
    h.peak_bytes_per_s = std::max(h.peak_bytes_per_s, bps);
  }
  for (auto& [name, h] : hosts) {
    if (auto it = report.link_capacity_bytes_per_s.find(name);
        it != report.link_capacity_bytes_per_s.end() && it->second > 0) {
      h.capacity_bytes_per_s = it->second;
      h.peak_utilisation = h.peak_bytes_per_s / it->second;
    }
    f.hosts.push_back(h);
  }
  return f;
}

namespace {

using nlohmann::json;

json optional_ms(const std::optional<double>& seconds) {
  return seconds ? json(std::round(*seconds * 1e6) / 1e3) : json(nullptr);
}

double mb(double bytes_per_s) {
  return std::round(bytes_per_s / 1e3) / 1e3;  // MB/s to the kB/s
}

std::optional<double> seconds_from_ms(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>() / 1e3;
}

double num(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace

json storage_figures_json(const StorageFigures& f) {
  json hosts = json::array();
  for (const auto& h : f.hosts) {
    json entry{
        {"host", h.host}, {"peakMBps", mb(h.peak_bytes_per_s)}, {"MB", std::round(h.bytes / 1e3) / 1e3}};
    if (h.capacity_bytes_per_s) entry["linkCapacityMBps"] = mb(*h.capacity_bytes_per_s);
    if (h.peak_utilisation) entry["peakLinkUtilisation"] = std::round(*h.peak_utilisation * 1e4) / 1e4;
    hosts.push_back(std::move(entry));
  }
  json points = json::array();
  for (const auto& p : f.points) {
    points.push_back(json::array(
        {p.from, p.to, mb(p.bytes_per_s), std::round(p.iops * 10) / 10, optional_ms(p.read_latency_s)}));
  }
  return {{"source", f.source},
          {"endpoint", f.endpoint},
          {"series", f.series},
          {"resolutionS", f.resolution_s},
          {"windowS", std::round(f.window_s * 1e3) / 1e3},
          {"desktops", f.desktops},
          {"MB", std::round(f.bytes / 1e3) / 1e3},
          {"ios", std::round(f.ios)},
          {"peakMBps", mb(f.peak_bytes_per_s)},
          {"meanMBps", mb(f.mean_bytes_per_s)},
          {"peakIops", std::round(f.peak_iops * 10) / 10},
          {"peakIopsPerDesktop", std::round(f.peak_iops_per_desktop * 100) / 100},
          {"meanIopsPerDesktop", std::round(f.mean_iops_per_desktop * 100) / 100},
          {"readLatencyP50Ms", optional_ms(f.read_latency_p50_s)},
          {"readLatencyP95Ms", optional_ms(f.read_latency_p95_s)},
          {"hosts", std::move(hosts)},
          // [from, to, MB/s, IOPS, read latency ms]
          {"points", std::move(points)},
          {"warnings", f.warnings}};
}

std::optional<StorageFigures> storage_figures_from_json(const json& j) {
  if (!j.is_object() || !j.contains("source")) return std::nullopt;
  StorageFigures f;
  f.source = j.value("source", "");
  f.endpoint = j.value("endpoint", "");
  f.series = j.value("series", "");
  f.resolution_s = num(j, "resolutionS");
  f.window_s = num(j, "windowS");
  f.desktops = static_cast<int>(num(j, "desktops"));
  f.bytes = num(j, "MB") * 1e6;
  f.ios = num(j, "ios");
  f.peak_bytes_per_s = num(j, "peakMBps") * 1e6;
  f.mean_bytes_per_s = num(j, "meanMBps") * 1e6;
  f.peak_iops = num(j, "peakIops");
  f.peak_iops_per_desktop = num(j, "peakIopsPerDesktop");
  f.mean_iops_per_desktop = num(j, "meanIopsPerDesktop");
  f.read_latency_p50_s = seconds_from_ms(j, "readLatencyP50Ms");
  f.read_latency_p95_s = seconds_from_ms(j, "readLatencyP95Ms");
  if (auto it = j.find("hosts"); it != j.end() && it->is_array()) {
    for (const auto& h : *it) {
      if (!h.is_object()) continue;
      HostStorage host;
      host.host = h.value("host", "");
      host.peak_bytes_per_s = num(h, "peakMBps") * 1e6;
      host.bytes = num(h, "MB") * 1e6;
      if (h.contains("linkCapacityMBps")) host.capacity_bytes_per_s = num(h, "linkCapacityMBps") * 1e6;
      if (h.contains("peakLinkUtilisation")) host.peak_utilisation = num(h, "peakLinkUtilisation");
      f.hosts.push_back(std::move(host));
    }
  }
  if (auto it = j.find("points"); it != j.end() && it->is_array()) {
    for (const auto& p : *it) {
      if (!p.is_array() || p.size() != 5 || !p[0].is_number() || !p[1].is_number() || !p[2].is_number() ||
          !p[3].is_number())
        continue;
      StoragePoint point{p[0].get<double>(), p[1].get<double>(), p[2].get<double>() * 1e6, p[3].get<double>(),
                         p[4].is_number() ? std::optional<double>(p[4].get<double>() / 1e3) : std::nullopt};
      f.points.push_back(point);
    }
  }
  if (auto it = j.find("warnings"); it != j.end() && it->is_array()) {
    for (const auto& w : *it)
      if (w.is_string()) f.warnings.push_back(w.get<std::string>());
  }
  return f;
}

}  // namespace bootstorm::results
