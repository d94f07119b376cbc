// Vim25PerfSource: vCenter's real-time storage statistics (see vim25_telemetry.hpp). The arithmetic is in
// build_storage_report(), free of I/O; collect() gathers what it needs through the provider's session.
#include "providers/vsphere/vim25_provider/vim25_telemetry.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <set>

#include "common/rfc3339.hpp"
#include "protocol/vim25/fault.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"

namespace bootstorm::vsphere::vim25 {

namespace asio = boost::asio;

namespace {

constexpr std::array<std::string_view, kStorageQuantities> kCounterNames{
    "numberReadAveraged", "numberWriteAveraged", "read", "write", "totalReadLatency", "totalWriteLatency"};
// Entities per QueryPerf call: a VM's answer over a typical window is a few KB, so this keeps each answer at
// a few MB, well inside the vim25 document limit, and one call for most runs.
constexpr std::size_t kEntitiesPerQuery = 500;
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

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kNamesListed; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kNamesListed) out += fmt::format(" and {} more", names.size() - kNamesListed);
  return out;
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
        vms.size(), subjects.vms.size(), listed(vms)));
  }
  if (auto hosts = without_samples(api::StorageSubject::host, subjects.hosts); !hosts.empty()) {
    report.warnings.push_back(
        fmt::format("vCenter has no real-time storageAdapter samples in the window for {} of {} hosts ({})",
                    hosts.size(), subjects.hosts.size(), listed(hosts)));
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
        wildcard_hosts.size(), listed({wildcard_hosts.begin(), wildcard_hosts.end()})));
  }
  return report;
}

// ---- the source ----

struct Vim25PerfSource::Entities {
  std::vector<MoRef> vms, hosts;
  PerfSubjects subjects;
  std::map<std::string, double> link_capacity;  // host name -> usable bytes/s of its FC HBAs
};

Vim25PerfSource::Vim25PerfSource(Vim25Provider& provider, std::weak_ptr<const void> alive)
    : provider_(provider), alive_(std::move(alive)) {}

Error Vim25PerfSource::perf_error(const Error& e) const {
  Error out = e;
  out.message = "reading storage telemetry from vCenter " + provider_.config_.endpoint + ": " + e.message;
  if (e.kind == ErrorKind::timeout) {
    out.hint =
        "vCenter's statistics service did not answer in time (it is busiest right after a storm); the run's "
        "results stand without telemetry. Set telemetry.source: none to skip it";
  } else if (out.hint.empty()) {
    out.hint = "the run's results stand without telemetry; set telemetry.source: none to skip it";
  }
  return out;
}

asio::awaitable<Expected<void>> Vim25PerfSource::resolve_counters() {
  if (counters_) co_return Expected<void>{};
  Session& session = provider_.session_;
  const MoRef manager = session.service_content().perf_manager;
  if (manager.empty()) {
    co_return make_error(ErrorKind::api,
                         "vCenter " + provider_.config_.endpoint +
                             " names no PerformanceManager in its "
                             "ServiceContent: it has no statistics to read",
                         "set telemetry.source: none");
  }
  // Named arguments, not temporaries in the co_await expression (g++ 12 mis-copies those).
  const std::vector<MoRef> objects{manager};
  const std::string type = "PerformanceManager";
  const std::vector<std::string> paths{"perfCounter"};
  auto read = co_await provider_.read(objects, type, paths);
  if (!read) co_return perf_error(read.error());
  const Value* list = read->empty() ? nullptr : read->front().prop("perfCounter");
  if (!list) {
    co_return perf_error(make_error(ErrorKind::api, "the PerformanceManager's perfCounter could not be read",
                                    "give the user System.View on vCenter (the Read-Only role has it)"));
  }
  auto known = decode_perf_counters(*list);
  if (!known) co_return perf_error(known.error());
  std::vector<std::string> missing;
  StorageCounters counters = resolve_storage_counters(*known, missing);
  if (!counters.virtual_disk.any() && !counters.datastore.any() && !counters.storage_adapter.any()) {
    co_return perf_error(
        make_error(ErrorKind::api,
                   fmt::format("vCenter lists none of the storage counters this source reads "
                               "({} counters known, e.g. virtualDisk.read.average is not)",
                               known->size()),
                   "set telemetry.source: none"));
  }
  counters_ = counters;
  missing_counters_ = std::move(missing);
  co_return Expected<void>{};
}

