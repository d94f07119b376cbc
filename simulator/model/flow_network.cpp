// The flow network: flow classes on shared resources (host CPU, link, bus; datastore bandwidth, IOPS),
// their max-min fair rates, completions, and the bulk data flows and rate introspection of the Lab API.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "simulator/model/detail/lab_impl.hpp"
#include "simulator/model/fair_share.hpp"

namespace bootstorm::sim::model {

int Lab::Impl::class_for(std::vector<std::pair<int, double>> uses, double cap, std::vector<IoPath> paths) {
  std::string key = fmt::format("{}", cap);
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
    if (c.count > 0 && c.rate < kInf) c.service += c.rate * dt;
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
  dirty = false;
  ++stats.recomputes;
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
