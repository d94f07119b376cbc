#pragma once
// Renderers of a run directory (DESIGN.md "The run directory"): every artefact is a pure function of the
// RunRecord and its Summary, plus the generation timestamp for the human-readable reports — the only thing
// allowed to differ between two renders of the same record.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "results/inference.hpp"
#include "results/run_record.hpp"
#include "results/summary.hpp"

namespace bootstorm::reports {

// OpenMetrics histogram buckets of boot time (seconds).
inline constexpr double kBootTimeBuckets[] = {0.5, 1, 2, 5, 10, 20, 30, 40, 50, 60, 90, 120, 180, 300, 600};

// vms.csv: scenario,repeat,vm,host,start_requested_utc, then <milestone>_s,<milestone>_res_s for every
// milestone in api::kAllMilestones order (empty when never reached), then status,reason. RFC 4180 quoting,
// CRLF-free (LF line ends), rows in scenario order, then repeat, then VM name.
std::string render_vms_csv(const results::RunRecord& record);

// telemetry.csv: every storage sample of every storm, one row per subject and interval:
// scenario,repeat,source,kind,subject,from_unix_s,to_unix_s,read_bytes_per_s,write_bytes_per_s,read_iops,
// write_iops,read_latency_ms,write_latency_ms (latency empty without I/O). Written only when a storm has
// telemetry.
std::string render_telemetry_csv(const results::RunRecord& record);

// summary.json (results::summary_to_json_text).
std::string render_summary_json(const results::Summary& summary);

// report.md: overview, comparisons, per-scenario results, milestone breakdowns, failures and SLO verdicts.
std::string render_report_md(const results::RunRecord& record, const results::Summary& summary,
                             std::string_view generated_at);

// report.html: self-contained (inline CSS and SVG, no scripts, no network), print-friendly.
std::string render_report_html(const results::RunRecord& record, const results::Summary& summary,
                               std::string_view generated_at);

// junit.xml: one testsuite per scenario/repeat, one testcase per SLO; a <failure> states value vs threshold.
std::string render_junit_xml(const results::RunRecord& record, const results::Summary& summary);

// The run's figures as metrics (boot-time histograms, milestone statistics and counts, starts sent, failures
// by kind, API requests and answers by status, fire skew, ready ratio, storage, SLOs), in one of the two
// exposition formats: the Prometheus text format 0.0.4 (promtool checks it; node_exporter's textfile
// collector reads it) or OpenMetrics 1.0 (info type, UNIT lines, `# EOF`). The same families in both.
enum class MetricsFormat { prometheus_text, openmetrics };
std::string_view metrics_content_type(MetricsFormat format);

// What only a run in progress knows: whether it still runs, and the running scenario's API account so far
// (the journal records a scenario's at its end).
struct LiveApiAccount {
  std::string scenario;
  int repeat = 1;
  http::ApiStats answers;  // its requests count too
};
struct LiveMetrics {
  bool running = true;
  std::optional<LiveApiAccount> in_progress;
};
// `live`: the figures of a run still going on (adds bootstorm_run_active), nullptr for a finished run.
std::string render_metrics(const results::RunRecord& record, const results::Summary& summary,
                           MetricsFormat format, const LiveMetrics* live = nullptr);
// metrics.prom: render_metrics in the Prometheus text format.
std::string render_metrics_prom(const results::RunRecord& record, const results::Summary& summary);

// kube-burner-style quantile documents (metricName "vmiLatencyQuantilesMeasurement"), one per
// scenario/repeat and milestone ("ready" plus each reached milestone). Latencies in milliseconds, as
// kube-burner writes them. Fields: quantileName, uuid, P99, P95, P50, min, max, avg, timestamp, metricName,
// jobName (the scenario), plus repeat and count.
nlohmann::ordered_json quantile_documents(const results::RunRecord& record, const results::Summary& summary);

// Per-VM documents (metricName "vmiLatencyMeasurement"): one per VM with <milestone>Latency in ms.
nlohmann::ordered_json vm_documents(const results::RunRecord& record, const results::Summary& summary);

// Elasticsearch/OpenSearch _bulk body: for each document of the array an {"index":{"_index":...}} action
// line and the document line, newline-terminated.
std::string to_bulk_ndjson(std::string_view index, const nlohmann::ordered_json& documents);

// Writes summary.json, vms.csv, report.md, report.html, junit.xml, metrics.prom, quantiles.json and
// vm-latency.json into `dir` (created when missing). Each file is written to a temporary name and renamed,
// so readers never see half a file.
Expected<void> write_run_outputs(const std::filesystem::path& dir, const results::RunRecord& record,
                                 const results::Summary& summary, std::string_view generated_at);

// Where the time went, in words (plain text, escape for the format). One sentence per scenario whose median
// VM waited longer for the control plane (start to scheduled) than for any other phase: "Delayed by the
// control plane: ...". Empty when no scenario was.
std::vector<std::string> control_plane_sentences(const results::Summary& summary);
// "Where the time went (mean per VM): API 0.01 s, control plane 4.20 s, ..."; empty without phases.
std::string phase_sentence(const results::ScenarioSummary& scenario);

// The samples to compare, one per scenario name (repeats pooled: boot times concatenated, time-to-all-ready
// averaged over repeats when every repeat has one), in the run's scenario order.
std::vector<results::ComparedSample> pooled_samples(const results::Summary& summary);

// Every scenario after the first compared with the first (the baseline: the plan's first scenario). Pairs
// where a side has no ready VM are skipped.
std::vector<results::Comparison> scenario_comparisons(const results::Summary& summary,
                                                      const results::BootstrapOptions& options = {});

}  // namespace bootstorm::reports
