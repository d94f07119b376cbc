// The flow network: flow classes on shared resources (host CPU, link, bus; datastore bandwidth, IOPS),
// their max-min fair rates, completions, and the bulk data flows and rate introspection of the Lab API.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "simulator/model/detail/lab_impl.hpp"
#include "simulator/model/fair_share.hpp"

namespace bootstorm::sim::model {

int Lab::Impl::class_for(std::vector<std::pair<int, double>> uses, double cap, std::vector<IoPath> paths,
                         bool boot) {
  std::string key = fmt::format("{}{}", boot ? "boot|" : "", cap);
  for (const auto& [r, c] : uses) key += fmt::format("|{}:{}", r, c);
  for (const auto& p : paths) {
    key += fmt::format("|io:{}:{}:{}:{}:{}:{}", static_cast<long long>(p.host),
                       static_cast<long long>(p.datastore), p.write, p.mb_per_work, p.io_mb, p.queue);
  }
  auto it = class_index.find(key);
  if (it != class_index.end()) return it->second;
  FlowClass cls;
  cls.uses = std::move(uses);
  cls.paths = std::move(paths);
  cls.cap = cap;
  cls.boot = boot;
  classes.push_back(std::move(cls));
  const int index = static_cast<int>(classes.size() - 1);
  class_index.emplace(std::move(key), index);
  return index;
}

std::uint64_t Lab::Impl::add_flow(int cls, double work, std::function<void()> done) {
  settle(now_);
  const std::uint64_t id = next_flow++;
  FlowClass& c = classes[cls];
  c.finishes.push({c.service + work, id});
  ++c.count;
  flows.emplace(id, FlowRecord{cls, std::move(done)});
  dirty = true;
  ++stats.active_flows;
  return id;
}

void Lab::Impl::remove_flow(std::uint64_t id) {
  auto it = flows.find(id);
  if (it == flows.end()) return;
  settle(now_);
  meter_flow_ended(id, /*completed=*/false);
  --classes[it->second.cls].count;
  flows.erase(it);
  dirty = true;
  --stats.active_flows;
}

void Lab::Impl::settle(double t) {
  // Rates are constant until the next recompute, so the counters at a grid instant on the way are exact.
  while (meter_grid_due(t)) {
    advance_service(meter_grid_time());
    meter_sample();
  }
  advance_service(t);
}

void Lab::Impl::advance_service(double t) {
  const double dt = t - settled_at;
  if (dt <= 0) return;
  for (auto& c : classes) {
    if (c.count == 0) continue;
    if (c.rate < kInf) c.service += c.rate * dt;
    if (c.boot && c.limiter != kNoLimiter) limit_seconds[c.limiter] += static_cast<double>(c.count) * dt;
  }
  meter_advance(dt);
  settled_at = t;
}

void Lab::Impl::recompute() {
  std::vector<ShareDemand> demands;
  std::vector<int> active;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].count == 0) {
      classes[i].rate = 0;
      continue;
    }
    active.push_back(static_cast<int>(i));
    demands.push_back(ShareDemand{classes[i].uses, classes[i].cap, static_cast<double>(classes[i].count)});
  }
  const auto rates = max_min_fair_rates(capacity, demands);
  next_flow_time = kInf;
  for (std::size_t k = 0; k < active.size(); ++k) {
    FlowClass& c = classes[active[k]];
    c.rate = rates[k];
    drop_cancelled(c);
    if (c.finishes.empty() || c.rate <= 0) continue;
    const double remaining = std::max(0.0, c.finishes.top().first - c.service);
    const double t = c.rate == kInf ? settled_at : settled_at + remaining / c.rate;
    next_flow_time = std::min(next_flow_time, t);
  }
  account_limiters();
  dirty = false;
  ++stats.recomputes;
}

// Max-min fairness holds a flow either at its own cap or at a bottleneck: a saturated resource on its path on
// which no flow runs faster than it does. Saturation is judged on every flow's use; the peaks count the
// boots' use alone.
void Lab::Impl::account_limiters() {
  if (limit_seconds.size() != capacity.size() + 2) limit_seconds.assign(capacity.size() + 2, 0.0);
  if (peak_boot_use.size() != capacity.size()) peak_boot_use.assign(capacity.size(), 0.0);
  std::vector<double> use(capacity.size(), 0.0), boot_use(capacity.size(), 0.0),
      fastest(capacity.size(), 0.0);
  for (const auto& c : classes) {
    if (c.count == 0 || c.rate >= kInf) continue;
    for (const auto& [r, coef] : c.uses) {
      const auto i = static_cast<std::size_t>(r);
      const double u = c.rate * coef * static_cast<double>(c.count);
      use[i] += u;
      if (c.boot) boot_use[i] += u;
      fastest[i] = std::max(fastest[i], c.rate);
    }
  }
  for (std::size_t r = 0; r < capacity.size(); ++r) {
    if (capacity[r] > 0) peak_boot_use[r] = std::max(peak_boot_use[r], boot_use[r] / capacity[r]);
  }
  constexpr double kSaturated = 1 - 1e-6;
  for (auto& c : classes) {
    if (!c.boot) continue;
    c.limiter = kNoLimiter;
    if (c.count == 0 || c.rate >= kInf) continue;
    if (c.cap < kInf && c.rate >= c.cap * kSaturated) {
      c.limiter = c.paths.empty() ? cap_cpu_limiter() : cap_io_limiter();
      continue;
    }
    for (const auto& [r, coef] : c.uses) {
      const auto i = static_cast<std::size_t>(r);
      if (capacity[i] > 0 && use[i] >= capacity[i] * kSaturated && c.rate >= fastest[i] * kSaturated) {
        c.limiter = r;
        break;
      }
    }
  }
}

