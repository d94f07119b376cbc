// The storage arithmetic of vCenter's real-time statistics (vim25_telemetry.hpp), free of I/O: which counters
// answer which quantity, their units, the samples aligned and summed per host, datastore and VM, and the
// report.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "common/rfc3339.hpp"
#include "providers/vsphere/vim25_provider/vim25_telemetry.hpp"

namespace bootstorm::vsphere::vim25 {

namespace {

constexpr std::array<std::string_view, kStorageQuantities> kCounterNames{
    "numberReadAveraged", "numberWriteAveraged", "read", "write", "totalReadLatency", "totalWriteLatency"};
// Names a warning lists before "and N more".
constexpr std::size_t kNamesListed = 5;

// What turns a counter's value into the report's unit (bytes/s, I/Os per second, seconds per I/O).
std::optional<double> unit_scale(StorageQuantity quantity, const std::string& unit) {
  switch (quantity) {
    case StorageQuantity::reads:
    case StorageQuantity::writes:
      if (unit == "number") return 1.0;
      break;
    case StorageQuantity::read_bytes:
    case StorageQuantity::write_bytes:
      // vSphere's kilobyte is 1024 bytes.
      if (unit == "kiloBytesPerSecond") return 1024.0;
      if (unit == "megaBytesPerSecond") return 1024.0 * 1024.0;
      break;
    case StorageQuantity::read_latency:
    case StorageQuantity::write_latency:
      if (unit == "millisecond") return 1e-3;
      if (unit == "microsecond") return 1e-6;
      break;
  }
  return std::nullopt;
}

// One instance's values at one sample, scaled; unset where vCenter had none (-1, or no series).
using Values = std::array<std::optional<double>, kStorageQuantities>;

// Series whose values cannot be matched to their entity's samples.
struct Misaligned {
  std::size_t count = 0;
  std::string example;
};

// An entity's series of one group: per instance, one Values per sample (in time order). A series carries one
// value per sample; one that carries some but not as many is left out, since which sample each belongs to
// is unknown (govmomi's simulator drops the zeros of its series). An empty one has no values.
std::map<std::string, std::vector<Values>> group_series(const PerfEntityMetric& metric,
                                                        const StorageCounterGroup& group,
                                                        const std::vector<std::size_t>& order,
                                                        const std::string& subject, Misaligned& misaligned) {
  std::map<std::string, std::vector<Values>> out;
  for (const PerfSeries& series : metric.series) {
    for (std::size_t q = 0; q < kStorageQuantities; ++q) {
      const auto& counter = group.counters[q];
      if (!counter || counter->key != series.id.counter_id) continue;
      if (!series.values.empty() && series.values.size() != order.size()) {
        if (misaligned.count++ == 0) {
          misaligned.example =
              fmt::format("{}.{}.average instance \"{}\" of {}: {} values for {} samples", group.group,
                          kCounterNames[q], series.id.instance, subject, series.values.size(), order.size());
        }
        continue;
      }
      auto& rows = out[series.id.instance];
      rows.resize(order.size());
      for (std::size_t k = 0; k < order.size() && !series.values.empty(); ++k) {
        const std::int64_t value = series.values[order[k]];
        if (value >= 0) rows[k][q] = static_cast<double>(value) * counter->scale;
      }
    }
  }
  return out;
}

// The instances whose sum is the entity's I/O: every named one (a disk, an HBA). vCenter may also answer the
// aggregate instance "" for the same I/O; it is read only when there is no named instance, so that nothing
// is counted twice. (A server that echoes the wildcard "*" instead of expanding it, as govmomi's simulator
// does, answers one instance "*": it is taken as the one instance.)
std::vector<std::string> summed_instances(const std::map<std::string, std::vector<Values>>& series) {
  std::vector<std::string> out;
  for (const auto& [instance, rows] : series)
    if (!instance.empty()) out.push_back(instance);
  if (out.empty() && series.count("")) out.push_back("");
  return out;
}

// Rates summed over instances; a latency is the mean per I/O, each instance weighted by its I/Os (by one
// when vCenter has no I/O counter), unset when nothing was read or written. nullopt when no counter had a
// value.
std::optional<api::StorageRates> combine(const std::vector<const Values*>& instances,
                                         const StorageCounterGroup& group) {
  api::StorageRates r;
  bool any = false;
  struct Mean {
    double sum = 0, weight = 0;
  } read_latency, write_latency;
  auto add = [&](const Values& v, StorageQuantity q, double& into) {
    if (const auto& x = v[static_cast<std::size_t>(q)]) {
      into += *x;
      any = true;
    }
  };
  auto weigh = [&](const Values& v, StorageQuantity latency, StorageQuantity ios, Mean& mean) {
    const auto& l = v[static_cast<std::size_t>(latency)];
    if (!l) return;
    any = true;
    if (!group[ios]) {
      mean.sum += *l;
      mean.weight += 1;
    } else if (const auto& n = v[static_cast<std::size_t>(ios)]; n && *n > 0) {
      mean.sum += *l * *n;
      mean.weight += *n;
    }
  };
  for (const Values* v : instances) {
    add(*v, StorageQuantity::reads, r.read_iops);
    add(*v, StorageQuantity::writes, r.write_iops);
    add(*v, StorageQuantity::read_bytes, r.read_bytes_per_s);
    add(*v, StorageQuantity::write_bytes, r.write_bytes_per_s);
    weigh(*v, StorageQuantity::read_latency, StorageQuantity::reads, read_latency);
    weigh(*v, StorageQuantity::write_latency, StorageQuantity::writes, write_latency);
  }
  if (!any) return std::nullopt;
  if (read_latency.weight > 0) r.read_latency_s = read_latency.sum / read_latency.weight;
  if (write_latency.weight > 0) r.write_latency_s = write_latency.sum / write_latency.weight;
  return r;
}

struct TotalsSum {
  api::StorageTotals totals;
  double latency_sum = 0, latency_ios = 0;
};

}  // namespace

std::string listed_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kNamesListed; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kNamesListed) out += fmt::format(" and {} more", names.size() - kNamesListed);
  return out;
}

