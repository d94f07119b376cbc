#pragma once
// Internal to bootstorm::reports: what the renderers share beyond the public text helpers (reports/text.hpp).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/text.hpp"
#include "results/inference.hpp"
#include "results/run_record.hpp"
#include "results/summary.hpp"

namespace bootstorm::reports::detail {

// VMs in report order: the run's scenario order, then repeat, then VM name.
std::vector<const results::VmRecord*> ordered_vms(const results::RunRecord& record);
// The VMs of one scenario/repeat, ordered by start request (then name): the order of the timeline.
std::vector<const results::VmRecord*> vms_by_start(const results::RunRecord& record,
                                                   std::string_view scenario, int repeat);
bool several_repeats(const results::Summary& summary);
// What the platform did around the boots of one scenario, one plain-text sentence each (escape for the
// format): how long provisioning took and with which clone kind; the batched power-on calls, how many VMs
// they did not attempt, and the spread of the per-VM power-on confirmations (the platform's own fan-out);
// what the answers said (api_answer_sentences); how many VMs ran on another host than planned. Empty when
// the run recorded none of it.
std::vector<std::string> platform_sentences(const results::Summary& summary,
                                            const results::ScenarioSummary& sc);
// Storage during the storm, from the platform's monitoring (labelled simulated lab for a simulated run), or
// why there is none: plain sentences, one per line of the report.
std::vector<std::string> storage_sentences(const results::Summary& summary,
                                           const results::ScenarioSummary& sc);
// What the platform's answers said (429, 5xx, Retry-After, API Priority and Fairness, vCenter's task queue).
std::vector<std::string> api_answer_sentences(const http::ApiStats& answers);
// What produced a simulated run's figures: "bootstorm's lab simulator", or "the simulator govmomi vcsim" for
// another simulator that said so.
std::string simulator_source(const results::RunRecord& record);
// A prediction (`bootstorm predict`): nothing was measured.
bool predicted(const results::RunRecord& record);
// What a report's title adds: " — predicted", " — simulated lab" or nothing.
std::string origin_suffix(const results::RunRecord& record);
// A prediction's banner, plain text: the model, its seed and the what-ifs, and what the figures are for.
std::string prediction_note(const results::RunRecord& record);
// "50 requests/s, 64 calls in flight; start burst: every start at once" (plain text).
std::string api_budget_line(const results::ApiBudgetRecord& budget);
// Display value of an SLO statistic ("34.00 s", or "96 %" for ready_fraction).
std::string slo_value(std::string_view stat, const std::optional<double>& v);
// "ready p95 ≤ 60 s" / "ready ready_fraction ≥ 100 %".
std::string slo_name(const results::SloResult& r);

}  // namespace bootstorm::reports::detail

namespace bootstorm::reports::detail {
// A figure for a JSON document: the number, or null when it is unset or not finite (JSON has no NaN).
nlohmann::ordered_json number_or_null(const std::optional<double>& v);
}  // namespace bootstorm::reports::detail

namespace bootstorm::reports::detail {
// Writes `content` to a temporary name beside `path` and renames it, so readers never see half a file; a
// failed write says why and leaves nothing behind.
Expected<void> write_file(const std::filesystem::path& path, std::string_view content);
}  // namespace bootstorm::reports::detail

namespace bootstorm::reports::detail {
// The HTML page frame shared by report.html and compare.html (html.cpp).
std::string html_head(std::string_view title);
std::string html_tail(std::string_view generated_at, std::string_view what);
}  // namespace bootstorm::reports::detail

namespace bootstorm::reports::detail {
// Table cells of a comparison, for HTML: "31.86 → 7.75 s" over a small "−75.7 %"; "−24.11 s" over the CI.
std::string html_change_cell(double baseline, double candidate, double rel);
std::string html_ci_cell(double estimate, double lower, double upper);
// The figure cells of one comparison row, mean to Mann-Whitney p (compare.html and report.html list the
// same).
std::string html_comparison_cells(const results::Comparison& c);
}  // namespace bootstorm::reports::detail

namespace bootstorm::reports::detail {
// The report renderers with the comparisons computed once by the caller (write_run_outputs renders both).
std::string render_report_md_with(const results::RunRecord& record, const results::Summary& summary,
                                  const std::vector<results::Comparison>& comparisons,
                                  std::string_view generated_at);
std::string render_report_html_with(const results::RunRecord& record, const results::Summary& summary,
                                    const std::vector<results::Comparison>& comparisons,
                                    std::string_view generated_at);
}  // namespace bootstorm::reports::detail