void Lab::Impl::drop_cancelled(FlowClass& c) {
  while (!c.finishes.empty() && !flows.count(c.finishes.top().second)) c.finishes.pop();
}

// Completes every flow whose remaining work would take less than a microsecond at its rate: time is unix
// seconds in a double (resolution ~0.2 us), so a tighter test could stall on rounding.
void Lab::Impl::complete_due_flows() {
  std::vector<std::function<void()>> done;
  for (auto& c : classes) {
    if (c.count == 0) continue;
    const double slack = c.rate == kInf ? kInf : c.rate * 1e-6 + 1e-12 * std::abs(c.service);
    for (;;) {
      drop_cancelled(c);
      if (c.finishes.empty() || c.finishes.top().first > c.service + slack) break;
      const std::uint64_t id = c.finishes.top().second;
      c.finishes.pop();
      meter_flow_ended(id, /*completed=*/true);
      auto it = flows.find(id);
      done.push_back(std::move(it->second.done));
      flows.erase(it);
      --c.count;
      --stats.active_flows;
      dirty = true;
    }
  }
  for (auto& fn : done) {
    if (fn) fn();
  }
}

Expected<OperationId> Lab::start_data_flow(const DataFlowRequest& request, DoneCallback done) {
  Impl& m = *impl_;
  m.catch_up();
  if (request.mb < 0)
    return make_error(ErrorKind::invalid_input, "A data flow cannot move a negative amount.");
  std::map<int, double> coefficients;
  std::vector<std::size_t> host_indexes, datastore_indexes;
  for (const auto& id : request.host_ids) {
    const Host* host = find_host(id);
    if (!host) return make_error(ErrorKind::not_found, fmt::format("Host '{}' not found.", id));
    const std::size_t h = m.host_index(host->id);
    coefficients[m.link_res(h)] += 1;
    coefficients[m.bus_res(h)] += 1;
    host_indexes.push_back(h);
  }
  for (const auto& id : request.datastore_ids) {
    const Datastore* ds = find_datastore(id);
    if (!ds) return make_error(ErrorKind::not_found, fmt::format("Datastore '{}' not found.", id));
    const std::size_t d = m.datastore_index(ds->id);
    coefficients[m.ds_bw_res(d)] += 1;
    coefficients[m.ds_iops_res(d)] += 1;  // large sequential chunks: one I/O per MB
    datastore_indexes.push_back(d);
  }
  // As storage I/O, a transfer reads its first datastore through its first host and writes the next ones
  // through the next hosts; a host listed beyond the datastores carries the data on its link alone.
  std::vector<IoPath> paths;
  for (std::size_t i = 0; i < std::max(host_indexes.size(), datastore_indexes.size()); ++i) {
    IoPath path;
    path.host = i < host_indexes.size() ? host_indexes[i] : kNoIndex;
    path.datastore = i < datastore_indexes.size() ? datastore_indexes[i] : kNoIndex;
    path.write = i > 0;
    paths.push_back(path);
  }
  if (coefficients.empty()) {
    return make_error(ErrorKind::invalid_input, "A data flow must cross at least one host or datastore.");
  }
  std::vector<std::pair<int, double>> uses(coefficients.begin(), coefficients.end());
  const OperationId op = m.next_operation++;
  const int cls = m.class_for(std::move(uses), kInf, std::move(paths));
  auto callback = std::make_shared<DoneCallback>(std::move(done));
  const std::uint64_t flow = m.add_flow(cls, request.mb, [&m, op, callback] {
    auto it = m.data_flows.find(op);
    if (it != m.data_flows.end()) it->second.done = true;
    if (*callback) (*callback)(Expected<void>{});
  });
  m.data_flows[op] = Impl::DataFlow{flow, cls, m.classes[cls].service, request.mb, false};
  m.after_mutation();
  return op;
}

