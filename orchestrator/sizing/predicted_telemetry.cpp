// The storage of a predicted storm from the model's counters (see the header).
#include "orchestrator/sizing/predicted_telemetry.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

namespace bootstorm::sizing {

namespace model = sim::model;

namespace {

api::StorageRates rates_between(const model::IoCounters& a, const model::IoCounters& b, double seconds) {
  api::StorageRates r;
  if (seconds <= 0) return r;
  const double read_ios = b.read_ios - a.read_ios;
  const double write_ios = b.write_ios - a.write_ios;
  r.read_bytes_per_s = (b.read_bytes - a.read_bytes) / seconds;
  r.write_bytes_per_s = (b.write_bytes - a.write_bytes) / seconds;
  r.read_iops = read_ios / seconds;
  r.write_iops = write_ios / seconds;
  if (read_ios > 0) r.read_latency_s = (b.read_seconds - a.read_seconds) / read_ios;
  if (write_ios > 0) r.write_latency_s = (b.write_seconds - a.write_seconds) / write_ios;
  return r;
}

api::StorageTotals totals_between(api::StorageSubject kind, const std::string& subject,
                                  const model::IoCounters& a, const model::IoCounters& b) {
  api::StorageTotals t;
  t.kind = kind;
  t.subject = subject;
  t.read_bytes = b.read_bytes - a.read_bytes;
  t.write_bytes = b.write_bytes - a.write_bytes;
  t.read_ios = b.read_ios - a.read_ios;
  t.write_ios = b.write_ios - a.write_ios;
  if (t.read_ios > 0) t.read_latency_s = (b.read_seconds - a.read_seconds) / t.read_ios;
  return t;
}

}  // namespace

api::TelemetryReport predicted_telemetry(model::Lab& lab, const std::vector<std::string>& vm_ids,
                                         const std::vector<std::string>& names, double from, double to) {
  const model::StorageTelemetry& counters = lab.storage_telemetry();
  const double step = counters.step;
  api::TelemetryReport report;
  report.source = "lab model";
  report.endpoint = "virtual time";
  report.resolution_s = step;
  // The grid's instants that cover the window.
  const double first = std::floor(from / step) * step;
  const double last = std::min(std::ceil(to / step) * step, counters.sampled_until);
  report.from = first;
  report.to = std::max(first, last);
  std::map<std::string, std::string> name_of;
  for (std::size_t i = 0; i < vm_ids.size() && i < names.size(); ++i) name_of[vm_ids[i]] = names[i];
  std::size_t vms_in_window = 0;
  for (const auto& vm : counters.vms) vms_in_window += name_of.count(vm.vm_id);
  const bool vm_series = vms_in_window <= kPredictedVmSeriesLimit;
  if (!vm_series) {
    report.warnings.push_back(
        fmt::format("per-host series only: this scenario has {} VMs, and each VM's series is kept for up to "
                    "{} (each VM's "
                    "totals are kept)",
                    vms_in_window, kPredictedVmSeriesLimit));
  }
  auto series = [&](api::StorageSubject kind, const std::string& subject, const model::IoHistory& history,
                    double begin, double end) {
    if (kind == api::StorageSubject::vm && !vm_series) {
      report.totals.push_back(totals_between(kind, subject, history.at(begin), history.at(end)));
      return;
    }
    model::IoCounters previous = history.at(begin);
    for (double t = begin + step; t <= end + 1e-9; t += step) {
      const model::IoCounters now = history.at(t);
      api::StorageSample sample;
      sample.kind = kind;
      sample.subject = subject;
      sample.from = t - step;
      sample.to = t;
      sample.rates = rates_between(previous, now, step);
      report.samples.push_back(std::move(sample));
      previous = now;
    }
    report.totals.push_back(totals_between(kind, subject, history.at(begin), history.at(end)));
  };
  std::set<std::string> host_ids;
  std::map<std::string, std::string> node_of_host;  // KubeVirt: a host's series is named by its node
  for (const auto& vm : counters.vms) {
    auto it = name_of.find(vm.vm_id);
    if (it == name_of.end()) continue;
    host_ids.insert(vm.host_id);
    if (!vm.node.empty()) node_of_host[vm.host_id] = vm.node;
    // A boot's series begins at zero when it ran: before that, the VM moved nothing.
    series(api::StorageSubject::vm, it->second, vm.history, report.from, report.to);
  }
  const auto& hosts = lab.hosts();
  const auto& datastores = lab.datastores();
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    if (!host_ids.count(hosts[h].id)) continue;
    auto node = node_of_host.find(hosts[h].id);
    const std::string& host = node != node_of_host.end() ? node->second : hosts[h].spec.name;
    series(api::StorageSubject::host, host, counters.host_links[h], report.from, report.to);
    report.link_capacity_bytes_per_s[host] = hosts[h].spec.link_mbps * 1e6;
    for (std::size_t d = 0; d < datastores.size(); ++d) {
      const model::IoHistory& history = counters.host_datastores[h * datastores.size() + d];
      if (history.samples.empty()) continue;
      series(api::StorageSubject::datastore, host + "/" + datastores[d].spec.name, history, report.from,
             report.to);
    }
  }
  return report;
}

}  // namespace bootstorm::sizing
