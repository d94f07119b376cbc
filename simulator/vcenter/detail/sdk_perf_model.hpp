#pragma once
// Internal to bootstorm::sim_vcenter: the lab PerformanceManager's model (sdk_performance.cpp): its counters
// and their labels, the instances' values from the model's storage telemetry, the identities that map
// instances back to datastores and HBAs, and a performance provider's real-time statistics.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
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
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::vcenter::detail {

namespace vim25 = vsphere::vim25;

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

inline const CounterDef* find_counter(long long key) {
  for (const auto& c : kCounters)
    if (c.key == key) return &c;
  return nullptr;
}

struct Label {
  std::string_view key, label, summary;
};

inline Label group_of(Source s) {
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
inline Label name_of(Quantity q) {
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

inline bool is_latency(Quantity q) {
  return q == Quantity::read_latency || q == Quantity::write_latency;
}

inline Label unit_of(Quantity q) {
  if (is_latency(q)) return {"millisecond", "ms", "Millisecond"};
  if (q == Quantity::read_kb || q == Quantity::write_kb)
    return {"kiloBytesPerSecond", "KBps", "Kilobytes per second"};
  return {"number", "num", "Number"};
}

inline void write_description(vim25::XmlWriter& w, std::string_view element, const Label& l) {
  w.open(element).leaf("label", l.label).leaf("summary", l.summary).leaf("key", l.key).close();
}

// A PerfCounterInfo (`xsi_type` where the element's declared type needs it, in an array value).
inline void write_counter(vim25::XmlWriter& w, std::string_view element, std::string_view xsi_type,
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

inline model::IoCounters total_at(const Sources& sources, double t) {
  model::IoCounters sum;
  for (const auto* h : sources) sum += h->at(t + 1e-6);  // grid instants are sums of steps: not exact
  return sum;
}

// The value of a sample from the counters at its end and at its start, rounded as vCenter reports them.
inline std::int64_t sample_value(Quantity q, const model::IoCounters& end, const model::IoCounters& start,
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

inline std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

inline std::uint64_t mix(
    std::uint64_t x) {  // splitmix64's finaliser: spreads every input bit over the output
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// VMFS prints a volume's uuid as 8-8-4-12 hex digits, the last 12 a MAC address of the host that formatted
// it (here VMware's OUI 00:0c:29 and hash bits).
inline std::string vmfs_uuid(std::string_view datastore_id) {
  const std::uint64_t a = mix(fnv1a(datastore_id)), b = mix(a);
  return fmt::format("{:08x}-{:08x}-{:04x}-000c29{:06x}", a >> 32, a & 0xffffffffULL, b >> 48,
                     b & 0xffffffULL);
}

inline std::string datastore_url(const model::Datastore& d) {
  return "ds:///vmfs/volumes/" + vmfs_uuid(d.id) + "/";
}

inline bool mounts(const model::Host& h, const model::Datastore& d) {
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
inline std::int64_t realtime_interval(const model::Lab& lab) {
  return std::max<std::int64_t>(1, std::llround(lab.spec().telemetry.vcenter_interval_s));
}

// The index k of the first sample (at unix time k x interval) after `unix_seconds`.
inline std::int64_t first_sample_after(double unix_seconds, std::int64_t interval) {
  return static_cast<std::int64_t>(std::floor(unix_seconds / static_cast<double>(interval))) + 1;
}

// The real-time statistics of a VM or a host (`type` as sdk_type_of says); nullopt for other objects, which
// have none.
inline std::optional<Provider> realtime_provider(model::Lab& lab, const model::StorageTelemetry& t,
                                                 const vim25::MoRef& entity, std::string_view type,
                                                 double since) {
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
inline std::vector<Metric> select_metrics(const Provider& p,
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

inline std::string timestamp(std::int64_t unix_seconds) {
  return format_rfc3339(from_unix_seconds(static_cast<double>(unix_seconds)), Rfc3339Fraction::seconds);
}

}  // namespace bootstorm::sim::vcenter::detail
