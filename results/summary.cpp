#include "results/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "results/api_answers.hpp"

namespace bootstorm::results {
namespace {

constexpr std::string_view kReady = "ready";

}  // namespace

const Distribution* ScenarioSummary::find(std::string_view milestone) const {
  for (const auto& m : milestones)
    if (m.name == milestone) return &m.dist;
  return nullptr;
}

const Distribution& ScenarioSummary::ready() const {
  static const Distribution kEmpty;
  const Distribution* d = find(kReady);
  return d ? *d : kEmpty;
}

bool Summary::slo_passed() const {
  return std::all_of(slo.begin(), slo.end(), [](const SloResult& r) { return r.pass; });
}

bool is_slo_stat(std::string_view stat) {
  return std::find(std::begin(kSloStats), std::end(kSloStats), stat) != std::end(kSloStats);
}

Summary summarize(const RunRecord& record) {
  Summary summary;
  summary.run =
      RunInfo{record.run_id,
              record.plan_name,
              record.platform,
              record.lab,
              record.platform_api,
              record.simulated,
              record.started_at,
              record.ended_at,
              record.outcome,
              record.clone_kind,
              !record.source.empty() ? record.source : (record.simulated ? "simulated" : "measured"),
              record.facts,
              record.api_budget,
              record.golden};
  const auto ready_milestone = api::milestone_from_string(record.ready_signal);

  // Scenario order is the record's; VMs of a scenario/repeat the record does not list get a scenario of
  // their own at the end rather than being dropped.
  std::vector<ScenarioRecord> scenarios = record.scenarios;
  auto index_of = [&](const std::string& name, int repeat) -> std::size_t {
    for (std::size_t i = 0; i < scenarios.size(); ++i)
      if (scenarios[i].name == name && scenarios[i].repeat == repeat) return i;
    ScenarioRecord extra;
    extra.name = name;
    extra.repeat = repeat;
    scenarios.push_back(extra);
    return scenarios.size() - 1;
  };
  std::vector<std::vector<const VmRecord*>> vms_of;
  for (const auto& vm : record.vms) {
    const std::size_t i = index_of(vm.scenario, vm.repeat);
    if (vms_of.size() < scenarios.size()) vms_of.resize(scenarios.size());
    vms_of[i].push_back(&vm);
  }
  vms_of.resize(scenarios.size());

  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const ScenarioRecord& sc = scenarios[i];
    const auto& vms = vms_of[i];
    ScenarioSummary s;
    s.name = sc.name;
    s.repeat = sc.repeat;
    s.vms = std::max(sc.vms, static_cast<int>(vms.size()));
    s.hosts = sc.hosts;
    if (s.hosts == 0) {
      std::vector<std::string> hosts;
      for (const auto* vm : vms)
        if (!vm->host.empty() && std::find(hosts.begin(), hosts.end(), vm->host) == hosts.end())
          hosts.push_back(vm->host);
      s.hosts = static_cast<int>(hosts.size());
    }
    s.fire_skew_ms = sc.fire_skew_ms;
    s.api_requests = sc.api_requests;
    s.start_at_unix_s = sc.start_at_unix_s;
    s.start_at_offset_ms = sc.start_at_offset_ms;
    s.ready_milestone = record.ready_signal;
    s.errors = sc.errors;
    if (sc.provision_begin_mono && sc.provision_end_mono)
      s.provisioning_s = std::max(0.0, *sc.provision_end_mono - *sc.provision_begin_mono);
    s.power_on_calls = sc.power_on_calls;
    s.storm_api_requests = sc.storm_api_requests;
    s.api_answers = sc.api_answers;
    if (sc.telemetry) s.storage = storage_figures(*sc.telemetry, s.vms);
    s.storage_unavailable = sc.telemetry_unavailable;
    s.not_attempted = sc.not_attempted;
    s.moves = sc.moves;
    const auto total = static_cast<std::size_t>(s.vms);

    // Ready (boot time).
    double ready_resolution = 0;
    double first_start = sc.started_unix_s;
    double last_ready = -std::numeric_limits<double>::infinity();
    std::vector<double> clone_times;
    for (const auto* vm : vms) {
      if (vm->start_requested_unix_s > 0 && (first_start <= 0 || vm->start_requested_unix_s < first_start))
        first_start = vm->start_requested_unix_s;
      if (vm->clone_s >= 0) clone_times.push_back(vm->clone_s);
      if (!vm->clone_method.empty()) ++s.clone_methods[vm->clone_method];
      if (vm->ready_s) {
        s.boot_times_s.push_back(*vm->ready_s);
        last_ready = std::max(last_ready, vm->start_requested_unix_s + *vm->ready_s);
        if (ready_milestone) {
          auto it = vm->milestones.find(*ready_milestone);
          if (it != vm->milestones.end())
            ready_resolution = std::max(ready_resolution, it->second.resolution_s);
        }
      } else {
        std::string reason = vm->reason;
        if (reason.empty())
          reason = vm->status == "ready" ? "ready milestone missing" : fmt::format("status {}", vm->status);
        s.failures.push_back(Failure{vm->name, reason});
      }
    }
    s.milestones.push_back(
        MilestoneStats{std::string(kReady), describe(s.boot_times_s, total, ready_resolution)});
    if (total > 0 && s.boot_times_s.size() == total && first_start > 0)
      s.time_to_all_ready_s = std::max(0.0, last_ready - first_start);
    if (!clone_times.empty()) s.clone_mean_s = mean(clone_times);
    // The per-VM power-on confirmations, on the wall clock the start requests were written on.
    double first_on = std::numeric_limits<double>::infinity(), last_on = -first_on;
    std::size_t confirmed = 0;
    for (const auto* vm : vms) {
      auto it = vm->milestones.find(api::Milestone::start_acknowledged);
      if (vm->start_requested_unix_s <= 0 || it == vm->milestones.end()) continue;
      const double at = vm->start_requested_unix_s + it->second.offset_s;
      first_on = std::min(first_on, at);
      last_on = std::max(last_on, at);
      ++confirmed;
    }
    if (confirmed > 0) s.power_on_spread_ms = (last_on - first_on) * 1e3;

    for (api::Milestone m : api::kAllMilestones) {
      if (m == api::Milestone::start_requested) continue;
      std::vector<double> offsets;
      double resolution = 0;
      for (const auto* vm : vms) {
        auto it = vm->milestones.find(m);
        if (it == vm->milestones.end()) continue;
        offsets.push_back(it->second.offset_s);
        resolution = std::max(resolution, it->second.resolution_s);
      }
      if (offsets.empty()) continue;
      s.milestones.push_back(
          MilestoneStats{std::string(api::to_string(m)), describe(offsets, total, resolution)});
    }
    if (ready_milestone) {
      s.phases = phase_stats(vms, *ready_milestone);
      s.control_plane = control_plane_share(vms, *ready_milestone);
    }
    summary.scenarios.push_back(std::move(s));
  }
  summary.slo = evaluate_slos(record.slo, summary.scenarios);
  return summary;
}

