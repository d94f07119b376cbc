// The lab's PerformanceManager ("PerfMgr", ServiceContent.perfManager): vCenter's real-time statistics of
// storage I/O, computed from the model's storage telemetry (Lab::storage_telemetry()), never from the flows.
//
// Counters: virtualDisk.* of a VM (instance "scsi0:0", its one disk), datastore.* of a host (one instance per
// datastore it mounts, named by the datastore's VMFS uuid) and storageAdapter.* of a host (instance "vmhba1",
// the host's one Fibre Channel HBA: the model's host link). Real-time samples are 20 s apart (a lab's
// telemetry.vcenterIntervalS) on multiples of the interval in unix time; the sample at T averages
// (T - interval, T]; an hour of them is kept, as vCenter keeps them.
// Historical intervals are listed but hold nothing: the lab does not roll statistics up.
//
// The identities a client needs to map instances back: a datastore's url ("ds:///vmfs/volumes/<uuid>/") and
// info.vmfs.uuid, a host's mounted datastores, and its HBA (config.storageDevice.hostBusAdapter, whose speed
// is the link's).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/rfc3339.hpp"
#include "common/xml_text.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/xml_writer.hpp"
#include "simulator/vcenter/detail/sdk_faults.hpp"
#include "simulator/vcenter/detail/sdk_perf_model.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

using http::ServerResponse;
namespace vim25 = vsphere::vim25;

namespace {

using namespace detail;

// ---- request parsing ----

SdkFaultInfo invalid_argument(std::string message, std::string_view property) {
  return {"InvalidArgument", std::move(message),
          "<invalidProperty>" + escape_xml(property) + "</invalidProperty>"};
}

std::optional<long long> parse_integer(std::string_view text) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// The optional children of a request element (absent: nullopt); the first malformed one is kept as the
// InvalidArgument fault naming it (`prefix` + its name).
struct Fields {
  const vim25::XmlNode& node;
  std::string_view prefix;
  std::optional<SdkFaultInfo> fault;