std::string_view counter_name(StorageQuantity quantity) {
  return kCounterNames[static_cast<std::size_t>(quantity)];
}

bool StorageCounterGroup::any() const {
  return std::any_of(counters.begin(), counters.end(), [](const auto& c) { return c.has_value(); });
}

StorageCounters resolve_storage_counters(const PerfCounterMap& counters, std::vector<std::string>& missing) {
  StorageCounters out;
  for (StorageCounterGroup* group : {&out.virtual_disk, &out.datastore, &out.storage_adapter}) {
    for (std::size_t q = 0; q < kStorageQuantities; ++q) {
      const std::string name = group->group + "." + std::string(kCounterNames[q]) + ".average";
      auto it = counters.find(name);
      if (it == counters.end()) {
        missing.push_back(name);
        continue;
      }
      auto scale = unit_scale(static_cast<StorageQuantity>(q), it->second.unit);
      if (!scale) {
        missing.push_back(name + " (in " + (it->second.unit.empty() ? "no unit" : it->second.unit) + ")");
        continue;
      }
      group->counters[q] = StorageCounter{it->second.key, *scale};
    }
  }
  return out;
}

std::string datastore_instance_of_url(std::string_view url) {
  while (!url.empty() && url.back() == '/') url.remove_suffix(1);
  const auto slash = url.rfind('/');
  return std::string(slash == std::string_view::npos ? url : url.substr(slash + 1));
}

double fc_usable_bytes_per_s(std::int64_t speed) {
  if (speed <= 0) return 0;
  const double gbit = speed < 1'000'000 ? static_cast<double>(speed) : static_cast<double>(speed) / 1e9;
  return gbit * 1e8;
}

