// Migration report rendering (see migration_record.hpp): migration.md, migration.json, migration-vms.csv.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "orchestrator/migrate/migration_record.hpp"
#include "reports/csv.hpp"
#include "reports/text.hpp"
#include "results/descriptive.hpp"

namespace bootstorm::migrate {
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// Forklift's vSphere pipeline order; steps the report has not seen keep the order they appeared in.
const std::vector<std::string> kKnownOrder = {
    "Initialize", "DiskAllocation",  "PreflightInspection", "DiskTransfer",
    "Cutover",    "DiskTransferV2v", "ImageConversion",     "VirtualMachineCreation"};

json opt(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string mbps(const std::optional<double>& v) {
  return v ? fmt::format("{:.1f} MB/s", *v) : "\u2014";
}

std::string csv_number(const std::optional<double>& v) {
  return v ? reports::number(*v, 3) : "";
}

}  // namespace

MigrationSummary summarize(const MigrationRecord& record) {
  MigrationSummary s;
  s.vms = record.vms.size();
  std::vector<double> totals, rates;
  std::optional<double> first, last;
  std::vector<std::string> seen;
  for (const auto& v : record.vms) {
    if (v.status == "succeeded") ++s.succeeded;
    if (v.status == "failed" || v.status == "canceled") ++s.failed;
    if (v.status == "succeeded") {
      if (auto t = v.total_s()) totals.push_back(*t);
      if (auto r = v.transfer_mbps()) rates.push_back(*r);
    }
    s.total_mb += v.status == "succeeded" ? v.disk_mb() : 0.0;
    if (v.started_s) first = first ? std::min(*first, *v.started_s) : *v.started_s;
    if (v.completed_s) last = last ? std::max(*last, *v.completed_s) : *v.completed_s;
    for (const auto& st : v.steps)
      if (std::find(seen.begin(), seen.end(), st.name) == seen.end()) seen.push_back(st.name);
  }
  for (const auto& k : kKnownOrder)
    if (std::find(seen.begin(), seen.end(), k) != seen.end()) s.step_names.push_back(k);
  for (const auto& n : seen)
    if (std::find(s.step_names.begin(), s.step_names.end(), n) == s.step_names.end())
      s.step_names.push_back(n);
  if (!totals.empty()) {
    auto d = results::describe(totals, totals.size(), 1.0);
    s.mean_s = d.mean;
    s.p95_s = d.p95;
    s.max_s = d.max;
    s.min_s = d.min;
    s.p50_s = d.p50;
  }
  if (record.migration_started_s && record.migration_ended_s) {
    s.wall_s = std::max(0.0, *record.migration_ended_s - *record.migration_started_s);
  } else if (first && last) {
    s.wall_s = std::max(0.0, *last - *first);
  }
  if (s.wall_s && *s.wall_s > 0 && s.total_mb > 0) s.aggregate_mbps = s.total_mb / *s.wall_s;
  if (!rates.empty()) s.mean_vm_mbps = results::mean(rates);
  for (const auto& name : s.step_names) {
    std::vector<double> d;
    for (const auto& v : record.vms)
      if (const StepRecord* st = v.step(name); st != nullptr && st->error.empty())
        if (auto x = st->duration_s()) d.push_back(*x);
    if (d.empty()) {
      s.step_mean_max.emplace_back(std::nullopt, std::nullopt);
    } else {
      s.step_mean_max.emplace_back(results::mean(d), *std::max_element(d.begin(), d.end()));
    }
  }
  return s;
}

std::string render_migration_md(const MigrationRecord& record) {
  const MigrationSummary s = summarize(record);
  std::string out;
  out += fmt::format("# Migration {}{}\n\n", reports::escape_md(record.plan_name),
                     record.simulated ? " \u2014 simulated lab" : "");
  if (record.simulated)
    out += fmt::format(
        "Measured against the simulated lab **{}**, not hardware: the figures follow the lab "
        "model's bandwidths.\n\n",
        reports::escape_md(record.lab));
  out += fmt::format("- run: `{}`, started {}\n", record.run_id, record.started_at);
  out +=
      fmt::format("- from vSphere {} to {} (Forklift namespace `{}`), target namespace `{}`, {} migration\n",
                  reports::escape_md(record.source_url), reports::escape_md(record.destination),
                  record.forklift_namespace, record.target_namespace, record.warm ? "warm" : "cold");
  out += fmt::format("- outcome: **{}** \u2014 {} of {} VMs migrated, {} failed\n\n", record.outcome,
                     s.succeeded, s.vms, s.failed);

  out +=
      "## Summary\n\n| VMs | migrated | failed | mean | P50 | P95 | max | total wall time | data | "
      "throughput (all VMs) | mean per-VM transfer |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.0f} MB | {} | {} |\n\n", s.vms,
                     s.succeeded, s.failed, reports::seconds(s.mean_s), reports::seconds(s.p50_s),
                     reports::seconds(s.p95_s), reports::seconds(s.max_s), reports::seconds(s.wall_s),
                     s.total_mb, mbps(s.aggregate_mbps), mbps(s.mean_vm_mbps));
  out +=
      "Per-VM time is the VM's pipeline from its start to its completion. Times are Forklift's timestamps "
      "(whole seconds), refined to the moment the watch delivered them when that falls within the same "
      "second; "
      "throughput is the DiskTransfer step's data (MB = 10^6 bytes) over that step's duration.\n\n";

