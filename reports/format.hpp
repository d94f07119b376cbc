#pragma once
// Formatting helpers shared by the renderers (internal to bootstorm::reports).
#include <optional>
#include <string>
#include <string_view>

namespace bootstorm::reports::detail {

// Escapes &, <, >, " and ' for HTML/XML text and attribute values.
std::string escape_xml(std::string_view text);
// Escapes a Markdown table cell: | and newlines, and < > & so that no HTML reaches a renderer.
std::string escape_md(std::string_view text);
// Seconds for people: "31.20 s", or "—" when absent.
std::string seconds(const std::optional<double>& v, int decimals = 2);
std::string percent(double fraction, int decimals = 0);  // 0.9583 -> "96 %"
// A number in the shortest form with at most `decimals` decimals ("31.2", "0.000125", "24").
std::string number(double v, int decimals = 6);
// RFC 3339 UTC with milliseconds from unix seconds ("2026-11-30T10:00:00.123Z"); empty for 0.
std::string utc_iso(double unix_s);
// "name" or "name #2" when the run has several repeats.
std::string scenario_label(std::string_view name, int repeat, bool several_repeats);

}  // namespace bootstorm::reports::detail

#include <vector>

#include "orchestrator/stats/run_record.hpp"
#include "orchestrator/stats/summary.hpp"

namespace bootstorm::reports::detail {

// VMs in report order: the run's scenario order, then repeat, then VM name.
std::vector<const stats::VmRecord*> ordered_vms(const stats::RunRecord& record);
// The VMs of one scenario/repeat, ordered by start request (then name): the order of the timeline.
std::vector<const stats::VmRecord*> vms_by_start(const stats::RunRecord& record, std::string_view scenario,
                                                 int repeat);
bool several_repeats(const stats::Summary& summary);
// Display value of an SLO statistic ("34.00 s", or "96 %" for ready_fraction).
std::string slo_value(std::string_view stat, const std::optional<double>& v);
// "ready p95 ≤ 60 s" / "ready ready_fraction ≥ 100 %".
std::string slo_name(const stats::SloResult& r);

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
}  // namespace bootstorm::reports::detail

#include "orchestrator/stats/inference.hpp"

namespace bootstorm::reports::detail {
// The report renderers with the comparisons computed once by the caller (write_run_outputs renders both).
std::string render_report_md_with(const stats::RunRecord& record, const stats::Summary& summary,
                                  const std::vector<stats::Comparison>& comparisons,
                                  std::string_view generated_at);
std::string render_report_html_with(const stats::RunRecord& record, const stats::Summary& summary,
                                    const std::vector<stats::Comparison>& comparisons,
                                    std::string_view generated_at);
}  // namespace bootstorm::reports::detail
