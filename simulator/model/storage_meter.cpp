// The storage counters: every I/O flow's bytes, I/Os and queue time integrated into its VM's disk, its host's
// link and its datastore, sampled on a grid of unix-time instants as a monitoring system scrapes them.
//
// Flows share rates by class, so the counters advance with the classes (O(classes) per step, like the
// service levels); a VM's own counters come from its flows' service levels when they are sampled or end.

#include <algorithm>
#include <cmath>
#include <numeric>

#include "simulator/model/detail/lab_impl.hpp"

namespace bootstorm::sim::model {

IoCounters& IoCounters::operator+=(const IoCounters& other) {
  read_bytes += other.read_bytes;
  write_bytes += other.write_bytes;
  read_ios += other.read_ios;
  write_ios += other.write_ios;
  read_seconds += other.read_seconds;
  write_seconds += other.write_seconds;
  return *this;
}

IoCounters IoHistory::at(double t) const {
  auto it = std::upper_bound(samples.begin(), samples.end(), t,
                             [](double when, const IoSample& sample) { return when < sample.at; });
  return it == samples.begin() ? IoCounters{} : std::prev(it)->total;
}

namespace {

// `mb` of the path's work moved while `flow_seconds` of queue were held (flows x seconds).
void add_io(IoCounters& counters, const IoPath& path, double mb, double flow_seconds) {
  const double bytes = mb * 1e6;
  const double ios = path.io_mb > 0 ? mb / path.io_mb : 0;
  const double queue_seconds = path.queue * flow_seconds;
  if (path.write) {
    counters.write_bytes += bytes;
    counters.write_ios += ios;
    counters.write_seconds += queue_seconds;
  } else {
    counters.read_bytes += bytes;
    counters.read_ios += ios;
    counters.read_seconds += queue_seconds;
  }
}

void record(IoHistory& history, double at, const IoCounters& value) {
  if (history.samples.empty() ? value == IoCounters{} : history.samples.back().total == value) return;
  history.samples.push_back({at, value});
}

// The grid holds both monitoring systems' instants: Prometheus's scrapes and vCenter's real-time samples.
double grid_step(double scrape_interval_s, double vcenter_interval_s) {
  const auto scrape_ms = std::max<long long>(1, std::llround(scrape_interval_s * 1000));
  const auto vcenter_ms = std::max<long long>(1, std::llround(vcenter_interval_s * 1000));
  return static_cast<double>(std::gcd(scrape_ms, vcenter_ms)) / 1000.0;
}

}  // namespace

void Lab::Impl::meter_start(double t) {
  StorageMeter& m = meter;
  m.published.step = grid_step(spec.telemetry.scrape_interval_s, spec.telemetry.vcenter_interval_s);
  m.next_grid = static_cast<std::int64_t>(std::floor(t / m.published.step)) + 1;
  m.published.sampled_until = static_cast<double>(m.next_grid - 1) * m.published.step;
  m.host_links.assign(hosts.size(), {});
  m.datastores.assign(datastores.size(), {});
  m.host_datastores.assign(hosts.size() * datastores.size(), {});
  m.published.host_links.assign(hosts.size(), {});
  m.published.datastores.assign(datastores.size(), {});
  m.published.host_datastores.assign(hosts.size() * datastores.size(), {});
}

void Lab::Impl::meter_advance(double dt) {
  StorageMeter& m = meter;
  for (const auto& c : classes) {
    if (c.count == 0 || c.paths.empty() || c.rate == kInf) continue;
    const double flows_n = static_cast<double>(c.count);
    const double mb = c.rate * dt * flows_n;
    const double flow_seconds = dt * flows_n;
    for (const auto& path : c.paths) {
      const double path_mb = mb * path.mb_per_work;
      if (path.host < m.host_links.size()) add_io(m.host_links[path.host], path, path_mb, flow_seconds);
      if (path.datastore < m.datastores.size())
        add_io(m.datastores[path.datastore], path, path_mb, flow_seconds);
      if (path.host < m.host_links.size() && path.datastore < m.datastores.size()) {
        add_io(m.host_datastores[path.host * datastores.size() + path.datastore], path, path_mb,
               flow_seconds);
      }
    }
    m.changed = true;
  }
}

bool Lab::Impl::meter_grid_due(double t) {
  StorageMeter& m = meter;
  const double step = m.published.step;
  if (static_cast<double>(m.next_grid) * step > t) return false;
  const bool io_running = std::any_of(classes.begin(), classes.end(),
                                      [](const FlowClass& c) { return c.count > 0 && !c.paths.empty(); });
  if (io_running || m.changed || !m.touched.empty()) return true;
  // Nothing moved since the last sample and nothing will before t: every grid instant up to t would repeat
  // it.
  m.next_grid = static_cast<std::int64_t>(std::floor(t / step)) + 1;
  m.published.sampled_until = static_cast<double>(m.next_grid - 1) * step;
  return false;
}

double Lab::Impl::meter_grid_time() const {
  return static_cast<double>(meter.next_grid) * meter.published.step;
}

void Lab::Impl::meter_sample() {
  StorageMeter& m = meter;
  const double at = meter_grid_time();
  for (std::size_t h = 0; h < m.host_links.size(); ++h)
    record(m.published.host_links[h], at, m.host_links[h]);
  for (std::size_t d = 0; d < m.datastores.size(); ++d)
    record(m.published.datastores[d], at, m.datastores[d]);
  for (std::size_t i = 0; i < m.host_datastores.size(); ++i) {
    record(m.published.host_datastores[i], at, m.host_datastores[i]);
  }
  // A VM's counters: its ended flows, plus its running flows up to their class's service level now.
  std::unordered_map<std::size_t, IoCounters> live;
  for (const auto& [flow, f] : m.vm_flows) {
    const FlowClass& c = classes[f.cls];
    const double done = std::clamp(c.service - f.start_service, 0.0, f.work);
    add_io(live[f.series], c.paths.front(), done, at - f.started_at);
  }
  for (std::size_t series : m.touched) live.try_emplace(series);
  for (auto& [series, value] : live) {
    value += m.folded[series];
    record(m.published.vms[series].history, at, value);
  }
  m.touched.clear();
  m.changed = false;
  m.published.sampled_until = at;
  ++m.next_grid;
}

void Lab::Impl::meter_vm_flow(std::uint64_t flow, std::uint64_t vm_number, double work) {
  auto series = meter.open_series.find(vm_number);
  auto record = flows.find(flow);
  if (series == meter.open_series.end() || record == flows.end()) return;
  const int cls = record->second.cls;
  meter.vm_flows[flow] = StorageMeter::VmFlow{series->second, cls, classes[cls].service, now_, work};
}

void Lab::Impl::meter_flow_ended(std::uint64_t flow, bool completed) {
  auto it = meter.vm_flows.find(flow);
  if (it == meter.vm_flows.end()) return;
  const StorageMeter::VmFlow& f = it->second;
  const FlowClass& c = classes[f.cls];
  // A completed flow did all its work (the service level only comes within the completion slack of it).
  const double done = completed ? f.work : std::clamp(c.service - f.start_service, 0.0, f.work);
  add_io(meter.folded[f.series], c.paths.front(), done, now_ - f.started_at);
  meter.touched.insert(f.series);
  meter.vm_flows.erase(it);
}

void Lab::Impl::meter_vm_running(std::uint64_t number) {
  meter_vm_stopped(number, false);  // a series left open by a boot that never powered off
  const Vm& vm = vms.at(number);
  VmIoSeries series;
  series.vm_id = vm.id;
  series.name = vm.name;
  series.namespace_ = vm.namespace_;
  series.node = vm.node;
  series.host_id = vm.host_id;
  series.datastore_id = vm.base_datastore_id.empty() ? vm.datastore_id : vm.base_datastore_id;
  series.begin = now_;
  meter.open_series[number] = meter.published.vms.size();
  meter.published.vms.push_back(std::move(series));
  meter.folded.emplace_back();
}

void Lab::Impl::meter_vm_stopped(std::uint64_t number, bool deleted) {
  auto it = meter.open_series.find(number);
  if (it == meter.open_series.end()) return;
  VmIoSeries& series = meter.published.vms[it->second];
  series.end = now_;
  series.deleted = deleted;
  meter.open_series.erase(it);
}

const StorageTelemetry& Lab::storage_telemetry() {
  Impl& m = *impl_;
  m.catch_up();
  if (!m.processing) m.settle(m.now_);
  return m.meter.published;
}

}  // namespace bootstorm::sim::model