asio::awaitable<Expected<Vim25PerfSource::Entities>> Vim25PerfSource::resolve_entities(
    const api::TelemetryRequest& request, std::vector<std::string>& warnings) {
  Entities out;
  // VMs and hosts by name: the run knows names; vCenter's statistics are by managed object.
  auto by_name = [&](const std::vector<ObjectContent>& objects) {
    std::map<std::string, MoRef> names;
    for (const auto& o : objects)
      if (const Value* n = o.prop("name")) names.emplace(n->text, o.obj);
    return names;
  };
  const std::string vm_type = "VirtualMachine", host_type = "HostSystem", datastore_type = "Datastore";
  const std::vector<std::string> name_path{"name"},
      host_paths{"datastore", "config.storageDevice.hostBusAdapter"}, datastore_paths{"name", "summary.url"};
  if (!request.vm_names.empty()) {
    auto vms = co_await provider_.read_all(vm_type, name_path);
    if (!vms) co_return perf_error(vms.error());
    const auto names = by_name(*vms);
    std::vector<std::string> gone;
    for (const auto& name : request.vm_names) {
      auto it = names.find(name);
      if (it == names.end()) {
        gone.push_back(name);
        continue;
      }
      if (out.subjects.vms.emplace(it->second.value, name).second) out.vms.push_back(it->second);
    }
    if (!gone.empty())
      warnings.push_back(
          fmt::format("{} of the window's {} VMs are no longer in vCenter ({}): they have no "
                      "storage samples",
                      gone.size(), request.vm_names.size(), listed(gone)));
  }
  if (request.hosts.empty()) co_return out;
  auto hosts = co_await provider_.read_all(host_type, name_path);
  if (!hosts) co_return perf_error(hosts.error());
  const auto host_names = by_name(*hosts);
  std::vector<std::string> unknown;
  for (const auto& name : request.hosts) {
    auto it = host_names.find(name);
    if (it == host_names.end()) {
      unknown.push_back(name);
      continue;
    }
    if (out.subjects.hosts.emplace(it->second.value, name).second) out.hosts.push_back(it->second);
  }
  if (!unknown.empty())
    warnings.push_back(fmt::format("hosts not in vCenter, without storage samples: {}", listed(unknown)));

  // Their HBAs (link capacity) and datastores (names for the datastore.* instances): without them the
  // report still has every rate.
  auto details = co_await provider_.read(out.hosts, host_type, host_paths);
  if (!details) {
    warnings.push_back("the hosts' HBAs and datastores could not be read (" + details.error().what() +
                       "): no link capacity, and datastores are named by their UUID");
    co_return out;
  }
  std::set<MoRef> datastores;
  for (const auto& h : *details) {
    const auto name = out.subjects.hosts.find(h.obj.value);
    if (name == out.subjects.hosts.end()) continue;
    if (const Value* list = h.prop("datastore"))
      for (const auto& field : list->fields) datastores.insert(field.value.moref());
    double capacity = 0;
    if (const Value* hbas = h.prop("config.storageDevice.hostBusAdapter")) {
      for (const auto& field : hbas->fields) {
        // FCoE adapters are Fibre Channel HBAs too (the type derives from HostFibreChannelHba).
        const Value& hba = field.value;
        if (hba.xsi_type != "HostFibreChannelHba" && hba.xsi_type != "HostFibreChannelOverEthernetHba")
          continue;
        const std::string speed = hba.field_text("speed");
        std::int64_t value = 0;
        const auto [end, ec] = std::from_chars(speed.data(), speed.data() + speed.size(), value);
        if (ec == std::errc() && end == speed.data() + speed.size()) capacity += fc_usable_bytes_per_s(value);
      }
    }
    if (capacity > 0) out.link_capacity[name->second] = capacity;
  }
  std::vector<MoRef> datastore_list(datastores.begin(), datastores.end());
  std::erase_if(datastore_list, [](const MoRef& d) { return d.empty(); });
  auto named = co_await provider_.read(datastore_list, datastore_type, datastore_paths);
  if (!named) {
    warnings.push_back("the hosts' datastores could not be read (" + named.error().what() +
                       "): datastores are named by their UUID");
    co_return out;
  }
  for (const auto& d : *named) {
    const Value* name = d.prop("name");
    const Value* url = d.prop("summary.url");
    if (!name || !url) continue;
    if (auto instance = datastore_instance_of_url(url->text); !instance.empty())
      out.subjects.datastores.emplace(std::move(instance), name->text);
  }
  co_return out;
}

