// Vim25PerfSource: vCenter's real-time storage statistics (see vim25_telemetry.hpp). The arithmetic is in
// build_storage_report(), free of I/O; collect() gathers what it needs through the provider's session.
#include "providers/vsphere/vim25_provider/vim25_telemetry.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "common/rfc3339.hpp"
#include "protocol/vim25/fault.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"

namespace bootstorm::vsphere::vim25 {

namespace asio = boost::asio;

namespace {

// Entities per QueryPerf call: a VM's answer over a typical window is a few KB, so this keeps each answer at
// a few MB, well inside the vim25 document limit, and one call for most runs.
constexpr std::size_t kEntitiesPerQuery = 500;

}  // namespace

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
                      gone.size(), request.vm_names.size(), listed_names(gone)));
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
    warnings.push_back(
        fmt::format("hosts not in vCenter, without storage samples: {}", listed_names(unknown)));

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
                    provider_.config_.endpoint, missing_counters_.size(), listed_names(missing_counters_)));
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
