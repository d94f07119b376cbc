// `bootstorm compare`, rendering: compare.md and compare.html from the compared runs.
#include <fmt/format.h>

#include <algorithm>

#include "reports/compare.hpp"
#include "reports/detail/format.hpp"
#include "reports/detail/svg.hpp"
#include "reports/reports.hpp"

namespace bootstorm::reports {
namespace {

std::string pair_cell(double b, double k, double rel) {
  return fmt::format("{:.2f} \u2192 {:.2f} s ({:+.1f} %)", b, k, rel * 100);
}

std::string ttar_cell(const results::Comparison& c) {
  if (!c.time_to_all_ready_diff_s) return "\u2014";
  return pair_cell(*c.baseline.time_to_all_ready_s, *c.candidate.time_to_all_ready_s,
                   *c.time_to_all_ready_rel);
}

std::string ci_cell(const results::ConfidenceInterval& ci) {
  return fmt::format("{:+.2f} s ({:+.2f} to {:+.2f})", ci.estimate, ci.lower, ci.upper);
}

bool any_simulated(const std::vector<LoadedRun>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](const LoadedRun& r) { return r.summary.run.simulated; });
}

bool any_predicted(const std::vector<LoadedRun>& runs) {
  return std::any_of(runs.begin(), runs.end(),
                     [](const LoadedRun& r) { return r.summary.run.source == "predicted"; });
}

// What the comparison's title adds: predictions first, since nothing in them was measured.
std::string origin_suffix(const std::vector<LoadedRun>& runs) {
  if (any_predicted(runs)) return " \u2014 with predictions";
  return any_simulated(runs) ? " \u2014 simulated lab" : "";
}

std::string run_origin(const LoadedRun& r) {
  if (r.summary.run.source == "predicted") return " (predicted)";
  return r.summary.run.simulated ? " (simulated)" : "";
}

constexpr const char* kPredictedNote =
    "At least one of these runs is a prediction of the lab model in virtual time: nothing in it was "
    "measured.";

// The layouts' storage side by side: one row per scenario (and repeat) of every run that has telemetry.
struct StorageRow {
  std::string run, scenario;
  const results::StorageFigures* figures = nullptr;
  std::string busiest_link;  // "r740-01 94 %", the host link closest to its capacity
};