  std::optional<long long> integer(std::string_view name) {
    auto text = node.child_text(name);
    if (!text) return std::nullopt;
    auto v = parse_integer(*text);
    if (!v) fail(fmt::format("{}{} '{}' is not an integer.", prefix, name, *text), name);
    return v;
  }
  std::optional<double> time(std::string_view name) {
    auto text = node.child_text(name);
    if (!text) return std::nullopt;
    auto t = parse_rfc3339(*text);
    if (t) return unix_seconds(*t);
    fail(fmt::format("{}{} '{}' is not a dateTime.", prefix, name, *text), name);
    return std::nullopt;
  }
  void fail(std::string message, std::string_view name) {
    if (!fault) fault = invalid_argument(std::move(message), std::string(prefix) + std::string(name));
  }
};

// PerfQuerySpec, checked.
struct QuerySpec {
  vim25::MoRef entity;
  std::optional<double> start, end;
  std::optional<long long> max_sample;
  std::vector<std::pair<const CounterDef*, std::string>> metric_ids;
  bool realtime = true;  // intervalId the real-time interval (or none: the statistics as sampled)
  bool csv = false;
};

// The spec, or the fault that refuses it.
std::optional<SdkFaultInfo> parse_query_spec(const vim25::XmlNode& node, std::int64_t realtime,
                                             QuerySpec& q) {
  Fields f{node, "querySpec.", std::nullopt};
  q.entity = vim25::decode_moref(node.child("entity"));
  q.start = f.time("startTime");
  q.end = f.time("endTime");
  q.max_sample = f.integer("maxSample");
  const auto interval = f.integer("intervalId");
  if (f.fault) return f.fault;
  for (const auto& id : node.children("metricId")) {
    const std::string text = id.child_text("counterId").value_or("");
    const auto key = parse_integer(text);
    const CounterDef* counter = key ? find_counter(*key) : nullptr;
    if (!counter) {
      return invalid_argument(fmt::format("Counter '{}' is not a performance counter of this vCenter.", text),
                              "querySpec.metricId.counterId");
    }
    q.metric_ids.emplace_back(counter, id.child_text("instance").value_or(""));
  }
  if (interval && *interval != realtime) {
    static constexpr long long kHistorical[] = {300, 1800, 7200, 86400};
    if (std::find(std::begin(kHistorical), std::end(kHistorical), *interval) == std::end(kHistorical)) {
      return invalid_argument(
          fmt::format("Interval {} is neither the real-time interval ({}) nor a historical one.", *interval,
                      realtime),
          "querySpec.intervalId");
    }
    q.realtime = false;
  }
  const std::string format = node.child_text("format").value_or("normal");
  if (format != "normal" && format != "csv")
    return invalid_argument(fmt::format("Format '{}' is neither 'normal' nor 'csv'.", format),
                            "querySpec.format");
  q.csv = format == "csv";
  return std::nullopt;
}

// The samples a query asks for: after start (exclusive), up to end (inclusive), the last max_sample.
std::vector<std::int64_t> window(const std::vector<std::int64_t>& samples, std::optional<double> start,
                                 std::optional<double> end, std::optional<long long> max_sample) {
  std::vector<std::int64_t> out;
  for (std::int64_t at : samples) {
    const auto t = static_cast<double>(at);
    if ((!start || t > *start) && (!end || t <= *end)) out.push_back(at);
  }
  if (max_sample && *max_sample > 0 && out.size() > static_cast<std::size_t>(*max_sample))
    out.erase(out.begin(), out.end() - *max_sample);
  return out;
}

// A PerfEntityMetric (or, csv, a PerfEntityMetricCSV) as a <returnval>.
void write_entity_metric(vim25::XmlWriter& w, const Provider& p, const std::vector<std::int64_t>& samples,
                         const std::vector<Metric>& metrics, bool csv) {
  std::vector<std::vector<std::int64_t>> values;
  for (const auto& m : metrics) {
    std::vector<std::int64_t> series;
    for (std::int64_t at : samples) {
      const auto t = static_cast<double>(at);
      series.push_back(sample_value(m.counter->quantity, total_at(m.sources, t),
                                    total_at(m.sources, t - static_cast<double>(p.interval)), p.interval));
    }
    values.push_back(std::move(series));
  }
  w.open("returnval", csv ? "PerfEntityMetricCSV" : "PerfEntityMetric").moref("entity", p.entity);
  if (csv) {
    std::vector<std::string> info;
    for (std::int64_t at : samples) info.push_back(fmt::format("{},{}", p.interval, timestamp(at)));
    w.leaf("sampleInfoCSV", fmt::format("{}", fmt::join(info, ",")));
  } else {
    for (std::int64_t at : samples)
      w.open("sampleInfo").leaf("timestamp", timestamp(at)).leaf("interval", p.interval).close();
  }
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    w.open("value", csv ? "PerfMetricSeriesCSV" : "PerfMetricIntSeries");
    w.open("id").leaf("counterId", metrics[i].counter->key).leaf("instance", metrics[i].instance).close();
    if (csv) {
      w.leaf("value", fmt::format("{}", fmt::join(values[i], ",")));
    } else {
      for (std::int64_t v : values[i]) w.leaf("value", v);
    }
    w.close();
  }
  w.close();
}

// Objects with statistics of their own but no real-time ones (vCenter rolls them up from hosts and VMs).
bool summary_only(std::string_view type) {
  return type == "Datastore" || type == "ClusterComputeResource" || type == "ResourcePool" ||
         type == "Datacenter";
}

std::string moref_array_val(const std::vector<vim25::MoRef>& refs) {
  std::string out = R"(<val xsi:type="ArrayOfManagedObjectReference">)";
  for (const auto& r : refs) {
    out += fmt::format(
        R"(<ManagedObjectReference type="{}" xsi:type="ManagedObjectReference">{}</ManagedObjectReference>)",
        escape_xml(r.type), escape_xml(r.value));
  }
  return out + "</val>";
}

}  // namespace

