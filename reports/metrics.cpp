// A run's figures as metrics: metrics.prom at the end (Prometheus text format), and the live /metrics of
// `run --metrics-listen` while the run goes on (OpenMetrics or Prometheus text, as the scraper asks). Both
// come from the same RunRecord and Summary, so the live values at the end are the journal's.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "reports/reports.hpp"
#include "reports/text.hpp"

namespace bootstorm::reports {
namespace {

// Label value escaping of both formats: backslash, double quote and line feed.
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

// Canonical float for le labels: always with a decimal point ("1.0", "0.5").
std::string canonical_float(double v) {
  std::string s = number(v, 6);
  if (s.find('.') == std::string::npos && s.find('I') == std::string::npos) s += ".0";
  return s;
}

enum class Type { counter, gauge, histogram, info };

// The two formats differ only in their metadata lines: OpenMetrics names a counter's family without
// `_total` and an info family without `_info`, has an info type and UNIT lines, and ends with `# EOF`; the
// Prometheus text format names the family as its samples are named and knows no info type (a gauge of 1).
class Exposition {
 public:
  explicit Exposition(MetricsFormat format) : format_(format) {}

  // `name` without the suffix a counter (`_total`) or an info metric (`_info`) adds to its samples.
  void family(std::string_view name, Type type, std::string_view unit, std::string_view help) {
    const bool om = format_ == MetricsFormat::openmetrics;
    std::string named(name);
    std::string type_word = type == Type::counter     ? "counter"
                            : type == Type::histogram ? "histogram"
                                                      : "gauge";
    if (type == Type::info) {
      if (om)
        type_word = "info";
      else
        named += "_info";
    }
    if (type == Type::counter && !om) named += "_total";
    if (om) {
      out_ += fmt::format("# TYPE {} {}\n", named, type_word);
      if (!unit.empty()) out_ += fmt::format("# UNIT {} {}\n", named, unit);
      out_ += fmt::format("# HELP {} {}\n", named, help);
    } else {
      out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", named, help, named, type_word);
    }
  }
  void sample(std::string_view name, const std::string& labels, std::string_view value) {
    out_ += fmt::format("{}{} {}\n", name, labels, value);
  }
  std::string finish() {
    if (format_ == MetricsFormat::openmetrics) out_ += "# EOF\n";
    return std::move(out_);
  }