std::optional<double> stat_value(const ScenarioSummary& scenario, std::string_view milestone,
                                 std::string_view stat) {
  if (stat == "time_to_all_ready") return scenario.time_to_all_ready_s;
  const Distribution* d = scenario.find(milestone);
  if (!d && milestone == scenario.ready_milestone) d = scenario.find(kReady);
  if (stat == "ready_fraction") return d ? d->ready_fraction : 0.0;
  if (!d) return std::nullopt;
  if (stat == "mean") return d->mean;
  if (stat == "p50") return d->p50;
  if (stat == "p90") return d->p90;
  if (stat == "p95") return d->p95;
  if (stat == "p99") return d->p99;
  if (stat == "max") return d->max;
  if (stat == "min") return d->min;
  if (stat == "stdev") return d->stdev;
  return std::nullopt;
}

std::vector<SloResult> evaluate_slos(const std::vector<SloRecord>& slos,
                                     const std::vector<ScenarioSummary>& scenarios) {
  std::vector<SloResult> results;
  for (const auto& sc : scenarios) {
    for (const auto& slo : slos) {
      SloResult r;
      r.scenario = sc.name;
      r.repeat = sc.repeat;
      r.milestone = slo.milestone.empty() ? std::string(kReady) : slo.milestone;
      r.stat = slo.stat;
      r.threshold = slo.max;
      r.is_min = slo.is_min;
      r.value = stat_value(sc, r.milestone, r.stat);
      // A missing statistic (nobody reached the milestone) fails: the SLO could not be shown to hold.
      r.pass = r.value && (r.is_min ? *r.value >= r.threshold : *r.value <= r.threshold);
      results.push_back(std::move(r));
    }
  }
  return results;
}

}  // namespace bootstorm::results