asio::awaitable<Expected<std::vector<PerfEntityMetric>>> Vim25PerfSource::query(
    std::vector<PerfQuerySpec> specs, const PerfSubjects& subjects, std::vector<std::string>& warnings,
    const CancelSignal& cancel) {
  std::vector<PerfEntityMetric> out;
  Session& session = provider_.session_;
  const MoRef manager = session.service_content().perf_manager;
  const std::string method = "QueryPerf";
  CallOptions options;
  options.idempotent = true;
  options.keep_fault = true;  // a vanished VM is re-queried without it; NoPermission is explained here
  options.cancel = cancel;
  for (std::size_t begin = 0; begin < specs.size(); begin += kEntitiesPerQuery) {
    const auto end =
        specs.begin() + static_cast<std::ptrdiff_t>(std::min(specs.size(), begin + kEntitiesPerQuery));
    std::vector<PerfQuerySpec> batch(specs.begin() + static_cast<std::ptrdiff_t>(begin), end);
    while (!batch.empty()) {
      const std::string element = query_perf(manager, batch);
      auto reply = co_await session.call(method, element, options);
      if (!reply) co_return perf_error(reply.error());
      if (!reply->is_fault()) {
        auto metrics = decode_query_perf(reply->response());
        if (!metrics) co_return perf_error(metrics.error());
        for (auto& m : *metrics) out.push_back(std::move(m));
        break;
      }
      const SoapFault& fault = reply->fault();
      const std::string what = "vim25 QueryPerf at " + provider_.config_.endpoint + "/sdk";
      if (fault.is("ManagedObjectNotFound")) {
        // One entity vanished (a VM deleted meanwhile): the rest are asked again without it.
        auto gone = std::find_if(batch.begin(), batch.end(),
                                 [&](const PerfQuerySpec& s) { return s.entity.str() == fault.object; });
        if (gone != batch.end()) {
          const auto& names = gone->entity.type == "VirtualMachine" ? subjects.vms : subjects.hosts;
          const auto name = names.find(gone->entity.value);
          warnings.push_back(fmt::format("{} {} vanished before its statistics were read: it has no samples",
                                         gone->entity.type == "VirtualMachine" ? "VM" : "host",
                                         name == names.end() ? gone->entity.value : name->second));
          batch.erase(gone);
          continue;
        }
      }
      if (fault.is("NoPermission")) {
        co_return perf_error(make_error(
            ErrorKind::auth,
            what + " failed: the vCenter user lacks privilege " +
                (fault.privilege.empty() ? std::string("System.Read") : fault.privilege) +
                (fault.object.empty() ? std::string() : " on " + fault.object),
            "reading statistics needs System.View on vCenter and System.Read on the run's VMs and hosts (the "
            "Read-Only role has both): add them to the user's role, or set telemetry.source: none"));
      }
      co_return perf_error(fault_error(fault, what));
    }
  }
  co_return out;
}

asio::awaitable<Expected<double>> Vim25PerfSource::sample_step_s(const api::TelemetryRequest& request) {
  if (alive_.expired()) {
    co_return make_error(
        ErrorKind::internal,
        "the vsphere-perf telemetry source was asked after its vSphere provider was destroyed");
  }
  std::vector<std::string> ignored;
  auto entities = co_await resolve_entities(request, ignored);
  if (!entities) co_return entities.error();
  const MoRef entity = !entities->hosts.empty() ? entities->hosts.front()
                                                : (!entities->vms.empty() ? entities->vms.front() : MoRef{});
  if (entity.empty()) co_return static_cast<double>(interval_s_);
  Session& session = provider_.session_;
  CallOptions options;
  options.idempotent = true;
  options.cancel = request.cancel;
  auto reply = co_await session.call(
      "QueryPerfProviderSummary", query_perf_provider_summary(session.service_content().perf_manager, entity),
      options);
  if (!reply) co_return perf_error(reply.error());
  auto rate = decode_refresh_rate(reply->response());
  if (!rate) co_return perf_error(rate.error());
  if (*rate) interval_s_ = **rate;
  co_return static_cast<double>(interval_s_);
}