std::vector<StorageRow> storage_rows(const std::vector<LoadedRun>& runs) {
  std::vector<StorageRow> rows;
  for (const auto& r : runs) {
    const bool repeats = std::any_of(r.summary.scenarios.begin(), r.summary.scenarios.end(),
                                     [](const results::ScenarioSummary& s) { return s.repeat != 1; });
    for (const auto& sc : r.summary.scenarios) {
      if (!sc.storage) continue;
      StorageRow row{r.summary.run.id, repeats ? fmt::format("{} #{}", sc.name, sc.repeat) : sc.name,
                     &*sc.storage, ""};
      const results::HostStorage* busiest = nullptr;
      for (const auto& h : sc.storage->hosts)
        if (h.peak_utilisation && (!busiest || *h.peak_utilisation > *busiest->peak_utilisation))
          busiest = &h;
      if (busiest)
        row.busiest_link = fmt::format("{} {:.0f} %", busiest->host, *busiest->peak_utilisation * 100);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string latency_ms(const std::optional<double>& s) {
  return s ? fmt::format("{:.2f}", *s * 1e3) : std::string("\u2014");
}

}  // namespace

std::string render_compare_md(const std::vector<LoadedRun>& runs, const CompareSet& set,
                              std::string_view generated_at) {
  std::string out = fmt::format("# Boot storm comparison{}\n\n", origin_suffix(runs));
  if (any_predicted(runs)) out += fmt::format("> **Predicted.** {}\n\n", kPredictedNote);
  if (any_simulated(runs) && !std::all_of(runs.begin(), runs.end(), [](const LoadedRun& r) {
        return r.summary.run.source == "predicted";
      }))
    out += "> **Simulated lab.** At least one of these runs ran against a simulator, not real hardware.\n\n";
  out += "| Run | Plan | Platform | Started | Directory |\n| --- | --- | --- | --- | --- |\n";
  for (const auto& r : runs) {
    out += fmt::format("| {} | {} | {}{} | {} | {} |\n", escape_md(r.summary.run.id),
                       escape_md(r.summary.run.plan), escape_md(r.summary.run.platform), run_origin(r),
                       escape_md(r.summary.run.started_at), escape_md(r.dir.string()));
  }
  if (const auto warnings = platform_warnings(runs); !warnings.empty()) {
    out +=
        "\n> **Warning: these runs ran on different platforms.** A difference in boot time may come from "
        "these as much as from the layout:\n";
    for (const auto& w : warnings) out += "> - " + escape_md(w) + "\n";
  }
  out += "\n## Verdict\n\n";
  for (const auto& c : set.comparisons) out += "- **" + escape_md(c.verdict) + "**\n";
  for (const auto& g : phase_growth(runs)) out += "- " + escape_md(g) + "\n";
  out +=
      "\n## Figures\n\nBoot time in seconds; \u0394 = candidate \u2212 baseline with bootstrap 95 % "
      "confidence "
      "intervals (10,000 resamples, percentile method); Mann\u2013Whitney U two-sided p-value.\n\n";
  out +=
      "| Baseline | Candidate | VMs | Mean | P50 | P95 | Max | Time to all ready | \u0394 mean (95 % CI) | "
      "\u0394 median (95 % CI) | Mann\u2013Whitney p |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : set.comparisons) {
    out +=
        fmt::format("| {} | {} | {} \u2192 {} | {} | {} | {} | {} | {} | {} | {} | {:.3g}{} |\n",
                    escape_md(c.baseline.label), escape_md(c.candidate.label), c.baseline.vms,
                    c.candidate.vms, pair_cell(c.baseline_figures.mean, c.candidate_figures.mean, c.mean_rel),
                    pair_cell(c.baseline_figures.p50, c.candidate_figures.p50, c.p50_rel),
                    pair_cell(c.baseline_figures.p95, c.candidate_figures.p95, c.p95_rel),
                    pair_cell(c.baseline_figures.max, c.candidate_figures.max, c.max_rel), ttar_cell(c),
                    ci_cell(c.bootstrap.mean_diff), ci_cell(c.bootstrap.median_diff), c.mann_whitney.p_value,
                    c.mann_whitney.exact ? " (exact)" : "");
  }
  if (const auto rows = storage_rows(runs); !rows.empty()) {
    out +=
        "\n## Storage\n\nWhat each platform's monitoring measured during the storms (MB/s read + write; IOPS "
        "per "
        "desktop at the peak; read latency P95 over the VMs' samples; the host link closest to its "
        "capacity).\n\n";
    out +=
        "| Run | Scenario | Source | Peak MB/s | Mean MB/s | Peak IOPS | IOPS per desktop | Read latency P95 "
        "(ms) | Busiest link |\n";
    out += "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n";
    for (const auto& row : rows) {
      const auto& f = *row.figures;
      out += fmt::format("| {} | {} | {} ({:g} s) | {:.0f} | {:.0f} | {:.0f} | {:.1f} | {} | {} |\n",
                         escape_md(row.run), escape_md(row.scenario), escape_md(f.source), f.resolution_s,
                         f.peak_bytes_per_s / 1e6, f.mean_bytes_per_s / 1e6, f.peak_iops,
                         f.peak_iops_per_desktop, latency_ms(f.read_latency_p95_s),
                         row.busiest_link.empty() ? "\u2014" : escape_md(row.busiest_link));
    }
  }
  out += fmt::format("\n---\nGenerated {} by bootstorm compare.\n", escape_md(generated_at));
  return out;
}

std::string render_compare_html(const std::vector<LoadedRun>& runs, const CompareSet& set,
                                std::string_view generated_at) {
  const bool simulated = any_simulated(runs) &&
                         !std::all_of(runs.begin(), runs.end(),
                                      [](const LoadedRun& r) { return r.summary.run.source == "predicted"; });
  const std::string title = fmt::format("Boot storm comparison{}", origin_suffix(runs));
  std::string out = detail::html_head(title);
  out += fmt::format("<header class=\"top\">\n<h1>{}</h1>\n<p class=\"meta\">", escape_xml(title));
  for (const auto& r : runs)
    out += fmt::format("<span>Run <strong>{}</strong> ({}, {}){}</span>", escape_xml(r.summary.run.id),
                       escape_xml(r.summary.run.plan), escape_xml(r.summary.run.started_at),
                       escape_xml(run_origin(r)));
  out += "</p>\n</header>\n";
  if (any_predicted(runs)) {
    out += fmt::format("<div class=\"banner\" role=\"note\"><strong>Predicted</strong> \u2014 {}</div>\n",
                       kPredictedNote);
  }
  if (simulated)
    out +=
        "<div class=\"banner\" role=\"note\"><strong>Simulated lab</strong> \u2014 at least one of these "
        "runs ran "
        "against a simulator, not real hardware.</div>\n";
  if (const auto warnings = platform_warnings(runs); !warnings.empty()) {
    out +=
        "<div class=\"banner\" role=\"note\"><strong>These runs ran on different platforms</strong> \u2014 a "
        "difference in boot time may come from these as much as from the layout:<ul>";
    for (const auto& w : warnings) out += "<li>" + escape_xml(w) + "</li>";
    out += "</ul></div>\n";
  }
  out += "<section aria-label=\"Verdict\">\n";
  for (const auto& c : set.comparisons) {
    out += fmt::format(
        "<p class=\"verdict\">{}<small>Mann\u2013Whitney p = {:.3g}; \u0394 mean {:+.2f} s (95 % CI "
        "{:+.2f} to {:+.2f} s).</small></p>\n",
        escape_xml(c.verdict), c.mann_whitney.p_value, c.mean_diff_s, c.bootstrap.mean_diff.lower,
        c.bootstrap.mean_diff.upper);
  }
  for (const auto& g : phase_growth(runs)) out += "<p class=\"meta\">" + escape_xml(g) + "</p>\n";
  out += "</section>\n";
  std::vector<svg::Series> series;
  for (std::size_t i = 0; i < set.samples.size(); ++i) {
    const auto& s = set.samples[i];
    series.push_back(
        svg::Series{s.label, std::string(svg::series_color(i)), s.boot_times_s,
                    std::max<std::size_t>(s.boot_times_s.size(), static_cast<std::size_t>(s.vms))});
  }
  out += "<section>\n<h2>Boot time distribution</h2>\n<figure>\n" +
         svg::cdf_chart("compare-cdf", "Share of VMs ready by boot time (CDF)", series) +
         "<figcaption>Further left is faster; a curve that stays below 100 % had VMs that never became ready."
         "</figcaption>\n</figure>\n<figure>\n" +
         svg::histogram_chart("compare-histogram", "Boot time histogram", series) +
         "<figcaption>VMs per boot-time interval.</figcaption>\n</figure>\n</section>\n";
  out += "<section>\n<h2>Figures</h2>\n<div class=\"scroll\"><table>\n<thead><tr>";
  for (const char* h : {"Baseline", "Candidate"}) out += fmt::format("<th scope=\"col\">{}</th>", h);
  for (const char* h : {"VMs", "Mean", "P50", "P95", "Max", "Time to all ready", "\u0394 mean (95 % CI)",
                        "\u0394 median (95 % CI)", "Mann\u2013Whitney p"})
    out += fmt::format("<th scope=\"col\" class=\"num\">{}</th>", h);
  out += "</tr></thead>\n<tbody>\n";
  auto td = [](const std::string& v) { return "<td class=\"num\">" + escape_xml(v) + "</td>"; };
  for (const auto& c : set.comparisons) {
    out += "<tr><td>" + escape_xml(c.baseline.label) + "</td><td>" + escape_xml(c.candidate.label) + "</td>";
    out +=
        td(fmt::format("{} \u2192 {}", c.baseline.vms, c.candidate.vms)) + detail::html_comparison_cells(c);
    out += "</tr>\n";
  }
  out +=
      "</tbody></table></div>\n<p class=\"meta\">\u0394 = candidate \u2212 baseline. Confidence intervals: "
      "bootstrap, 10,000 resamples, percentile method. Quantiles: linear interpolation between closest ranks "
      "(type 7).</p>\n</section>\n";
  if (const auto rows = storage_rows(runs); !rows.empty()) {
    out += "<section>\n<h2>Storage</h2>\n<div class=\"scroll\"><table>\n<thead><tr>";
    for (const char* h : {"Run", "Scenario", "Source"}) out += fmt::format("<th scope=\"col\">{}</th>", h);
    for (const char* h : {"Peak MB/s", "Mean MB/s", "Peak IOPS", "IOPS per desktop", "Read latency P95 (ms)"})
      out += fmt::format("<th scope=\"col\" class=\"num\">{}</th>", h);
    out += "<th scope=\"col\">Busiest link</th></tr></thead>\n<tbody>\n";
    for (const auto& row : rows) {
      const auto& f = *row.figures;
      out += "<tr><td>" + escape_xml(row.run) + "</td><td>" + escape_xml(row.scenario) + "</td><td>" +
             escape_xml(fmt::format("{} ({:g} s)", f.source, f.resolution_s)) + "</td>";
      out += td(fmt::format("{:.0f}", f.peak_bytes_per_s / 1e6)) +
             td(fmt::format("{:.0f}", f.mean_bytes_per_s / 1e6)) + td(fmt::format("{:.0f}", f.peak_iops)) +
             td(fmt::format("{:.1f}", f.peak_iops_per_desktop)) + td(latency_ms(f.read_latency_p95_s));
      out += "<td>" + escape_xml(row.busiest_link.empty() ? "\u2014" : row.busiest_link) + "</td></tr>\n";
    }
    out += "</tbody></table></div>\n</section>\n";
  }
  out += detail::html_tail(generated_at, "Comparison of " + std::to_string(runs.size()) + " run(s).");
  return out;
}

}  // namespace bootstorm::reports
