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
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

using http::ServerResponse;
namespace vim25 = vsphere::vim25;

namespace {

constexpr std::string_view kPerfManagerId = "PerfMgr";
constexpr double kRealtimeKeptSeconds = 3600;  // vCenter keeps an hour of real-time samples
constexpr std::string_view kDiskInstance = "scsi0:0";
constexpr std::string_view kAdapterInstance = "vmhba1";

enum class Quantity { read_ios, write_ios, read_kb, write_kb, read_latency, write_latency };
enum class Source { virtual_disk, datastore, adapter };

struct CounterDef {
  int key;
  Source source;
  Quantity quantity;
  int level, per_device_level;
};

// The keys a vCenter gives these counters (the API does not promise them: clients look counters up by name),
// and their levels as vSphere's counter tables give them.
constexpr CounterDef kCounters[] = {{162, Source::adapter, Quantity::read_ios, 2, 2},
                                    {163, Source::adapter, Quantity::write_ios, 2, 2},
                                    {164, Source::adapter, Quantity::read_kb, 2, 2},
                                    {165, Source::adapter, Quantity::write_kb, 2, 2},
                                    {166, Source::adapter, Quantity::read_latency, 2, 2},
                                    {167, Source::adapter, Quantity::write_latency, 2, 2},
                                    {171, Source::virtual_disk, Quantity::read_ios, 1, 3},
                                    {172, Source::virtual_disk, Quantity::write_ios, 1, 3},
                                    {173, Source::virtual_disk, Quantity::read_kb, 2, 2},
                                    {174, Source::virtual_disk, Quantity::write_kb, 2, 2},
                                    {175, Source::virtual_disk, Quantity::read_latency, 1, 3},
                                    {176, Source::virtual_disk, Quantity::write_latency, 1, 3},
                                    {178, Source::datastore, Quantity::read_ios, 1, 3},
                                    {179, Source::datastore, Quantity::write_ios, 1, 3},
                                    {180, Source::datastore, Quantity::read_kb, 2, 2},
                                    {181, Source::datastore, Quantity::write_kb, 2, 2},
                                    {182, Source::datastore, Quantity::read_latency, 1, 3},
                                    {183, Source::datastore, Quantity::write_latency, 1, 3}};

const CounterDef* find_counter(long long key) {
  for (const auto& c : kCounters)
    if (c.key == key) return &c;
  return nullptr;
}

struct Label {
  std::string_view key, label, summary;
};

Label group_of(Source s) {
  switch (s) {
    case Source::virtual_disk:
      return {"virtualDisk", "Virtual disk", "the virtual disk"};
    case Source::datastore:
      return {"datastore", "Datastore", "the datastore"};
    case Source::adapter:
      break;
  }
  return {"storageAdapter", "Storage adapter", "the storage adapter"};
}

// nameInfo: the counter's name and label, and its summary's wording around the group (`summary` has {}).
Label name_of(Quantity q) {
  switch (q) {
    case Quantity::read_ios:
      return {"numberReadAveraged", "Average read requests per second",
              "Read commands issued per second to {} during the interval"};
    case Quantity::write_ios:
      return {"numberWriteAveraged", "Average write requests per second",
              "Write commands issued per second to {} during the interval"};
    case Quantity::read_kb:
      return {"read", "Read rate", "Rate of reading data from {}"};
    case Quantity::write_kb:
      return {"write", "Write rate", "Rate of writing data to {}"};
    case Quantity::read_latency:
      return {"totalReadLatency", "Read latency", "Mean time of a read from {} (kernel and device)"};
    case Quantity::write_latency:
      break;
  }
  return {"totalWriteLatency", "Write latency", "Mean time of a write to {} (kernel and device)"};
}

bool is_latency(Quantity q) {
  return q == Quantity::read_latency || q == Quantity::write_latency;
}

Label unit_of(Quantity q) {
  if (is_latency(q)) return {"millisecond", "ms", "Millisecond"};
  if (q == Quantity::read_kb || q == Quantity::write_kb)
    return {"kiloBytesPerSecond", "KBps", "Kilobytes per second"};
  return {"number", "num", "Number"};
}

void write_description(vim25::XmlWriter& w, std::string_view element, const Label& l) {
  w.open(element).leaf("label", l.label).leaf("summary", l.summary).leaf("key", l.key).close();
}

// A PerfCounterInfo (`xsi_type` where the element's declared type needs it, in an array value).
void write_counter(vim25::XmlWriter& w, std::string_view element, std::string_view xsi_type,
                   const CounterDef& c) {
  w.open(element, xsi_type).leaf("key", c.key);
  const Label group = group_of(c.source), name = name_of(c.quantity);
  const std::string summary = fmt::format(fmt::runtime(name.summary), group.summary);
  write_description(w, "nameInfo", {name.key, name.label, summary});
  write_description(w, "groupInfo", {group.key, group.label, group.label});
  write_description(w, "unitInfo", unit_of(c.quantity));
  w.leaf("rollupType", "average")
      .leaf("statsType", is_latency(c.quantity) ? "absolute" : "rate")
      .leaf("level", c.level)
      .leaf("perDeviceLevel", c.per_device_level)
      .close();
}

// ---- values ----

// The histories whose sum one instance (or the aggregate) measures.
using Sources = std::vector<const model::IoHistory*>;

model::IoCounters total_at(const Sources& sources, double t) {
  model::IoCounters sum;
  for (const auto* h : sources) sum += h->at(t + 1e-6);  // grid instants are sums of steps: not exact
  return sum;
}

// The value of a sample from the counters at its end and at its start, rounded as vCenter reports them.
std::int64_t sample_value(Quantity q, const model::IoCounters& end, const model::IoCounters& start,
                          std::int64_t interval) {
  auto delta = [](double a, double b) { return std::max(0.0, a - b); };
  const bool read = q == Quantity::read_ios || q == Quantity::read_kb || q == Quantity::read_latency;
  const double ios = read ? delta(end.read_ios, start.read_ios) : delta(end.write_ios, start.write_ios);
  const double bytes =
      read ? delta(end.read_bytes, start.read_bytes) : delta(end.write_bytes, start.write_bytes);
  const double busy =
      read ? delta(end.read_seconds, start.read_seconds) : delta(end.write_seconds, start.write_seconds);
  const auto seconds = static_cast<double>(interval);
  if (is_latency(q)) return ios > 0 ? std::llround(busy / ios * 1000) : 0;
  if (q == Quantity::read_kb || q == Quantity::write_kb) return std::llround(bytes / 1024 / seconds);
  return std::llround(ios / seconds);
}

// ---- identities ----

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: spreads every input bit over the output
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// VMFS prints a volume's uuid as 8-8-4-12 hex digits, the last 12 a MAC address of the host that formatted
// it (here VMware's OUI 00:0c:29 and hash bits).
std::string vmfs_uuid(std::string_view datastore_id) {
  const std::uint64_t a = mix(fnv1a(datastore_id)), b = mix(a);
  return fmt::format("{:08x}-{:08x}-{:04x}-000c29{:06x}", a >> 32, a & 0xffffffffULL, b >> 48,
                     b & 0xffffffULL);
}

std::string datastore_url(const model::Datastore& d) {
  return "ds:///vmfs/volumes/" + vmfs_uuid(d.id) + "/";
}

bool mounts(const model::Host& h, const model::Datastore& d) {
  const auto& names = h.spec.datastores;
  return names.empty() || std::find(names.begin(), names.end(), d.spec.name) != names.end();
}

// ---- a performance provider's real-time statistics ----

struct Instance {
  std::string name;
  Sources sources;
};

struct Provider {
  vim25::MoRef entity;
  std::int64_t interval = 20;  // s: the real-time interval (PerfProviderSummary.refreshRate)
  std::vector<Instance> disks, datastores, adapters;
  std::vector<std::int64_t> samples;  // unix seconds, multiples of the interval; ascending

