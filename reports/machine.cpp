// Machine-readable renderers: vms.csv, summary.json, junit.xml, kube-burner-style documents,
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

nlohmann::ordered_json ms_or_null(const std::optional<double>& s) {
  return s ? nlohmann::ordered_json(std::llround(*s * 1000.0)) : nlohmann::ordered_json(nullptr);
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
                       {"meanS", detail::number_or_null(m.dist.mean)},
                       {"p50S", detail::number_or_null(m.dist.p50)},
                       {"p95S", detail::number_or_null(m.dist.p95)}};
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