double Lab::data_flow_done_mb(OperationId id) {
  Impl& m = *impl_;
  m.catch_up();
  auto it = m.data_flows.find(id);
  if (it == m.data_flows.end()) return 0;
  if (it->second.done) return it->second.mb;
  m.settle(m.now_);
  const double moved = m.classes[it->second.cls].service - it->second.start_service;
  return std::clamp(moved, 0.0, it->second.mb);
}

bool Lab::cancel_data_flow(OperationId id) {
  Impl& m = *impl_;
  m.catch_up();
  auto it = m.data_flows.find(id);
  if (it == m.data_flows.end()) return false;
  const bool running = !it->second.done;
  if (running) m.remove_flow(it->second.flow);
  m.data_flows.erase(it);
  m.after_mutation();
  return running;
}

std::string_view to_string(LimitKind kind) {
  switch (kind) {
    case LimitKind::host_cpu:
      return "host CPU";
    case LimitKind::host_link:
      return "host link";
    case LimitKind::host_bus:
      return "host I/O bus";
    case LimitKind::datastore_bandwidth:
      return "datastore bandwidth";
    case LimitKind::datastore_iops:
      return "datastore IOPS";
    case LimitKind::per_io_latency:
      return "per-I/O latency";
    case LimitKind::vcpus:
      return "vCPUs";
  }
  return "unknown";
}

BootLimits Lab::boot_limits() const {
  const Impl& m = *impl_;
  BootLimits out;
  out.since = m.limits_since;
  out.memory_refusals = m.memory_refusals;
  auto seconds = [&m](std::size_t i) { return i < m.limit_seconds.size() ? m.limit_seconds[i] : 0.0; };
  auto peak = [&m](std::size_t i) { return i < m.peak_boot_use.size() ? m.peak_boot_use[i] : 0.0; };
  auto resource = [&](LimitKind kind, const std::string& on, int r) {
    const auto i = static_cast<std::size_t>(r);
    out.limits.push_back({kind, on, m.capacity[i], seconds(i), peak(i)});
  };
  for (std::size_t h = 0; h < m.hosts.size(); ++h) {
    resource(LimitKind::host_cpu, m.hosts[h].spec.name, m.cpu_res(h));
    resource(LimitKind::host_link, m.hosts[h].spec.name, m.link_res(h));
    resource(LimitKind::host_bus, m.hosts[h].spec.name, m.bus_res(h));
  }
  for (std::size_t d = 0; d < m.datastores.size(); ++d) {
    resource(LimitKind::datastore_bandwidth, m.datastores[d].spec.name, m.ds_bw_res(d));
    resource(LimitKind::datastore_iops, m.datastores[d].spec.name, m.ds_iops_res(d));
  }
  out.limits.push_back({LimitKind::per_io_latency, "", 0, seconds(m.capacity.size()), 0});
  out.limits.push_back({LimitKind::vcpus, "", 0, seconds(m.capacity.size() + 1), 0});
  return out;
}

void Lab::reset_boot_limits() {
  Impl& m = *impl_;
  m.catch_up();
  m.settle(m.now_);
  m.limit_seconds.assign(m.capacity.size() + 2, 0.0);
  m.peak_boot_use.assign(m.capacity.size(), 0.0);
  m.memory_refusals.clear();
  m.limits_since = m.now_;
  // The flows running now count from here, at their current use.
  std::vector<double> boot_use(m.capacity.size(), 0.0);
  for (const auto& c : m.classes) {
    if (!c.boot || c.count == 0 || c.rate >= kInf) continue;
    for (const auto& [r, coef] : c.uses)
      boot_use[static_cast<std::size_t>(r)] += c.rate * coef * static_cast<double>(c.count);
  }
  for (std::size_t r = 0; r < m.capacity.size(); ++r) {
    if (m.capacity[r] > 0) m.peak_boot_use[r] = boot_use[r] / m.capacity[r];
  }
  m.after_mutation();
}

Lab::FlowStats Lab::flow_stats() const {
  return impl_->stats;
}

double Lab::host_link_rate(std::string_view host_id) const {
  const Impl& m = *impl_;
  const std::size_t h = m.host_index(host_id);
  if (h >= m.hosts.size()) return 0;
  double total = 0;
  for (const auto& c : m.classes) {
    for (const auto& [r, coef] : c.uses) {
      if (r == m.link_res(h) && c.count > 0) total += c.rate * coef * static_cast<double>(c.count);
    }
  }
  return total;
}

double Lab::datastore_rate(std::string_view datastore_id) const {
  const Impl& m = *impl_;
  const std::size_t d = m.datastore_index(datastore_id);
  if (d >= m.datastores.size()) return 0;
  double total = 0;
  for (const auto& c : m.classes) {
    for (const auto& [r, coef] : c.uses) {
      if (r == m.ds_bw_res(d) && c.count > 0) total += c.rate * coef * static_cast<double>(c.count);
    }
  }
  return total;
}

}  // namespace bootstorm::sim::model