  const std::vector<Instance>& instances(Source s) const {
    return s == Source::virtual_disk ? disks : s == Source::datastore ? datastores : adapters;
  }
};

// vCenter's real-time interval, 20 s; a lab may shorten it (telemetry.vcenterIntervalS) for quick tests.
std::int64_t realtime_interval(const model::Lab& lab) {
  return std::max<std::int64_t>(1, std::llround(lab.spec().telemetry.vcenter_interval_s));
}

// The index k of the first sample (at unix time k x interval) after `unix_seconds`.
std::int64_t first_sample_after(double unix_seconds, std::int64_t interval) {
  return static_cast<std::int64_t>(std::floor(unix_seconds / static_cast<double>(interval))) + 1;
}

// The real-time statistics of a VM or a host (`type` as sdk_type_of says); nullopt for other objects, which
// have none.
std::optional<Provider> realtime_provider(model::Lab& lab, const model::StorageTelemetry& t,
                                          const vim25::MoRef& entity, std::string_view type, double since) {
  Provider p;
  p.entity = {std::string(type), entity.value};
  p.interval = realtime_interval(lab);
  const auto interval = static_cast<double>(p.interval);
  // The last sample known (at or before sampled_until), and the oldest kept.
  const auto last = static_cast<std::int64_t>(std::floor(t.sampled_until / interval + 1e-9));
  const std::int64_t oldest = last - static_cast<std::int64_t>(kRealtimeKeptSeconds / interval) + 1;
  std::set<std::int64_t> samples;
  auto add_range = [&](std::int64_t from, std::int64_t to) {
    for (std::int64_t k = std::max(from, oldest); k <= std::min(to, last); ++k)
      samples.insert(k * p.interval);
  };
  if (type == "VirtualMachine") {
    // Every boot of the VM is a series; a sample covers the boots that ran during its interval.
    Instance disk{std::string(kDiskInstance), {}};
    for (const auto& series : t.vms) {
      if (series.vm_id != entity.value) continue;
      disk.sources.push_back(&series.history);
      const std::int64_t to =
          series.end ? static_cast<std::int64_t>(std::ceil(*series.end / interval - 1e-9)) : last;
      add_range(first_sample_after(series.begin, p.interval), to);
    }
    if (!disk.sources.empty()) p.disks.push_back(std::move(disk));
  } else if (type == "HostSystem") {
    const auto& hosts = lab.hosts();
    const model::Host* host = lab.find_host(entity.value);
    const auto h = static_cast<std::size_t>(host - hosts.data());
    const auto& datastores = lab.datastores();
    if (h < t.host_links.size()) p.adapters.push_back({std::string(kAdapterInstance), {&t.host_links[h]}});
    for (std::size_t d = 0; d < datastores.size(); ++d) {
      const std::size_t pair = h * datastores.size() + d;
      if (pair >= t.host_datastores.size()) continue;
      const model::IoHistory& io = t.host_datastores[pair];
      if (mounts(*host, datastores[d]) || !io.samples.empty())
        p.datastores.push_back({vmfs_uuid(datastores[d].id), {&io}});
    }
    add_range(first_sample_after(since, p.interval), last);
  } else {
    return std::nullopt;
  }
  p.samples.assign(samples.begin(), samples.end());
  return p;
}

// One series of an answer: a counter and an instance ("" for the aggregate of the entity's instances).
struct Metric {
  const CounterDef* counter;
  std::string instance;
  Sources sources;
};

// The metrics `ids` name for `p` ({} : every metric it has), each once, in the order asked. A counter of
// another kind of entity names nothing, as on vCenter.
std::vector<Metric> select_metrics(const Provider& p,
                                   const std::vector<std::pair<const CounterDef*, std::string>>& ids) {
  std::vector<Metric> out;
  auto add = [&](const CounterDef* c, std::string instance, Sources sources) {
    const bool seen = std::any_of(out.begin(), out.end(),
                                  [&](const Metric& m) { return m.counter == c && m.instance == instance; });
    if (!seen) out.push_back({c, std::move(instance), std::move(sources)});
  };
  auto add_counter = [&](const CounterDef* c, std::string_view instance) {
    const auto& instances = p.instances(c->source);
    if (instances.empty()) return;
    if (instance.empty() || instance == "*") {
      Sources all;
      for (const auto& i : instances) all.insert(all.end(), i.sources.begin(), i.sources.end());
      add(c, "", std::move(all));
    }
    for (const auto& i : instances)
      if (instance == "*" || instance == i.name) add(c, i.name, i.sources);
  };
  if (ids.empty()) {
    for (const auto& c : kCounters) add_counter(&c, "*");
  }
  for (const auto& [counter, instance] : ids) add_counter(counter, instance);
  return out;
}

std::string timestamp(std::int64_t unix_seconds) {
  return format_rfc3339(from_unix_seconds(static_cast<double>(unix_seconds)), Rfc3339Fraction::seconds);
}

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