 private:
  MetricsFormat format_;
  std::string out_;
};

struct ScenarioCounts {
  std::size_t starts = 0;
  std::map<std::string, std::size_t> failures;  // failure kind -> VMs
};

std::map<std::pair<std::string, int>, ScenarioCounts> counts_of(const results::RunRecord& record) {
  std::map<std::pair<std::string, int>, ScenarioCounts> out;
  for (const auto& vm : record.vms) {
    ScenarioCounts& c = out[{vm.scenario, vm.repeat}];
    if (vm.milestones.count(api::Milestone::start_requested)) ++c.starts;
    if (vm.status == "failed") ++c.failures[vm.failure.empty() ? "other" : vm.failure];
  }
  return out;
}

// The labels of a scenario's samples: the run, the plan, the scenario and its repeat, then `extra`.
struct Labels {
  const results::RunRecord& record;
  std::string operator()(const results::ScenarioSummary& sc, std::string_view extra = {}) const {
    std::string l =
        fmt::format("run_id=\"{}\",plan=\"{}\",scenario=\"{}\",repeat=\"{}\"", label_value(record.run_id),
                    label_value(record.plan_name), label_value(sc.name), sc.repeat);
    if (!extra.empty()) l += "," + std::string(extra);
    return "{" + l + "}";
  }
};

// The storage figures of each storm, as its telemetry source measured them (labelled with the source), and
// the SLO verdicts.
void storage_and_slo_families(Exposition& x, const results::Summary& summary, const Labels& labels) {
  const bool any_storage =
      std::any_of(summary.scenarios.begin(), summary.scenarios.end(),
                  [](const results::ScenarioSummary& sc) { return sc.storage.has_value(); });
  if (any_storage) {
    auto storage_family = [&](std::string_view name, std::string_view unit, std::string_view help,
                              auto value_of) {
      x.family(name, Type::gauge, unit, help);
      for (const auto& sc : summary.scenarios) {
        if (!sc.storage) continue;
        if (auto v = value_of(*sc.storage))
          x.sample(name, labels(sc, fmt::format("telemetry=\"{}\"", label_value(sc.storage->source))),
                   number(*v));
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
    x.family("bootstorm_storage_link_peak_utilisation_ratio", Type::gauge, "ratio",
             "Peak throughput of a host's HBA link against its capacity.");
    for (const auto& sc : summary.scenarios) {
      if (!sc.storage) continue;
      for (const auto& h : sc.storage->hosts)
        if (h.peak_utilisation)
          x.sample("bootstorm_storage_link_peak_utilisation_ratio",
                   labels(sc, fmt::format("host=\"{}\"", label_value(h.host))), number(*h.peak_utilisation));
    }
  }

  if (!summary.slo.empty()) {
    x.family("bootstorm_slo_pass", Type::gauge, "", "1 when the SLO held, 0 when it did not.");
    for (const auto& r : summary.slo) {
      results::ScenarioSummary key;
      key.name = r.scenario;
      key.repeat = r.repeat;
      x.sample("bootstorm_slo_pass",
               labels(key, fmt::format("milestone=\"{}\",stat=\"{}\"", label_value(r.milestone),
                                       label_value(r.stat))),
               r.pass ? "1" : "0");
    }
  }
}

}  // namespace

std::string_view metrics_content_type(MetricsFormat format) {
  return format == MetricsFormat::openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                              : "text/plain; version=0.0.4; charset=utf-8";
}

std::string render_metrics(const results::RunRecord& record, const results::Summary& summary,
                           MetricsFormat format, const LiveMetrics* live) {
  Exposition x(format);
  const Labels labels{record};
  // The API answers of a scenario: the journal's once it ended, the provider's so far while it runs.
  auto api_of =
      [&](const results::ScenarioSummary& sc) -> std::pair<std::uint64_t, std::optional<http::ApiStats>> {
    if (live && live->in_progress && live->in_progress->scenario == sc.name &&
        live->in_progress->repeat == sc.repeat)
      return {live->in_progress->answers.requests, live->in_progress->answers};
    return {sc.api_requests, sc.api_answers};
  };

  x.family(
      "bootstorm_run", Type::info, "",
      "The run: where its figures come from (source: measured, simulated or predicted) and the platform.");
  x.sample(
      "bootstorm_run_info",
      fmt::format("{{run_id=\"{}\",plan=\"{}\",platform=\"{}\",source=\"{}\",simulator=\"{}\",product=\"{}\","
                  "version=\"{}\"}}",
                  label_value(record.run_id), label_value(record.plan_name), label_value(record.platform),
                  label_value(summary.run.source), label_value(record.facts.simulator),
                  label_value(record.facts.product), label_value(record.facts.version)),
      "1");
  if (live) {
    x.family("bootstorm_run_active", Type::gauge, "", "1 while the run goes on, 0 once it has ended.");
    x.sample("bootstorm_run_active", fmt::format("{{run_id=\"{}\"}}", label_value(record.run_id)),
             live->running ? "1" : "0");
  }

  x.family("bootstorm_boot_time_seconds", Type::histogram, "seconds",
           "Boot time (ready milestone minus start_requested) of the VMs that became ready.");
  for (const auto& sc : summary.scenarios) {
    std::vector<double> sorted = sc.boot_times_s;
    std::sort(sorted.begin(), sorted.end());
    for (double le : kBootTimeBuckets) {
      const auto n = std::upper_bound(sorted.begin(), sorted.end(), le) - sorted.begin();
      x.sample("bootstorm_boot_time_seconds_bucket",
               labels(sc, fmt::format("le=\"{}\"", canonical_float(le))), std::to_string(n));
    }
    x.sample("bootstorm_boot_time_seconds_bucket", labels(sc, "le=\"+Inf\""), std::to_string(sorted.size()));
    double sum = 0;
    for (double v : sorted) sum += v;
    x.sample("bootstorm_boot_time_seconds_count", labels(sc), std::to_string(sorted.size()));
    x.sample("bootstorm_boot_time_seconds_sum", labels(sc), number(sum));
  }

  x.family("bootstorm_milestone_latency_seconds", Type::gauge, "seconds",
           "Statistics of each milestone's offset from start_requested over the VMs that reached it.");
  for (const auto& sc : summary.scenarios) {
    for (const auto& m : sc.milestones) {
      const std::pair<const char*, std::optional<double>> stats[] = {
          {"mean", m.dist.mean}, {"min", m.dist.min}, {"p50", m.dist.p50}, {"p90", m.dist.p90},
          {"p95", m.dist.p95},   {"p99", m.dist.p99}, {"max", m.dist.max}};
      for (const auto& [stat, value] : stats) {
        if (!value) continue;
        x.sample("bootstorm_milestone_latency_seconds",
                 labels(sc, fmt::format("milestone=\"{}\",stat=\"{}\"", label_value(m.name), stat)),
                 number(*value));
      }
    }
  }

  x.family("bootstorm_milestone_vms", Type::gauge, "",
           "VMs of the scenario that have reached each milestone.");
  for (const auto& sc : summary.scenarios)
    for (const auto& m : sc.milestones)
      x.sample("bootstorm_milestone_vms", labels(sc, fmt::format("milestone=\"{}\"", label_value(m.name))),
               std::to_string(m.dist.count));

  x.family("bootstorm_ready_ratio", Type::gauge, "ratio",
           "Fraction of the scenario's VMs that became ready.");
  for (const auto& sc : summary.scenarios)
    x.sample("bootstorm_ready_ratio", labels(sc), number(sc.ready().ready_fraction));

  const auto counts = counts_of(record);
  x.family("bootstorm_starts_sent", Type::counter, "", "Start requests sent to the platform.");
  for (const auto& sc : summary.scenarios) {
    auto it = counts.find({sc.name, sc.repeat});
    x.sample("bootstorm_starts_sent_total", labels(sc),
             std::to_string(it == counts.end() ? 0 : it->second.starts));
  }

  x.family("bootstorm_fire_skew_seconds", Type::gauge, "seconds",
           "Time from the first to the last start request sent.");
  for (const auto& sc : summary.scenarios)
    x.sample("bootstorm_fire_skew_seconds", labels(sc), number(sc.fire_skew_ms / 1000.0, 9));

  x.family("bootstorm_time_to_all_ready_seconds", Type::gauge, "seconds",
           "From the first start request to the last VM ready (only when every VM became ready).");
  for (const auto& sc : summary.scenarios)
    if (sc.time_to_all_ready_s)
      x.sample("bootstorm_time_to_all_ready_seconds", labels(sc), number(*sc.time_to_all_ready_s));

  x.family("bootstorm_vms", Type::gauge, "", "VMs of the scenario by outcome.");
  for (const auto& sc : summary.scenarios) {
    const auto ready = sc.ready().count;
    x.sample("bootstorm_vms", labels(sc, "state=\"ready\""), std::to_string(ready));
    x.sample(
        "bootstorm_vms", labels(sc, "state=\"not_ready\""),
        std::to_string(static_cast<std::size_t>(std::max(sc.vms, 0)) - std::min<std::size_t>(ready, sc.vms)));
  }

  x.family(
      "bootstorm_vm_failures", Type::counter, "",
      "VMs that failed, by what failed: clone, not_startable, not_started, start_failed, start_hung, timeout "
      "(other: a run from before the kind was recorded).");
  for (const auto& sc : summary.scenarios) {
    auto it = counts.find({sc.name, sc.repeat});
    if (it == counts.end()) continue;
    for (const auto& [kind, n] : it->second.failures)
      x.sample("bootstorm_vm_failures_total", labels(sc, fmt::format("reason=\"{}\"", label_value(kind))),
               std::to_string(n));
  }

  x.family("bootstorm_api_requests", Type::counter, "", "Platform API requests made during the scenario.");
  for (const auto& sc : summary.scenarios)
    x.sample("bootstorm_api_requests_total", labels(sc), std::to_string(api_of(sc).first));

  x.family(
      "bootstorm_api_answers", Type::counter, "",
      "The platform API's answers during the scenario by HTTP status (429: throttled, 5xx: server errors).");
  for (const auto& sc : summary.scenarios) {
    const auto answers = api_of(sc).second;
    if (!answers) continue;
    for (const auto& [code, n] : answers->statuses)
      x.sample("bootstorm_api_answers_total", labels(sc, fmt::format("code=\"{}\"", label_value(code))),
               std::to_string(n));
  }

  storage_and_slo_families(x, summary, labels);
  return x.finish();
}

std::string render_metrics_prom(const results::RunRecord& record, const results::Summary& summary) {
  return render_metrics(record, summary, MetricsFormat::prometheus_text);
}

}  // namespace bootstorm::reports