// ---- properties ----

std::optional<std::string> VcenterFront::Impl::sdk_perf_property(const vim25::MoRef& obj,
                                                                 std::string_view path) const {
  if (obj.type == "PerformanceManager") {
    if (obj.value != kPerfManagerId) return std::nullopt;
    if (path == "perfCounter") {
      vim25::XmlWriter w = vim25::XmlWriter::fragment("val", "ArrayOfPerfCounterInfo");
      for (const auto& c : kCounters) write_counter(w, "PerfCounterInfo", "PerfCounterInfo", c);
      return w.finish();
    }
    if (path == "historicalInterval") {
      struct Interval {
        int key, period, length;
        std::string_view name;
      };
      static constexpr Interval kIntervals[] = {{1, 300, 86400, "Past day"},
                                                {2, 1800, 604800, "Past week"},
                                                {3, 7200, 2592000, "Past month"},
                                                {4, 86400, 31536000, "Past year"}};
      vim25::XmlWriter w = vim25::XmlWriter::fragment("val", "ArrayOfPerfInterval");
      for (const auto& i : kIntervals) {
        w.open("PerfInterval", "PerfInterval")
            .leaf("key", i.key)
            .leaf("samplingPeriod", i.period)
            .leaf("name", i.name)
            .leaf("length", i.length)
            .leaf("level", 1)
            .leaf("enabled", true)
            .close();
      }
      return w.finish();
    }
    if (path == "description") {
      static constexpr Label kRollups[] = {{"average", "Average", "Average of the values over the interval"},
                                           {"maximum", "Maximum", "Largest value over the interval"},
                                           {"minimum", "Minimum", "Smallest value over the interval"},
                                           {"latest", "Latest", "Last value of the interval"},
                                           {"summation", "Summation", "Sum of the values over the interval"},
                                           {"none", "None", "Not rolled up"}};
      static constexpr Label kStats[] = {{"absolute", "Absolute", "A level, not a change"},
                                         {"delta", "Delta", "Change over the interval"},
                                         {"rate", "Rate", "Change per second over the interval"}};
      vim25::XmlWriter w = vim25::XmlWriter::fragment("val", "PerformanceDescription");
      for (const auto& r : kRollups) write_description(w, "counterType", r);
      for (const auto& s : kStats) write_description(w, "statsType", s);
      return w.finish();
    }
    return std::nullopt;
  }
  if (obj.type == "Datastore") {
    const model::Datastore* d = lab.find_datastore(obj.value);
    if (!d) return std::nullopt;
    const double gib = 1024.0 * 1024 * 1024;
    const auto capacity = static_cast<std::int64_t>(d->spec.capacity_gb * gib);
    const auto free = static_cast<std::int64_t>(std::max(0.0, d->spec.capacity_gb - d->used_gb) * gib);
    if (path == "summary.url" || path == "info.url")
      return typed_element("val", "xsd:string", datastore_url(*d));
    if (path == "info.vmfs.uuid") return typed_element("val", "xsd:string", vmfs_uuid(d->id));
    if (path == "summary.type") return typed_element("val", "xsd:string", "VMFS");
    if (path == "summary") {
      vim25::XmlWriter w = vim25::XmlWriter::fragment("val", "DatastoreSummary");
      w.moref("datastore", {"Datastore", d->id})
          .leaf("name", d->spec.name)
          .leaf("url", datastore_url(*d))
          .leaf("capacity", capacity)
          .leaf("freeSpace", free)
          .leaf("accessible", true)
          .leaf("multipleHostAccess", true)
          .leaf("type", "VMFS")
          .leaf("maintenanceMode", "normal");
      return w.finish();
    }
    if (path == "info") {
      const std::uint64_t lun = mix(fnv1a("lun:" + d->id));
      vim25::XmlWriter w = vim25::XmlWriter::fragment("val", "VmfsDatastoreInfo");
      w.leaf("name", d->spec.name)
          .leaf("url", datastore_url(*d))
          .leaf("freeSpace", free)
          .leaf("maxFileSize", std::int64_t{64} << 40)
          .leaf("maxVirtualDiskCapacity", std::int64_t{62} << 40);
      w.open("vmfs")
          .leaf("type", "VMFS")
          .leaf("name", d->spec.name)
          .leaf("capacity", capacity)
          .leaf("blockSizeMb", 1)
          .leaf("maxBlocks", 64 * 1024 * 1024)
          .leaf("majorVersion", 6)
          .leaf("version", "6.82")
          .leaf("uuid", vmfs_uuid(d->id));
      w.open("extent")
          .leaf("diskName", fmt::format("naa.624a9370{:016x}{:08x}", lun, lun >> 32))
          .leaf("partition", 1);
      w.close();
      w.leaf("vmfsUpgradable", false).leaf("ssd", true).leaf("local", false).close();
      return w.finish();
    }
    return std::nullopt;
  }
  if (obj.type == "HostSystem") {
    const model::Host* h = lab.find_host(obj.value);
    if (!h) return std::nullopt;
    if (path == "datastore") {
      std::vector<vim25::MoRef> mounted;
      for (const auto& d : lab.datastores())
        if (mounts(*h, d)) mounted.push_back({"Datastore", d.id});
      return moref_array_val(mounted);
    }
    const bool array = path == "config.storageDevice.hostBusAdapter";
    if (!array && path != "config.storageDevice") return std::nullopt;
    // The one Fibre Channel HBA: its speed is the model's link (MB/s, ~100 MB/s per Gbit/s of FC).
    const std::uint64_t wwn = mix(fnv1a("wwn:" + h->id)) & 0xffffffULL;
    vim25::XmlWriter w =
        vim25::XmlWriter::fragment("val", array ? "ArrayOfHostHostBusAdapter" : "HostStorageDeviceInfo");
    w.open(array ? "HostHostBusAdapter" : "hostBusAdapter", "HostFibreChannelHba")
        .leaf("key", fmt::format("key-vim.host.FibreChannelHba-{}", kAdapterInstance))
        .leaf("device", kAdapterInstance)
        .leaf("bus", 59)
        .leaf("status", "online")
        .leaf("model", "lab FC HBA")
        .leaf("driver", "lpfc")
        .leaf("pci", "0000:3b:00.0")
        .leaf("portWorldWideName", static_cast<std::int64_t>(0x10000090fa000000ULL | wwn))
        .leaf("nodeWorldWideName", static_cast<std::int64_t>(0x20000090fa000000ULL | wwn))
        .leaf("portType", "fabric")
        .leaf("speed", static_cast<std::int64_t>(std::llround(h->spec.link_mbps / 100)))
        .close();
    if (!array) w.leaf("softwareInternetScsiEnabled", false);
    return w.finish();
  }
  return std::nullopt;
}

