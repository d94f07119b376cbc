// Machine-readable renderers: vms.csv, summary.json, junit.xml, metrics.prom, kube-burner-style documents,
// the _bulk body, and the pooling of samples for comparisons.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "providers/api/platform_facts.hpp"
#include "reports/csv.hpp"
#include "reports/detail/format.hpp"
#include "reports/reports.hpp"
#include "results/summary_json.hpp"

namespace bootstorm::reports {
namespace {

// "guest_agent" -> "GuestAgent" (quantileName) or "guestAgent" (per-VM field prefix).
std::string camel(std::string_view snake, bool upper_first) {
  std::string out;
  bool upper = upper_first;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

nlohmann::ordered_json number_or_null(const std::optional<double>& s) {
  return s ? nlohmann::ordered_json(*s) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json ms_or_null(const std::optional<double>& s) {
  return s ? nlohmann::ordered_json(std::llround(*s * 1000.0)) : nlohmann::ordered_json(nullptr);
}

// OpenMetrics label value escaping: backslash, double quote and line feed.
std::string label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// Canonical OpenMetrics float for le/quantile labels: always with a decimal point ("1.0", "0.5").
std::string canonical_float(double v) {
  std::string s = number(v, 6);
  if (s.find('.') == std::string::npos && s.find('I') == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string render_telemetry_csv(const results::RunRecord& record) {
  std::string out =
      "scenario,repeat,source,kind,subject,from_unix_s,to_unix_s,read_bytes_per_s,write_bytes_per_s,read_"
      "iops,"
      "write_iops,read_latency_ms,write_latency_ms\n";
  auto latency = [](const std::optional<double>& s) {
    return s ? fmt::format("{:.4f}", *s * 1e3) : std::string();
  };
  for (const auto& sc : record.scenarios) {
    if (!sc.telemetry) continue;
    for (const auto& s : sc.telemetry->samples) {
      out += fmt::format("{},{},{},{},{},{:.3f},{:.3f},{:.1f},{:.1f},{:.2f},{:.2f},{},{}\n",
                         csv_field(sc.name), sc.repeat, csv_field(sc.telemetry->source),
                         api::to_string(s.kind), csv_field(s.subject), s.from, s.to, s.rates.read_bytes_per_s,
                         s.rates.write_bytes_per_s, s.rates.read_iops, s.rates.write_iops,
                         latency(s.rates.read_latency_s), latency(s.rates.write_latency_s));
    }
  }
  return out;
}

std::string render_vms_csv(const results::RunRecord& record) {
  std::string out = "scenario,repeat,vm,host,start_requested_utc";
  for (auto m : api::kAllMilestones) out += fmt::format(",{0}_s,{0}_res_s", api::to_string(m));
  out += ",status,reason\n";
  for (const auto* vm : detail::ordered_vms(record)) {
    out += csv_field(vm->scenario);
    out += ',' + std::to_string(vm->repeat);
    out += ',' + csv_field(vm->name);
    out += ',' + csv_field(vm->host);
    out += ',' + utc_iso(vm->start_requested_unix_s);
    for (auto m : api::kAllMilestones) {
      auto it = vm->milestones.find(m);
      if (it == vm->milestones.end()) {
        out += ",,";
      } else {
        out += ',' + number(it->second.offset_s) + ',' + number(it->second.resolution_s);
      }
    }
    out += ',' + csv_field(vm->status);
    out += ',' + csv_field(vm->reason);
    out += '\n';
  }
  return out;
}

std::string render_summary_json(const results::Summary& summary) {
  return results::summary_to_json_text(summary);
}

std::string render_junit_xml(const results::RunRecord& record, const results::Summary& summary) {
  const bool repeats = detail::several_repeats(summary);
  std::size_t failures = 0;
  for (const auto& r : summary.slo)
    if (!r.pass) ++failures;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
                     escape_xml("bootstorm SLOs: " + record.plan_name), summary.slo.size(), failures);
  for (const auto& sc : summary.scenarios) {
    std::vector<const results::SloResult*> results;
    for (const auto& r : summary.slo)
      if (r.scenario == sc.name && r.repeat == sc.repeat) results.push_back(&r);
    const auto failed = std::count_if(results.begin(), results.end(), [](auto* r) { return !r->pass; });
    const std::string suite = scenario_label(sc.name, sc.repeat, repeats);
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                       escape_xml(suite), results.size(), failed);
    out += "    <properties>\n";
    out += fmt::format("      <property name=\"run\" value=\"{}\"/>\n", escape_xml(record.run_id));
    out += fmt::format("      <property name=\"platform\" value=\"{}\"/>\n", escape_xml(record.platform));
    out += fmt::format("      <property name=\"simulated\" value=\"{}\"/>\n",
                       record.simulated ? "true" : "false");
    out += fmt::format("      <property name=\"source\" value=\"{}\"/>\n", escape_xml(summary.run.source));
    out += fmt::format("      <property name=\"vms\" value=\"{}\"/>\n", sc.vms);
    out += fmt::format("      <property name=\"hosts\" value=\"{}\"/>\n", sc.hosts);
    out += "    </properties>\n";
    const std::string classname = "bootstorm." + record.plan_name + "." + suite;
    for (const auto* r : results) {
      const std::string name = detail::slo_name(*r);
      if (r->pass) {
        out += fmt::format("    <testcase classname=\"{}\" name=\"{}\"/>\n", escape_xml(classname),
                           escape_xml(name));
        continue;
      }
      const std::string threshold = detail::slo_value(r->stat, r->threshold);
      const std::string message =
          r->value ? fmt::format("{} {} of {} is {}, {} the {} of {}", sc.name, r->stat, r->milestone,
                                 detail::slo_value(r->stat, r->value), r->is_min ? "below" : "above",
                                 r->is_min ? "minimum" : "maximum", threshold)
                   : fmt::format("{} {} of {} has no value (no VM reached {}); threshold {}", sc.name,
                                 r->stat, r->milestone, r->milestone, threshold);
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", escape_xml(classname),
                         escape_xml(name));
      out +=
          fmt::format("      <failure type=\"SLO\" message=\"{}\">{}</failure>\n", escape_xml(message),
                      escape_xml(fmt::format("value: {}\nthreshold: {} {}\nVMs: {}, ready: {}",
                                             detail::slo_value(r->stat, r->value), r->is_min ? "min" : "max",
                                             threshold, sc.vms, sc.ready().count)));
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

std::string render_metrics_prom(const results::RunRecord& record, const results::Summary& summary) {
  auto labels = [&](const results::ScenarioSummary& sc, std::string_view extra = {}) {
    std::string l =
        fmt::format("run_id=\"{}\",plan=\"{}\",scenario=\"{}\",repeat=\"{}\"", label_value(record.run_id),
                    label_value(record.plan_name), label_value(sc.name), sc.repeat);
    if (!extra.empty()) l += "," + std::string(extra);
    return "{" + l + "}";
  };
  std::string out;
  auto family = [&](std::string_view name, std::string_view type, std::string_view unit,
                    std::string_view help) {
    out += fmt::format("# TYPE {} {}\n", name, type);
    if (!unit.empty()) out += fmt::format("# UNIT {} {}\n", name, unit);
    out += fmt::format("# HELP {} {}\n", name, help);
  };

  // What produced the figures, as an info metric (OpenMetrics: a gauge of 1 whose labels are the facts).
  family("bootstorm_run", "info", "",
         "The run: where its figures come from (source: measured, simulated or predicted) and the platform.");
  out += fmt::format(
      "bootstorm_run_info{{run_id=\"{}\",plan=\"{}\",platform=\"{}\",source=\"{}\",simulator=\"{}\","
      "product=\"{}\",version=\"{}\"}} 1\n",
      label_value(record.run_id), label_value(record.plan_name), label_value(record.platform),
      label_value(summary.run.source), label_value(record.facts.simulator), label_value(record.facts.product),
      label_value(record.facts.version));
  family("bootstorm_boot_time_seconds", "histogram", "seconds",
         "Boot time (ready milestone minus start_requested) of the VMs that became ready.");
  for (const auto& sc : summary.scenarios) {
    std::vector<double> sorted = sc.boot_times_s;
    std::sort(sorted.begin(), sorted.end());
    for (double le : kBootTimeBuckets) {
      const auto n = std::upper_bound(sorted.begin(), sorted.end(), le) - sorted.begin();
      out += fmt::format("bootstorm_boot_time_seconds_bucket{} {}\n",
                         labels(sc, fmt::format("le=\"{}\"", canonical_float(le))), n);
    }
    out += fmt::format("bootstorm_boot_time_seconds_bucket{} {}\n", labels(sc, "le=\"+Inf\""), sorted.size());
    double sum = 0;
    for (double v : sorted) sum += v;
    out += fmt::format("bootstorm_boot_time_seconds_count{} {}\n", labels(sc), sorted.size());
    out += fmt::format("bootstorm_boot_time_seconds_sum{} {}\n", labels(sc), number(sum));
  }

  family("bootstorm_milestone_latency_seconds", "gauge", "seconds",
         "Statistics of each milestone's offset from start_requested over the VMs that reached it.");
  for (const auto& sc : summary.scenarios) {
    for (const auto& m : sc.milestones) {
      const std::pair<const char*, std::optional<double>> stats[] = {
          {"mean", m.dist.mean}, {"min", m.dist.min}, {"p50", m.dist.p50}, {"p90", m.dist.p90},
          {"p95", m.dist.p95},   {"p99", m.dist.p99}, {"max", m.dist.max}};
      for (const auto& [stat, value] : stats) {
        if (!value) continue;
        out += fmt::format("bootstorm_milestone_latency_seconds{} {}\n",
                           labels(sc, fmt::format("milestone=\"{}\",stat=\"{}\"", label_value(m.name), stat)),
                           number(*value));
      }
    }
  }

  family("bootstorm_ready_ratio", "gauge", "ratio", "Fraction of the scenario's VMs that became ready.");
  for (const auto& sc : summary.scenarios)
    out += fmt::format("bootstorm_ready_ratio{} {}\n", labels(sc), number(sc.ready().ready_fraction));

  family("bootstorm_fire_skew_seconds", "gauge", "seconds",
         "Time from the first to the last start request sent.");
  for (const auto& sc : summary.scenarios)
    out += fmt::format("bootstorm_fire_skew_seconds{} {}\n", labels(sc), number(sc.fire_skew_ms / 1000.0, 9));

  family("bootstorm_time_to_all_ready_seconds", "gauge", "seconds",
         "From the first start request to the last VM ready (only when every VM became ready).");
  for (const auto& sc : summary.scenarios)
    if (sc.time_to_all_ready_s)
      out += fmt::format("bootstorm_time_to_all_ready_seconds{} {}\n", labels(sc),
                         number(*sc.time_to_all_ready_s));

  family("bootstorm_vms", "gauge", "", "VMs of the scenario by outcome.");
  for (const auto& sc : summary.scenarios) {
    const auto ready = sc.ready().count;
    out += fmt::format("bootstorm_vms{} {}\n", labels(sc, "state=\"ready\""), ready);
    out += fmt::format("bootstorm_vms{} {}\n", labels(sc, "state=\"not_ready\""),
                       static_cast<std::size_t>(std::max(sc.vms, 0)) - std::min<std::size_t>(ready, sc.vms));
  }

  family("bootstorm_api_requests", "counter", "", "Platform API requests made during the scenario.");
  for (const auto& sc : summary.scenarios)
    out += fmt::format("bootstorm_api_requests_total{} {}\n", labels(sc), sc.api_requests);

  const bool any_storage =
      std::any_of(summary.scenarios.begin(), summary.scenarios.end(),
                  [](const results::ScenarioSummary& sc) { return sc.storage.has_value(); });
  if (any_storage) {
    // The storage figures of each storm, as its telemetry source measured them (labelled with the source).
    auto storage_family = [&](std::string_view name, std::string_view unit, std::string_view help,
                              auto value_of) {
      family(name, "gauge", unit, help);
      for (const auto& sc : summary.scenarios) {
        if (!sc.storage) continue;
        if (auto v = value_of(*sc.storage)) {
          out += fmt::format("{}{} {}\n", name,
                             labels(sc, fmt::format("telemetry=\"{}\"", label_value(sc.storage->source))),
                             number(*v));
        }
      }
    };
    using F = results::StorageFigures;
    storage_family("bootstorm_storage_peak_bytes_per_second", "bytes_per_second",
                   "Peak storage throughput (read + write) over the storm's samples.",
                   [](const F& f) { return std::optional<double>(f.peak_bytes_per_s); });
    storage_family("bootstorm_storage_mean_bytes_per_second", "bytes_per_second",
                   "Mean storage throughput over the storm's window.",
                   [](const F& f) { return std::optional<double>(f.mean_bytes_per_s); });
    storage_family("bootstorm_storage_peak_iops", "", "Peak I/Os per second over the storm's samples.",
                   [](const F& f) { return std::optional<double>(f.peak_iops); });
    storage_family("bootstorm_storage_peak_iops_per_desktop", "", "Peak IOPS divided by the scenario's VMs.",
                   [](const F& f) { return std::optional<double>(f.peak_iops_per_desktop); });
    storage_family("bootstorm_storage_read_latency_p95_seconds", "seconds",
                   "95th percentile of the VMs' mean read latency per sample.",
                   [](const F& f) { return f.read_latency_p95_s; });
    family("bootstorm_storage_link_peak_utilisation_ratio", "gauge", "ratio",
           "Peak throughput of a host's HBA link against its capacity.");
    for (const auto& sc : summary.scenarios) {
      if (!sc.storage) continue;
      for (const auto& h : sc.storage->hosts) {
        if (!h.peak_utilisation) continue;
        out += fmt::format("bootstorm_storage_link_peak_utilisation_ratio{} {}\n",
                           labels(sc, fmt::format("host=\"{}\"", label_value(h.host))),
                           number(*h.peak_utilisation));
      }
    }
  }

  if (!summary.slo.empty()) {
    family("bootstorm_slo_pass", "gauge", "", "1 when the SLO held, 0 when it did not.");
    for (const auto& r : summary.slo) {
      results::ScenarioSummary key;
      key.name = r.scenario;
      key.repeat = r.repeat;
      out += fmt::format("bootstorm_slo_pass{} {}\n",
                         labels(key, fmt::format("milestone=\"{}\",stat=\"{}\"", label_value(r.milestone),
                                                 label_value(r.stat))),
                         r.pass ? 1 : 0);
    }
  }
  out += "# EOF\n";
  return out;
}

nlohmann::ordered_json quantile_documents(const results::RunRecord& record, const results::Summary& summary) {
  auto docs = nlohmann::ordered_json::array();
  for (const auto& sc : summary.scenarios) {
    for (const auto& m : sc.milestones) {
      nlohmann::ordered_json d;
      d["quantileName"] = camel(m.name, true);
      d["uuid"] = record.run_id;
      d["P99"] = ms_or_null(m.dist.p99);
      d["P95"] = ms_or_null(m.dist.p95);
      d["P50"] = ms_or_null(m.dist.p50);
      d["min"] = ms_or_null(m.dist.min);
      d["max"] = ms_or_null(m.dist.max);
      d["avg"] = ms_or_null(m.dist.mean);
      d["timestamp"] = record.started_at;
      d["metricName"] = "vmiLatencyQuantilesMeasurement";
      d["jobName"] = sc.name;
      d["repeat"] = sc.repeat;
      d["count"] = m.dist.count;
      d["metadata"] = {{"plan", record.plan_name},
                       {"platform", record.platform},
                       {"simulated", record.simulated},
                       {"source", summary.run.source},
                       {"readyMilestone", sc.ready_milestone},
                       // What `bootstorm history --index` reads back besides the quantiles.
                       {"milestone", m.name},
                       {"vms", sc.vms},
                       {"total", m.dist.total},
                       {"outcome", summary.run.outcome},
                       {"golden", summary.run.golden},
                       {"cloneKind", summary.run.clone_kind},
                       // The figures history follows, in seconds as summary.json has them: the kube-burner
                       // fields above are whole milliseconds, too coarse for boots of tens of milliseconds.
                       {"meanS", number_or_null(m.dist.mean)},
                       {"p50S", number_or_null(m.dist.p50)},
                       {"p95S", number_or_null(m.dist.p95)}};
      if (summary.run.facts != api::PlatformFacts{})
        d["metadata"]["platformFacts"] = api::facts_to_json(summary.run.facts);
      // The storm's storage beside its ready quantiles (additive; the telemetry source says how measured).
      if (m.name == "ready" && sc.storage) {
        d["storage"] = {
            {"source", sc.storage->source},
            {"resolutionS", sc.storage->resolution_s},
            {"peakMBps", sc.storage->peak_bytes_per_s / 1e6},
            {"meanMBps", sc.storage->mean_bytes_per_s / 1e6},
            {"peakIops", sc.storage->peak_iops},
            {"peakIopsPerDesktop", sc.storage->peak_iops_per_desktop},
            {"readLatencyP95Ms", sc.storage->read_latency_p95_s
                                     ? nlohmann::ordered_json(*sc.storage->read_latency_p95_s * 1e3)
                                     : nlohmann::ordered_json(nullptr)}};
      }
      docs.push_back(std::move(d));
    }
  }
  return docs;
}

nlohmann::ordered_json vm_documents(const results::RunRecord& record, const results::Summary& summary) {
  auto docs = nlohmann::ordered_json::array();
  std::string ready_signal = record.ready_signal;
  if (ready_signal.empty() && !summary.scenarios.empty())
    ready_signal = summary.scenarios.front().ready_milestone;
  for (const auto* vm : detail::ordered_vms(record)) {
    nlohmann::ordered_json d;
    d["timestamp"] = utc_iso(vm->start_requested_unix_s);
    d["uuid"] = record.run_id;
    d["metricName"] = "vmiLatencyMeasurement";
    d["jobName"] = vm->scenario;
    d["repeat"] = vm->repeat;
    d["vmName"] = vm->name;
    d["vmID"] = vm->id;
    d["nodeName"] = vm->host;
    d["status"] = vm->status;
    if (!vm->reason.empty()) d["reason"] = vm->reason;
    d["readyLatency"] = ms_or_null(vm->ready_s);
    for (auto m : api::kAllMilestones) {
      if (m == api::Milestone::start_requested) continue;
      auto it = vm->milestones.find(m);
      d[camel(api::to_string(m), false) + "Latency"] =
          it == vm->milestones.end() ? nlohmann::ordered_json(nullptr) : ms_or_null(it->second.offset_s);
    }
    if (vm->clone_s >= 0) d["cloneLatency"] = std::llround(vm->clone_s * 1000.0);
    docs.push_back(std::move(d));
  }
  return docs;
}

std::string to_bulk_ndjson(std::string_view index, const nlohmann::ordered_json& documents) {
  std::string out;
  const nlohmann::json action = {{"index", {{"_index", std::string(index)}}}};
  const std::string action_line = action.dump() + "\n";
  auto add = [&](const nlohmann::ordered_json& d) {
    out += action_line;
    out += d.dump() + "\n";
  };
  if (documents.is_array()) {
    for (const auto& d : documents) add(d);
  } else if (!documents.is_null()) {
    add(documents);
  }
  return out;
}

std::vector<results::ComparedSample> pooled_samples(const results::Summary& summary) {
  std::vector<results::ComparedSample> samples;
  std::vector<int> repeats_with_ttar, repeats;
  std::vector<double> ttar_sum;
  for (const auto& sc : summary.scenarios) {
    auto it = std::find_if(samples.begin(), samples.end(), [&](const auto& s) { return s.label == sc.name; });
    std::size_t i;
    if (it == samples.end()) {
      samples.push_back(results::ComparedSample{sc.name, sc.vms, {}, std::nullopt});
      repeats_with_ttar.push_back(0);
      repeats.push_back(0);
      ttar_sum.push_back(0);
      i = samples.size() - 1;
    } else {
      i = static_cast<std::size_t>(it - samples.begin());
    }
    samples[i].boot_times_s.insert(samples[i].boot_times_s.end(), sc.boot_times_s.begin(),
                                   sc.boot_times_s.end());
    ++repeats[i];
    if (sc.time_to_all_ready_s) {
      ++repeats_with_ttar[i];
      ttar_sum[i] += *sc.time_to_all_ready_s;
    }
  }
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (repeats_with_ttar[i] == repeats[i] && repeats[i] > 0)
      samples[i].time_to_all_ready_s = ttar_sum[i] / repeats[i];
  return samples;
}

std::vector<results::Comparison> scenario_comparisons(const results::Summary& summary,
                                                      const results::BootstrapOptions& options) {
  std::vector<results::Comparison> out;
  const auto samples = pooled_samples(summary);
  for (std::size_t i = 1; i < samples.size(); ++i) {
    auto c = results::compare_samples(samples.front(), samples[i], options);
    if (c) out.push_back(std::move(c.value()));
  }
  return out;
}

}  // namespace bootstorm::reports