asio::awaitable<Expected<api::TelemetryReport>> Vim25PerfSource::collect(
    const api::TelemetryRequest& request) {
  if (alive_.expired()) {
    co_return make_error(
        ErrorKind::internal,
        "the vsphere-perf telemetry source was asked after its vSphere provider was destroyed",
        "collect telemetry before the provider is disconnected and destroyed");
  }
  if (!(request.to > request.from)) {
    co_return make_error(ErrorKind::invalid_input,
                         fmt::format("the telemetry window [{}, {}] is empty", request.from, request.to));
  }
  auto resolved = co_await resolve_counters();
  if (!resolved) co_return resolved.error();
  std::vector<std::string> warnings;
  if (!missing_counters_.empty()) {
    warnings.push_back(
        fmt::format("vCenter {} lacks {} of the storage counters this source reads ({}): the "
                    "report goes without them",
                    provider_.config_.endpoint, missing_counters_.size(), listed(missing_counters_)));
  }
  auto entities = co_await resolve_entities(request, warnings);
  if (!entities) co_return entities.error();
  if (request.cancel.cancelled()) {
    co_return make_error(ErrorKind::cancelled, "vsphere-perf telemetry: interrupted");
  }

  // startTime is exclusive: from - one interval reaches the sample whose interval holds `from`.
  PerfQuerySpec base;
  base.start_time = from_unix_seconds(request.from - interval_s_);
  base.end_time = from_unix_seconds(request.to);
  base.interval_id = interval_s_;
  base.format = "normal";
  // Every sample of the range (vCenter's default without maxSample; govmomi's simulator answers none).
  base.max_sample = static_cast<int>(std::ceil((request.to - request.from) / interval_s_)) + 2;
  auto wildcard = [](const StorageCounterGroup& group, std::vector<PerfMetricId>& ids) {
    for (const auto& c : group.counters)
      if (c) ids.push_back({c->key, "*"});
  };
  std::vector<PerfQuerySpec> specs;
  // A spec without metricId would ask for every metric the entity has: entities are only asked for when
  // their groups have a counter.
  for (const MoRef& vm : entities->vms) {
    PerfQuerySpec spec = base;
    spec.entity = vm;
    wildcard(counters_->virtual_disk, spec.metric_ids);
    if (!spec.metric_ids.empty()) specs.push_back(std::move(spec));
  }
  for (const MoRef& host : entities->hosts) {
    PerfQuerySpec spec = base;
    spec.entity = host;
    wildcard(counters_->storage_adapter, spec.metric_ids);
    wildcard(counters_->datastore, spec.metric_ids);
    if (!spec.metric_ids.empty()) specs.push_back(std::move(spec));
  }
  if (specs.empty()) {
    co_return make_error(ErrorKind::not_found,
                         "none of the telemetry window's VMs and hosts is in vCenter " +
                             provider_.config_.endpoint + " (or vCenter lacks their counters)",
                         "read telemetry before the run's VMs are deleted");
  }
  auto metrics = co_await query(std::move(specs), entities->subjects, warnings, request.cancel);
  if (!metrics) co_return metrics.error();

  api::TelemetryReport report =
      build_storage_report(*metrics, *counters_, entities->subjects, request.from, request.to);
  report.endpoint = provider_.config_.endpoint;
  report.resolution_s = interval_s_;
  report.link_capacity_bytes_per_s = std::move(entities->link_capacity);
  warnings.insert(warnings.end(), report.warnings.begin(), report.warnings.end());
  report.warnings = std::move(warnings);
  spdlog::debug("vsphere-perf: {} samples, {} subjects, {} warnings from {}", report.samples.size(),
                report.totals.size(), report.warnings.size(), report.endpoint);
  co_return report;
}

}  // namespace bootstorm::vsphere::vim25
