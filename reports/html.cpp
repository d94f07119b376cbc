// report.html: one self-contained page (inline CSS and SVG, no scripts, no network) for the people who
// decide which hardware to buy — verdict first, then the evidence.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/detail/format.hpp"
#include "reports/detail/html_style.hpp"
#include "reports/detail/svg.hpp"
#include "reports/reports.hpp"

namespace bootstorm::reports {
namespace {

// The storage of one storm over time, on the ready curve's axis (seconds since the first start request):
// MB/s per host link and summed, IOPS, and the mean read latency, each interval a flat step at its mean.
std::string storage_panel(const results::RunRecord& record, const results::ScenarioSummary& sc,
                          std::size_t index, const std::string& label) {
  const results::StorageFigures& f = *sc.storage;
  double first_start = 0;
  for (const auto& r : record.scenarios)
    if (r.name == sc.name && r.repeat == sc.repeat) first_start = r.started_unix_s;
  if (first_start <= 0 && !f.points.empty()) first_start = f.points.front().from;
  const std::string sum_label = f.series == "datastore" ? "datastore (all hosts)"
                                : f.series == "vms"     ? "all desktops"
                                                        : "all hosts";
  svg::IntervalSeries mbps{sum_label, "#111827", {}}, iops{sum_label, "#111827", {}},
      latency{"read latency (I/O-weighted)", "#0072B2", {}};
  for (const auto& p : f.points) {
    mbps.values.push_back({p.from - first_start, p.to - first_start, p.bytes_per_s / 1e6});
    iops.values.push_back({p.from - first_start, p.to - first_start, p.iops});
    if (p.read_latency_s)
      latency.values.push_back({p.from - first_start, p.to - first_start, *p.read_latency_s * 1e3});
  }
  std::vector<svg::IntervalSeries> mbps_series{mbps};
  const auto& telemetry = [&]() -> const std::optional<api::TelemetryReport>& {
    for (const auto& r : record.scenarios)
      if (r.name == sc.name && r.repeat == sc.repeat) return r.telemetry;
    static const std::optional<api::TelemetryReport> none;
    return none;
  }();
  if (telemetry && f.hosts.size() <= 8) {
    std::size_t color = 0;
    for (const auto& h : f.hosts) {
      svg::IntervalSeries host{h.host, std::string(svg::series_color(color++)), {}};
      for (const auto& s : telemetry->samples) {
        if (s.kind == api::StorageSubject::host && s.subject == h.host) {
          host.values.push_back({s.from - first_start, s.to - first_start,
                                 (s.rates.read_bytes_per_s + s.rates.write_bytes_per_s) / 1e6});
        }
      }
      mbps_series.push_back(std::move(host));
    }
  }
  const double x_max = sc.time_to_all_ready_s ? *sc.time_to_all_ready_s : 0;
  const std::string id = fmt::format("storage-{}", index);
  std::string out = "<figure class=\"storage\">\n";
  out += svg::interval_chart(id + "-mbps", "Storage throughput (MB/s)",
                             "Read and write MB/s of each host link and summed, per monitoring sample.",
                             "MB/s", mbps_series, x_max);
  out += svg::interval_chart(id + "-iops", "Storage I/Os per second",
                             "Read and write IOPS summed, per sample.", "IOPS", {iops}, x_max);
  if (!latency.values.empty()) {
    out += svg::interval_chart(id + "-latency", "Read latency (ms)", "Mean read latency per I/O, per sample.",
                               "ms", {latency}, x_max);
  }
  out += fmt::format(
      "<figcaption>Storage during {} as {} measured it ({:g} s samples; each step is one sample's mean).{}"
      "</figcaption>\n</figure>\n",
      escape_xml(label), escape_xml(f.source), f.resolution_s,
      detail::predicted(record) ? " Predicted." : (record.simulated ? " Simulated lab." : ""));
  return out;
}

constexpr std::size_t kMaxGanttRows = 240;

std::string td_num(const std::string& v) {
  return "<td class=\"num\">" + escape_xml(v) + "</td>";
}

std::string milestone_table(const results::ScenarioSummary& sc) {
  std::string out = "<div class=\"scroll\"><table>\n<thead><tr><th scope=\"col\">Milestone</th>";
  for (const char* h : {"Reached", "Mean", "Stdev", "Min", "P50", "P90", "P95", "P99", "Max", "Resolution"})
    out += fmt::format("<th scope=\"col\" class=\"num\">{}</th>", h);
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& m : sc.milestones) {
    const auto& d = m.dist;
    std::string name = m.name == "ready" ? "<strong>ready</strong> (" + escape_xml(sc.ready_milestone) + ")"
                                         : escape_xml(m.name);
    std::size_t idx = 0;
    if (auto ms = api::milestone_from_string(m.name == "ready" ? sc.ready_milestone : m.name))
      idx = static_cast<std::size_t>(*ms);
    out += fmt::format("<tr><th scope=\"row\"><span class=\"swatch\" style=\"background:{}\"></span>{}</th>",
                       svg::milestone_color(idx), name);
    out += td_num(fmt::format("{} / {}", d.count, sc.vms)) + td_num(seconds(d.mean)) +
           td_num(seconds(d.stdev)) + td_num(seconds(d.min)) + td_num(seconds(d.p50)) +
           td_num(seconds(d.p90)) + td_num(seconds(d.p95)) + td_num(seconds(d.p99)) + td_num(seconds(d.max)) +
           td_num(seconds(d.resolution_s, 3));
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  return out;
}

// The colour of a phase: its end milestone's, as in the timeline.
std::string phase_color(const results::ScenarioSummary& sc, results::Phase phase) {
  auto end = results::phase_info(phase).ends_at;
  if (phase == results::Phase::ready)
    end = api::milestone_from_string(sc.ready_milestone).value_or(api::Milestone::beacon);
  return std::string(svg::milestone_color(static_cast<std::size_t>(end)));
}

std::string phase_table(const results::ScenarioSummary& sc) {
  std::string out =
      "<div class=\"scroll\"><table>\n<thead><tr><th scope=\"col\">Phase</th><th scope=\"col\">Span</th>";
  for (const char* h : {"VMs", "Mean part", "P50", "P95", "Max", "Resolution"})
    out += fmt::format("<th scope=\"col\" class=\"num\">{}</th>", h);
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& p : sc.phases) {
    const auto& info = results::phase_info(p.phase);
    const std::string span = p.phase == results::Phase::ready ? "guest_agent \u2192 " + sc.ready_milestone
                                                              : std::string(info.span);
    out += fmt::format(
        "<tr><th scope=\"row\"><span class=\"swatch\" style=\"background:{}\"></span>{}</th><td>{}</td>",
        phase_color(sc, p.phase), escape_xml(info.label), escape_xml(span));
    out += td_num(std::to_string(p.dist.count)) + td_num(seconds(p.mean_part_s)) +
           td_num(seconds(p.dist.p50)) + td_num(seconds(p.dist.p95)) + td_num(seconds(p.dist.max)) +
           td_num(seconds(p.dist.resolution_s, 3));
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  return out;
}

// Where the mean boot time of each scenario went: one stacked bar per scenario.
std::string phase_figure(const results::Summary& summary, bool repeats) {
  std::vector<svg::StackedPart> parts;
  std::vector<svg::StackedBar> bars;
  const results::ScenarioSummary* colours = nullptr;
  for (const auto& sc : summary.scenarios) {
    if (sc.phases.empty()) continue;
    if (!colours) colours = &sc;
    svg::StackedBar bar{scenario_label(sc.name, sc.repeat, repeats),
                        std::vector<double>(results::kPhaseCount, 0)};
    for (const auto& p : sc.phases) bar.parts[static_cast<std::size_t>(p.phase)] = p.mean_part_s;
    bars.push_back(std::move(bar));
  }
  if (bars.empty()) return {};
  for (const auto& info : results::kPhases)
    parts.push_back({std::string(info.label), phase_color(*colours, info.phase)});
  return "<figure>\n" +
         svg::stacked_bar_chart(
             "phases", "Where the boot time went",
             "The mean boot time of each scenario split into its phases: API, control plane, "
             "launch or power-on, guest and storage, guest agent to ready.",
             parts, bars, "seconds of the mean boot time") +
         "<figcaption>Each bar is a scenario's mean boot time, split at the VMs' milestones; a long "
         "control-plane "
         "part means the VMs waited for the platform before they ran anywhere.</figcaption>\n</figure>\n";
}

std::vector<svg::GanttRow> gantt_rows(const results::RunRecord& record, const results::ScenarioSummary& sc,
                                      std::size_t& omitted) {
  const auto vms = detail::vms_by_start(record, sc.name, sc.repeat);
  double first = 0;
  for (const auto* vm : vms)
    if (vm->start_requested_unix_s > 0 && (first == 0 || vm->start_requested_unix_s < first))
      first = vm->start_requested_unix_s;
  const std::size_t stride = (vms.size() + kMaxGanttRows - 1) / kMaxGanttRows;
  std::vector<svg::GanttRow> rows;
  omitted = 0;
  for (std::size_t i = 0; i < vms.size(); ++i) {
    if (stride > 1 && i % stride != 0) {
      ++omitted;
      continue;
    }
    const auto* vm = vms[i];
    svg::GanttRow row;
    row.label = vm->name;
    row.host = vm->host;
    row.start_s = vm->start_requested_unix_s > 0 ? vm->start_requested_unix_s - first : 0;
    for (const auto& [m, rec] : vm->milestones) {
      if (m == api::Milestone::start_requested) continue;
      row.marks.push_back(svg::GanttMark{static_cast<std::size_t>(m), row.start_s + rec.offset_s});
    }
    std::sort(row.marks.begin(), row.marks.end(),
              [](const auto& a, const auto& b) { return a.at_s < b.at_s; });
    row.failed = !vm->ready_s;
    row.reason = vm->reason.empty() ? vm->status : vm->reason;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

namespace detail {
// Shared with compare.cpp: the page head and the closing of the page.
std::string html_head(std::string_view title) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
      "<meta name=\"generator\" "
      "content=\"bootstorm\"/>\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n"
      "<main>\n",
      escape_xml(title), kHtmlStyle);
}
std::string html_tail(std::string_view generated_at, std::string_view what) {
  return fmt::format(
      "<footer>{} Generated {} by bootstorm. This page is self-contained: it loads nothing from the "
      "network.</footer>\n</main>\n</body>\n</html>\n",
      escape_xml(what), escape_xml(generated_at));
}
}  // namespace detail

std::string render_report_html(const results::RunRecord& record, const results::Summary& summary,
                               std::string_view generated_at) {
  return detail::render_report_html_with(record, summary, scenario_comparisons(summary), generated_at);
}

namespace {

// ---- the report's sections, top to bottom ----

// The title, the run's identity and platform, and the banner that says where the figures come from.
std::string report_header(const results::RunRecord& record, const std::string& title) {
  std::string out;
  out += "<header class=\"top\">\n";
  out += fmt::format("<h1>{}</h1>\n", escape_xml(title));
  out += fmt::format(
      // Spaces between the spans: each keeps its words together, and the line breaks between them.
      "<p class=\"meta\"><span>Run <strong>{}</strong></span> <span>Platform <strong>{}</strong>{}</span> "
      "<span>Started {}</span> <span>Ended {}</span> <span>Outcome <strong>{}</strong></span> "
      "<span>Ready = <strong>{}</strong></span></p>\n",
      escape_xml(record.run_id), escape_xml(record.platform),
      record.simulated ? " (lab " + escape_xml(record.lab) + ")" : "", escape_xml(record.started_at),
      escape_xml(record.ended_at), escape_xml(record.outcome.empty() ? "unknown" : record.outcome),
      escape_xml(record.ready_signal));
  const std::string facts = api::describe(record.facts);
  if (!facts.empty() || record.api_budget) {
    out += "<p class=\"meta\">";
    if (!facts.empty()) out += fmt::format("<span>{}</span>", escape_xml(facts));
    if (record.api_budget) {
      out += fmt::format("{}<span>API budget: {}</span>", facts.empty() ? "" : " ",
                         escape_xml(detail::api_budget_line(*record.api_budget)));
    }
    out += "</p>\n";
  }
  out += "</header>\n";
  if (detail::predicted(record)) {
    out += "<div class=\"banner\" role=\"note\"><strong>Predicted</strong> \u2014 " +
           escape_xml(detail::prediction_note(record)) + "</div>\n";
  } else if (record.simulated) {
    out += fmt::format(
        "<div class=\"banner\" role=\"note\"><strong>Simulated lab</strong> \u2014 every figure on this page "
        "comes from {}{}, not from real hardware. Use it to rehearse the test and compare layouts; measure "
        "on "
        "the real platform before buying.</div>\n",
        escape_xml(detail::simulator_source(record)),
        record.lab.empty() || record.lab == record.facts.simulator
            ? ""
            : " (profile \u201c" + escape_xml(record.lab) + "\u201d)");
  }

  return out;
}

// One verdict per compared pair, with its figures.
std::string verdict_section(const std::vector<results::Comparison>& comparisons) {
  std::string out;
  out += "<section aria-label=\"Verdict\">\n";
  for (const auto& c : comparisons) {
    out += fmt::format(
        "<p class=\"verdict\">{}<small>Mean {:.2f} s vs {:.2f} s; \u0394 mean {:+.2f} s (95 % CI {:+.2f} "
        "to "
        "{:+.2f} s); \u0394 median {:+.2f} s (95 % CI {:+.2f} to {:+.2f} s); Mann\u2013Whitney p = "
        "{:.3g}.</small>"
        "</p>\n",
        escape_xml(c.verdict), c.candidate_figures.mean, c.baseline_figures.mean, c.mean_diff_s,
        c.bootstrap.mean_diff.lower, c.bootstrap.mean_diff.upper, c.p50_diff_s, c.bootstrap.median_diff.lower,
        c.bootstrap.median_diff.upper, c.mann_whitney.p_value);
  }
  out += "</section>\n";
  return out;
}

// The series the figures draw, per scenario: boot times, and when each VM was ready from the first start.
struct ReportSeries {
  std::vector<svg::Series> boot, ready;
  std::string storage_panels;
};

// Cards: the headline numbers per scenario. Fills `series` as it goes.
std::string cards_section(const results::RunRecord& record, const results::Summary& summary, bool repeats,
                          ReportSeries& series) {
  std::string out;
  auto& boot_series = series.boot;
  auto& ready_series = series.ready;
  auto& storage_panels = series.storage_panels;
  out += "<section aria-label=\"Scenarios at a glance\"><div class=\"cards\">\n";
  for (std::size_t i = 0; i < summary.scenarios.size(); ++i) {
    const auto& sc = summary.scenarios[i];
    const auto& r = sc.ready();
    const std::string label = scenario_label(sc.name, sc.repeat, repeats);
    const std::string color(svg::series_color(i));
    out += fmt::format("<div class=\"card\" style=\"--series:{}\">\n<h3>{}</h3>\n", color, escape_xml(label));
    out += fmt::format("<div class=\"big\">{} <small>mean boot time</small></div>\n",
                       r.mean ? fmt::format("{:.2f} s", *r.mean) : "\u2014");
    out += "<dl>";
    out += fmt::format("<dt>VMs / hosts</dt><dd>{} / {}</dd>", sc.vms, sc.hosts);
    out += fmt::format("<dt>P50 / P95</dt><dd>{} / {}</dd>", seconds(r.p50), seconds(r.p95));
    out += fmt::format("<dt>P99 / max</dt><dd>{} / {}</dd>", seconds(r.p99), seconds(r.max));
    out += fmt::format("<dt>Time to all ready</dt><dd>{}</dd>", seconds(sc.time_to_all_ready_s));
    out +=
        fmt::format("<dt>Ready</dt><dd class=\"{}\">{} ({} of {})</dd>",
                    r.ready_fraction >= 1.0 ? "pass" : "fail", percent(r.ready_fraction, 1), r.count, sc.vms);
    out += fmt::format("<dt>Fire skew</dt><dd>{:.2f} ms</dd>", sc.fire_skew_ms);
    out += fmt::format("<dt>Clone time (mean)</dt><dd>{}</dd>", seconds(sc.clone_mean_s));
    if (sc.provisioning_s) out += fmt::format("<dt>Provisioning</dt><dd>{}</dd>", seconds(sc.provisioning_s));
    if (sc.power_on_spread_ms)
      out += fmt::format("<dt>Start spread</dt><dd>{:.2f} ms</dd>", *sc.power_on_spread_ms);
    out += "</dl>\n";
    for (const auto& sentence : detail::platform_sentences(summary, sc))
      out += "<p class=\"meta\">" + escape_xml(sentence) + "</p>\n";
    if (!sc.moves.empty() || !sc.not_attempted.empty()) {
      out += "<ul class=\"meta\">";
      for (const auto& m : sc.moves)
        out += "<li>" + escape_xml(m.vm) + " ran on " + escape_xml(m.host) + ", planned " +
               escape_xml(m.planned_host) + "</li>";
      for (const auto& n : sc.not_attempted)
        out += "<li>" + escape_xml(n.vm) + " not attempted: " + escape_xml(n.reason) + "</li>";
      out += "</ul>\n";
    }
    for (const auto& sentence : detail::storage_sentences(summary, sc))
      out += "<p class=\"meta\">" + escape_xml(sentence) + "</p>\n";
    if (sc.storage) storage_panels += storage_panel(record, sc, i, label);
    out += "</div>\n";
    boot_series.push_back(svg::Series{label, color, sc.boot_times_s, static_cast<std::size_t>(sc.vms)});
    // VMs ready over time: when each VM became ready, relative to the scenario's first start request.
    svg::Series ready{label, color, {}, static_cast<std::size_t>(sc.vms)};
    const auto vms = detail::vms_by_start(record, sc.name, sc.repeat);
    double first = 0;
    for (const auto* vm : vms)
      if (vm->start_requested_unix_s > 0 && (first == 0 || vm->start_requested_unix_s < first))
        first = vm->start_requested_unix_s;
    for (const auto* vm : vms)
      if (vm->ready_s) ready.values.push_back(vm->start_requested_unix_s - first + *vm->ready_s);
    ready_series.push_back(std::move(ready));
  }
  out += "</div></section>\n";

  return out;
}

std::string distribution_section(const results::RunRecord& record, const results::Summary& summary,
                                 bool repeats, const ReportSeries& series) {
  const auto& boot_series = series.boot;
  const auto& ready_series = series.ready;
  std::string out;
  out += "<section>\n<h2>Boot time distribution</h2>\n";
  out += "<figure>\n" + svg::cdf_chart("cdf", "Share of VMs ready by boot time (CDF)", boot_series) +
         "<figcaption>Each curve rises by one VM at its boot time (" + escape_xml(record.ready_signal) +
         " \u2212 start_requested); a curve that stays below 100 % had VMs that never became ready. Further "
         "left "
         "is faster.</figcaption>\n</figure>\n";
  out += "<figure>\n" + svg::histogram_chart("histogram", "Boot time histogram", boot_series) +
         "<figcaption>How many VMs booted in each interval; hover a bar for its exact count.</figcaption>\n"
         "</figure>\n";
  out += "<figure>\n" + svg::ready_over_time_chart("ready-over-time", "VMs ready over time", ready_series) +
         "<figcaption>VMs ready since the first start request of each scenario; the dashed line is the "
         "number of "
         "VMs in the storm.</figcaption>\n</figure>\n";
  out += phase_figure(summary, repeats);
  out += "</section>\n";

  return out;
}

std::string results_section(const results::RunRecord& record, const results::Summary& summary,
                            const std::vector<results::Comparison>& comparisons, bool repeats) {
  std::string out;
  out +=
      "<section>\n<h2>Results</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th "
      "scope=\"col\">Scenario</th>";
  for (const char* h : {"VMs", "Hosts", "Ready", "Mean", "P50", "P95", "P99", "Max", "Time to all ready",
                        "Fire skew", "Clone (mean)", "API requests"})
    out += fmt::format("<th scope=\"col\" class=\"num\">{}</th>", h);
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < summary.scenarios.size(); ++i) {
    const auto& sc = summary.scenarios[i];
    const auto& r = sc.ready();
    out += fmt::format("<tr><th scope=\"row\"><span class=\"swatch\" style=\"background:{}\"></span>{}</th>",
                       svg::series_color(i), escape_xml(scenario_label(sc.name, sc.repeat, repeats)));
    out += td_num(std::to_string(sc.vms)) + td_num(std::to_string(sc.hosts)) +
           td_num(percent(r.ready_fraction, 1)) + td_num(seconds(r.mean)) + td_num(seconds(r.p50)) +
           td_num(seconds(r.p95)) + td_num(seconds(r.p99)) + td_num(seconds(r.max)) +
           td_num(seconds(sc.time_to_all_ready_s)) + td_num(fmt::format("{:.2f} ms", sc.fire_skew_ms)) +
           td_num(seconds(sc.clone_mean_s)) + td_num(std::to_string(sc.api_requests));
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  out +=
      "<p class=\"meta\">Boot time = " + escape_xml(record.ready_signal) +
      " \u2212 start_requested. Quantiles are exact sample quantiles (linear interpolation between closest "
      "ranks, type 7); stdev is the sample standard deviation.</p>\n";
  if (!comparisons.empty()) {
    out += "<h3>Comparison with the baseline</h3>\n<div class=\"scroll\"><table>\n<thead><tr>";
    for (const char* h : {"Baseline", "Candidate"}) out += fmt::format("<th scope=\"col\">{}</th>", h);
    for (const char* h : {"Mean", "P50", "P95", "Max", "Time to all ready", "\u0394 mean (95 % CI)",
                          "\u0394 median (95 % CI)", "Mann\u2013Whitney p"})
      out += fmt::format("<th scope=\"col\" class=\"num\">{}</th>", h);
    out += "</tr></thead>\n<tbody>\n";
    for (const auto& c : comparisons) {
      out +=
          "<tr><td>" + escape_xml(c.baseline.label) + "</td><td>" + escape_xml(c.candidate.label) + "</td>";
      out += detail::html_comparison_cells(c);
      out += "</tr>\n";
    }
    out += "</tbody></table></div>\n";
  }
  out += "</section>\n";

  return out;
}

std::string slo_section(const results::Summary& summary, bool repeats) {
  if (summary.slo.empty()) return {};
  std::string out;
  out +=
      "<section>\n<h2>Service-level objectives</h2>\n<table>\n<thead><tr><th scope=\"col\">Scenario</th>"
      "<th scope=\"col\">Objective</th><th scope=\"col\" class=\"num\">Value</th><th "
      "scope=\"col\">Verdict</th>"
      "</tr></thead>\n<tbody>\n";
  for (const auto& r : summary.slo) {
    out += fmt::format("<tr><td>{}</td><td>{}</td>{}<td class=\"{}\">{}</td></tr>\n",
                       escape_xml(scenario_label(r.scenario, r.repeat, repeats)),
                       escape_xml(detail::slo_name(r)), td_num(detail::slo_value(r.stat, r.value)),
                       r.pass ? "pass" : "fail", r.pass ? "\u2714 pass" : "\u2718 FAIL");
  }
  out += "</tbody></table>\n</section>\n";
  return out;
}

// One scenario in detail: its milestones, phases, per-VM timeline, failures and errors.
std::string scenario_section(const results::RunRecord& record, const results::ScenarioSummary& sc,
                             std::size_t i, bool repeats) {
  std::string out;
  const std::string label = scenario_label(sc.name, sc.repeat, repeats);
  out += fmt::format("<section>\n<h2><span class=\"swatch\" style=\"background:{}\"></span>{}</h2>\n",
                     svg::series_color(i), escape_xml(label));
  out += fmt::format(
      "<p>{} VMs on {} host{}; {} ready; time to all ready {}; fire skew {:.2f} ms; {} API requests.</p>\n",
      sc.vms, sc.hosts, sc.hosts == 1 ? "" : "s", sc.ready().count,
      escape_xml(seconds(sc.time_to_all_ready_s)), sc.fire_skew_ms, sc.api_requests);
  out += "<h3>Milestones</h3>\n" + milestone_table(sc);
  if (!sc.phases.empty()) out += "<h3>Where the time went</h3>\n" + phase_table(sc);
  std::size_t omitted = 0;
  const auto rows = gantt_rows(record, sc, omitted);
  out += "<figure>\n" +
         svg::gantt_chart(fmt::format("timeline-{}", i + 1), "Per-VM timeline of " + label, rows, omitted) +
         fmt::format(
             "<figcaption>One row per VM, sorted by start request; each segment ends at the milestone "
             "of its colour.{}</figcaption>\n</figure>\n",
             omitted > 0 ? fmt::format(" {} of {} VMs shown.", rows.size(), rows.size() + omitted) : "");
  if (!sc.failures.empty()) {
    out += fmt::format("<h3 class=\"fail\">{} VM{} did not become ready</h3>\n", sc.failures.size(),
                       sc.failures.size() == 1 ? "" : "s");
    out +=
        "<table>\n<thead><tr><th scope=\"col\">VM</th><th "
        "scope=\"col\">Reason</th></tr></thead>\n<tbody>\n";
    for (const auto& f : sc.failures)
      out += "<tr><td>" + escape_xml(f.vm) + "</td><td>" + escape_xml(f.reason) + "</td></tr>\n";
    out += "</tbody></table>\n";
  }
  if (!sc.errors.empty()) {
    out += "<h3 class=\"fail\">Scenario errors</h3>\n<ul>\n";
    for (const auto& e : sc.errors) out += "<li>" + escape_xml(e) + "</li>\n";
    out += "</ul>\n";
  }
  out += "</section>\n";
  return out;
}

std::string plan_section(const results::RunRecord& record) {
  std::string out;
  out += "<section>\n<h2>Platform and plan</h2>\n";
  out += fmt::format(
      "<p>Platform <strong>{}</strong>{}. Plan <strong>{}</strong> as resolved for this run:</p>\n",
      escape_xml(record.platform),
      record.simulated ? ", simulated lab <strong>" + escape_xml(record.lab) + "</strong>" : "",
      escape_xml(record.plan_name));
  if (!record.platform_api.empty()) out += "<p>Platform API: " + escape_xml(record.platform_api) + ".</p>\n";
  out += "<pre>" + escape_xml(record.plan_yaml) + "</pre>\n</section>\n";
  return out;
}

}  // namespace

std::string detail::render_report_html_with(const results::RunRecord& record, const results::Summary& summary,
                                            const std::vector<results::Comparison>& comparisons,
                                            std::string_view generated_at) {
  const bool repeats = detail::several_repeats(summary);
  const std::string title =
      fmt::format("Boot storm report: {}{}", record.plan_name, detail::origin_suffix(record));
  std::string out = detail::html_head(title);
  out += report_header(record, title);
  for (const auto& sentence : control_plane_sentences(summary))
    out += "<div class=\"banner\" role=\"note\">" + escape_xml(sentence) + "</div>\n";
  if (!comparisons.empty()) out += verdict_section(comparisons);
  ReportSeries series;
  out += cards_section(record, summary, repeats, series);
  if (!series.storage_panels.empty()) {
    out += "<section aria-label=\"Storage during the storm\">\n<h2>Storage during the storm</h2>\n" +
           series.storage_panels + "</section>\n";
  }
  out += distribution_section(record, summary, repeats, series);
  out += results_section(record, summary, comparisons, repeats);
  out += slo_section(summary, repeats);
  for (std::size_t i = 0; i < summary.scenarios.size(); ++i)
    out += scenario_section(record, summary.scenarios[i], i, repeats);
  out += plan_section(record);
  out += detail::html_tail(generated_at, "Run " + record.run_id + ".");
  return out;
}

}  // namespace bootstorm::reports