  if (!s.step_names.empty()) {
    out += "## Steps\n\n| step | mean | max |\n|---|---|---|\n";
    for (std::size_t i = 0; i < s.step_names.size(); ++i)
      out += fmt::format("| {} | {} | {} |\n", s.step_names[i], reports::seconds(s.step_mean_max[i].first),
                         reports::seconds(s.step_mean_max[i].second));
    out += "\n";
  }

  out += "## Virtual machines\n\n| VM | status | total |";
  for (const auto& n : s.step_names) out += " " + n + " |";
  out += " disk | throughput | failed step | reason |\n|---|---|---|";
  for (std::size_t i = 0; i < s.step_names.size(); ++i) out += "---|";
  out += "---|---|---|---|\n";
  for (const auto& v : record.vms) {
    out +=
        fmt::format("| {} | {} | {} |", reports::escape_md(v.name), v.status, reports::seconds(v.total_s()));
    for (const auto& n : s.step_names) {
      const StepRecord* st = v.step(n);
      if (st == nullptr) {
        out += " \u2014 |";
      } else if (!st->error.empty()) {
        out += " failed |";
      } else if (st->completed_s) {
        out += " " + reports::seconds(st->duration_s()) + " |";
      } else if (st->started_s) {
        out += " running |";
      } else {
        out += " \u2014 |";
      }
    }
    out += fmt::format(
        " {} | {} | {} | {} |\n", v.disk_mb() > 0 ? fmt::format("{:.0f} MB", v.disk_mb()) : "\u2014",
        mbps(v.transfer_mbps()), reports::escape_md(v.failed_step), reports::escape_md(v.reason));
  }
  out += "\n";
  bool any_failed = false;
  for (const auto& v : record.vms) any_failed = any_failed || v.status == "failed" || v.status == "canceled";
  if (any_failed) {
    out += "## Failures\n\n";
    for (const auto& v : record.vms)
      if (v.status == "failed" || v.status == "canceled")
        out += fmt::format("- **{}** {} in step **{}**: {}\n", reports::escape_md(v.name), v.status,
                           v.failed_step.empty() ? "\u2014" : reports::escape_md(v.failed_step),
                           v.reason.empty() ? "(no reason given)" : reports::escape_md(v.reason));
    out += "\n";
  }
  return out;
}

std::string render_migration_json(const MigrationRecord& record) {
  const MigrationSummary s = summarize(record);
  ordered_json steps = ordered_json::array();
  for (std::size_t i = 0; i < s.step_names.size(); ++i)
    steps.push_back({{"name", s.step_names[i]},
                     {"meanS", opt(s.step_mean_max[i].first)},
                     {"maxS", opt(s.step_mean_max[i].second)}});
  ordered_json vms = ordered_json::array();
  for (const auto& v : record.vms) vms.push_back(ordered_json::parse(to_json(v).dump()));
  ordered_json doc = {{"schemaVersion", 1},
                      {"run",
                       {{"id", record.run_id},
                        {"plan", record.plan_name},
                        {"simulated", record.simulated},
                        {"lab", record.lab},
                        {"source", record.source_url},
                        {"destination", record.destination},
                        {"forkliftNamespace", record.forklift_namespace},
                        {"targetNamespace", record.target_namespace},
                        {"type", record.warm ? "warm" : "cold"},
                        {"startedAt", record.started_at},
                        {"outcome", record.outcome}}},
                      {"summary",
                       {{"vms", s.vms},
                        {"succeeded", s.succeeded},
                        {"failed", s.failed},
                        {"meanS", opt(s.mean_s)},
                        {"p50S", opt(s.p50_s)},
                        {"p95S", opt(s.p95_s)},
                        {"maxS", opt(s.max_s)},
                        {"wallS", opt(s.wall_s)},
                        {"totalMB", s.total_mb},
                        {"aggregateMBps", opt(s.aggregate_mbps)},
                        {"meanVmMBps", opt(s.mean_vm_mbps)},
                        {"steps", steps}}},
                      {"vms", vms}};
  return doc.dump(2) + "\n";
}

std::string render_migration_csv(const MigrationRecord& record) {
  const MigrationSummary s = summarize(record);
  std::string out = "vm,id,target,status,started_utc,total_s";
  for (const auto& n : s.step_names) out += "," + n + "_s";
  out += ",disk_mb,transfer_mbps,failed_step,reason\n";
  for (const auto& v : record.vms) {
    out += reports::csv_field(v.name) + "," + reports::csv_field(v.id) + "," +
           reports::csv_field(v.target_name) + "," + v.status + "," +
           (v.started_s ? reports::utc_iso(*v.started_s) : "") + "," + csv_number(v.total_s());
    for (const auto& n : s.step_names) {
      const StepRecord* st = v.step(n);
      out += "," + (st != nullptr ? csv_number(st->duration_s()) : "");
    }
    out += "," + reports::number(v.disk_mb(), 3) + "," + csv_number(v.transfer_mbps()) + "," +
           reports::csv_field(v.failed_step) + "," + reports::csv_field(v.reason) + "\n";
  }
  return out;
}

}  // namespace bootstorm::migrate