// ---- the methods ----

std::optional<ServerResponse> VcenterFront::Impl::sdk_performance_call(std::string_view method,
                                                                       const vim25::XmlNode& call,
                                                                       const vim25::MoRef& self) {
  static constexpr std::string_view kMethods[] = {"QueryPerfCounter", "QueryPerfCounterByLevel",
                                                  "QueryPerfProviderSummary", "QueryAvailablePerfMetric",
                                                  "QueryPerf"};
  if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods)) return std::nullopt;
  if (self.value != kPerfManagerId) return sdk_object_not_found(self);
  const std::string response = std::string(method) + "Response";

  if (method == "QueryPerfCounter") {
    // Ids this vCenter does not have are left out of the answer.
    vim25::XmlWriter w(response);
    for (const auto& id : call.children("counterId")) {
      const auto key = parse_integer(id.text());
      if (const CounterDef* c = key ? find_counter(*key) : nullptr) write_counter(w, "returnval", "", *c);
    }
    return sdk_ok(w.finish());
  }
  if (method == "QueryPerfCounterByLevel") {
    // The counters a collection level stores: those of that level and below.
    const auto level = parse_integer(call.child_text("level").value_or(""));
    if (!level || *level < 1 || *level > 4)
      return sdk_fault(invalid_argument("The level must be a number from 1 to 4.", "level"));
    vim25::XmlWriter w(response);
    for (const auto& c : kCounters)
      if (c.level <= *level) write_counter(w, "returnval", "", c);
    return sdk_ok(w.finish());
  }

  const vim25::MoRef entity = vim25::decode_moref(call.child("entity"));
  const std::string type = sdk_type_of(entity.value);
  if (method == "QueryPerfProviderSummary" || method == "QueryAvailablePerfMetric") {
    if (type.empty()) return sdk_object_not_found(entity);
    const bool realtime = type == "VirtualMachine" || type == "HostSystem";
    if (!realtime && !summary_only(type)) {
      return sdk_fault(invalid_argument(
          fmt::format("{} {} is not a performance provider.", type, entity.value), "entity"));
    }
    vim25::XmlWriter w(response);
    if (method == "QueryPerfProviderSummary") {
      w.open("returnval")
          .moref("entity", {type, entity.value})
          .leaf("currentSupported", realtime)
          .leaf("summarySupported", true)
          .leaf("refreshRate", realtime ? realtime_interval(lab) : std::int64_t{-1})
          .close();
      return sdk_ok(w.finish());
    }
    Fields f{call, "", std::nullopt};
    const auto begin = f.time("beginTime"), end = f.time("endTime");
    const auto interval = f.integer("intervalId");
    if (f.fault) return sdk_fault(*f.fault);
    // Historical intervals hold nothing in the lab; real-time metrics are a host's always and a VM's once it
    // has samples in the period.
    if (interval && *interval != realtime_interval(lab)) return sdk_ok(w.finish());
    const auto provider = realtime_provider(lab, lab.storage_telemetry(), entity, type, sdk_perf_since);
    if (!provider) return sdk_ok(w.finish());
    if (type == "VirtualMachine" && window(provider->samples, begin, end, std::nullopt).empty())
      return sdk_ok(w.finish());
    for (const auto& m : select_metrics(*provider, {})) {
      w.open("returnval").leaf("counterId", m.counter->key).leaf("instance", m.instance).close();
    }
    return sdk_ok(w.finish());
  }

  // QueryPerf: every spec checked before any is answered.
  std::vector<QuerySpec> specs;
  for (const auto& node : call.children("querySpec")) {
    QuerySpec spec;
    if (auto fault = parse_query_spec(node, realtime_interval(lab), spec)) return sdk_fault(*fault);
    specs.push_back(std::move(spec));
  }
  const model::StorageTelemetry& telemetry = lab.storage_telemetry();
  vim25::XmlWriter w(response);
  for (const auto& spec : specs) {
    // vCenter drops a destroyed VM's statistics with it.
    const std::string entity_type = sdk_type_of(spec.entity.value);
    if (entity_type.empty()) return sdk_object_not_found(spec.entity);
    // Historical intervals (300 s and up) are not modelled: such a spec answers nothing.
    if (!spec.realtime) continue;
    const auto provider = realtime_provider(lab, telemetry, spec.entity, entity_type, sdk_perf_since);
    if (!provider) continue;
    const auto samples = window(provider->samples, spec.start, spec.end, spec.max_sample);
    const auto metrics = select_metrics(*provider, spec.metric_ids);
    if (samples.empty() || metrics.empty()) continue;
    write_entity_metric(w, *provider, samples, metrics, spec.csv);
  }
  return sdk_ok(w.finish());
}

}  // namespace bootstorm::sim::vcenter