api::TelemetryReport build_storage_report(const std::vector<PerfEntityMetric>& metrics,
                                          const StorageCounters& counters, const PerfSubjects& subjects,
                                          double from, double to) {
  api::TelemetryReport report;
  report.source = std::string(kPerfSourceName);
  report.resolution_s = kRealtimeIntervalS;
  report.from = from;
  report.to = to;
  std::map<std::pair<api::StorageSubject, std::string>, TotalsSum> totals;
  std::set<std::string> wildcard_hosts;
  Misaligned misaligned;

  auto add = [&](api::StorageSubject kind, const std::string& subject, double t_from, double t_to,
                 const api::StorageRates& rates) {
    report.samples.push_back(api::StorageSample{kind, subject, t_from, t_to, rates});
    TotalsSum& sum = totals[{kind, subject}];
    sum.totals.kind = kind;
    sum.totals.subject = subject;
    const double dt = t_to - t_from;
    sum.totals.read_bytes += rates.read_bytes_per_s * dt;
    sum.totals.write_bytes += rates.write_bytes_per_s * dt;
    sum.totals.read_ios += rates.read_iops * dt;
    sum.totals.write_ios += rates.write_iops * dt;
    if (rates.read_latency_s && rates.read_iops > 0) {
      sum.latency_sum += *rates.read_latency_s * rates.read_iops * dt;
      sum.latency_ios += rates.read_iops * dt;
    }
  };

  for (const PerfEntityMetric& metric : metrics) {
    const bool vm = metric.entity.type == "VirtualMachine";
    const auto& names = vm ? subjects.vms : subjects.hosts;
    const auto name = names.find(metric.entity.value);
    if (name == names.end()) continue;  // not asked about (or neither a VM nor a host)
    // vCenter answers in time order; a server that does not (govmomi's simulator) is sorted here.
    std::vector<std::size_t> order(metric.samples.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return metric.samples[a].timestamp < metric.samples[b].timestamp;
    });
    std::vector<std::pair<double, double>> spans(order.size());  // [T - interval, T] in unix seconds
    std::vector<bool> inside(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      const PerfSample& s = metric.samples[order[k]];
      const double end = unix_seconds(s.timestamp);
      spans[k] = {end - (s.interval_s > 0 ? s.interval_s : kRealtimeIntervalS), end};
      inside[k] = spans[k].second > from && spans[k].first < to;
    }
    auto summed = [&](api::StorageSubject kind, const std::string& subject,
                      const StorageCounterGroup& group) {
      const auto series = group_series(metric, group, order, subject, misaligned);
      const auto instances = summed_instances(series);
      for (std::size_t k = 0; k < order.size(); ++k) {
        if (!inside[k]) continue;
        std::vector<const Values*> row;
        for (const auto& instance : instances) row.push_back(&series.at(instance)[k]);
        if (auto rates = combine(row, group)) add(kind, subject, spans[k].first, spans[k].second, *rates);
      }
    };
    if (vm) {
      summed(api::StorageSubject::vm, name->second, counters.virtual_disk);
      continue;
    }
    summed(api::StorageSubject::host, name->second, counters.storage_adapter);
    // Per datastore: each instance is one datastore; "" (an aggregate) is not one.
    for (const auto& [instance, rows] :
         group_series(metric, counters.datastore, order, name->second, misaligned)) {
      if (instance.empty()) continue;
      if (instance == "*") {
        wildcard_hosts.insert(name->second);
        continue;
      }
      const auto ds = subjects.datastores.find(instance);
      const std::string subject =
          name->second + "/" + (ds == subjects.datastores.end() ? instance : ds->second);
      for (std::size_t k = 0; k < order.size(); ++k) {
        if (!inside[k]) continue;
        if (auto rates = combine({&rows[k]}, counters.datastore))
          add(api::StorageSubject::datastore, subject, spans[k].first, spans[k].second, *rates);
      }
    }
  }

  std::sort(report.samples.begin(), report.samples.end(), [](const auto& a, const auto& b) {
    return std::tie(a.kind, a.subject, a.from) < std::tie(b.kind, b.subject, b.from);
  });
  for (auto& [key, sum] : totals) {
    if (sum.latency_ios > 0) sum.totals.read_latency_s = sum.latency_sum / sum.latency_ios;
    report.totals.push_back(std::move(sum.totals));
  }

  auto without_samples = [&](api::StorageSubject kind, const std::map<std::string, std::string>& asked) {
    std::vector<std::string> out;
    for (const auto& [id, subject] : asked)
      if (!totals.count({kind, subject})) out.push_back(subject);
    return out;
  };
  if (auto vms = without_samples(api::StorageSubject::vm, subjects.vms); !vms.empty()) {
    report.warnings.push_back(fmt::format(
        "vCenter has no real-time storage samples in the window for {} of {} VMs ({}): it samples powered-on "
        "VMs only and keeps about an hour of real-time statistics",
        vms.size(), subjects.vms.size(), listed_names(vms)));
  }
  if (auto hosts = without_samples(api::StorageSubject::host, subjects.hosts); !hosts.empty()) {
    report.warnings.push_back(
        fmt::format("vCenter has no real-time storageAdapter samples in the window for {} of {} hosts ({})",
                    hosts.size(), subjects.hosts.size(), listed_names(hosts)));
  }
  if (misaligned.count > 0) {
    report.warnings.push_back(fmt::format(
        "vCenter answered {} series whose values do not match their samples one to one (e.g. {}): they are "
        "left out",
        misaligned.count, misaligned.example));
  }
  if (!wildcard_hosts.empty()) {
    report.warnings.push_back(fmt::format(
        "vCenter answered datastore.* of {} host(s) ({}) with the wildcard instance \"*\" instead of one "
        "instance per datastore: there are no per-datastore samples for them",
        wildcard_hosts.size(), listed_names({wildcard_hosts.begin(), wildcard_hosts.end()})));
  }
  return report;
}

}  // namespace bootstorm::vsphere::vim25
