// `bootstorm history`, rendering: history.md, history.html and the terminal's lines.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "providers/api/milestone.hpp"
#include "reports/detail/format.hpp"
#include "reports/detail/svg.hpp"
#include "reports/history.hpp"
#include "reports/text.hpp"

namespace bootstorm::reports {
namespace {

using results::HistoryChangePoint;
using results::HistoryGroup;
using results::HistoryPoint;
using results::SeriesShift;

// ---- words and numbers ----

std::string heading(const HistoryGroup& g) {
  return results::group_label(g.key);
}

std::string signed_duration(double seconds) {
  return (seconds < 0 ? "\u2212" : "+") + history_duration(std::abs(seconds));
}

std::string signed_percent(double fraction) {
  return fmt::format("{}{:.1f} %", fraction < 0 ? "\u2212" : "+", std::abs(fraction) * 100);
}

std::string relative_ci(const results::MeanShift& s) {
  if (!s.relative_bounded) return fmt::format("{:.0f} % CI unbounded", s.relative.level * 100);
  return fmt::format("{:.0f} % CI {} to {}", s.relative.level * 100, signed_percent(s.relative.lower),
                     signed_percent(s.relative.upper));
}

std::string difference_ci(const results::MeanShift& s) {
  return fmt::format("{:.0f} % CI {} to {}", s.difference.level * 100, signed_duration(s.difference.lower),
                     signed_duration(s.difference.upper));
}

// The start to the second ("2026-12-04T10:00:03Z"): runs of one evening are minutes apart.
std::string day(const HistoryPoint& p) {
  return p.started_at.substr(0, 19) + (p.started_at.size() > 19 ? "Z" : "");
}

std::string p_text(double p) {
  return fmt::format("p = {:.2g}", p);
}

// "ready 116.2 ms → 145.1 ms (+24.9 %, 95 % CI +23.8 to +26.0 %), p = 0.0035"
std::string shift_words(const SeriesShift& s) {
  if (!s.shift) return s.milestone + ": too few runs on a side to measure";
  return fmt::format("{} {} \u2192 {} ({}, {}), {}", s.milestone, history_duration(s.shift->before_mean),
                     history_duration(s.shift->after_mean), signed_percent(s.shift->relative.estimate),
                     relative_ci(*s.shift), p_text(s.p_value));
}

std::string change_words(const HistoryGroup& g, const HistoryChangePoint& cp) {
  const SeriesShift* head = cp.headline();
  std::string out = fmt::format("change at run {} ({})", cp.run_id, day(g.points[cp.index]));
  if (head) out += ": " + shift_words(*head);
  std::size_t others = 0;
  for (const SeriesShift& s : cp.shifts)
    if (s.detected && &s != head) ++others;
  if (others > 0) out += fmt::format(" (and {} more milestone{})", others, others == 1 ? "" : "s");
  return out;
}

constexpr std::size_t kFewestRuns = 4;  // two on each side of a change

std::string group_sentence(const HistoryGroup& g) {
  const std::size_t tested = g.detection_points();
  std::string out = fmt::format("{} run{} from {} to {}", g.points.size(), g.points.size() == 1 ? "" : "s",
                                day(g.points.front()), day(g.points.back()));
  if (tested != g.points.size()) out += fmt::format(" ({} that completed)", tested);
  out += g.ready_milestone.empty() ? ". " : fmt::format("; ready is {}. ", g.ready_milestone);
  if (tested < kFewestRuns)
    return out + fmt::format("Too few runs to look for a change (at least {}).", kFewestRuns);
  if (g.change_points.empty())
    return out + fmt::format("No change point (significance {:.2g} shared by {} series: {}).",
                             g.series_significance * static_cast<double>(g.series.size()), g.series.size(),
                             fmt::join(g.series, ", "));
  out += fmt::format("{} change point{}: ", g.change_points.size(), g.change_points.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < g.change_points.size(); ++i)
    out += (i > 0 ? "; " : "") + change_words(g, g.change_points[i]);
  return out + ".";
}

std::string method_words(const HistoryReportInput& in) {
  const auto& cp = in.options.change_points;
  return fmt::format(
      "Change points: e-divisive (Matteson and James, 2014) on each milestone's run means, each split tested "
      "with {} permutations; significance {:.2g} per plan and scenario, shared among its milestones "
      "(Bonferroni); at least {} runs on each side. Sizes: Welch's interval for the difference of the means, "
      "Fieller's for the ratio, at {:.0f} %.",
      cp.permutations, cp.significance, cp.min_segment, in.options.level * 100);
}

bool any_source(const HistoryReportInput& in, const std::string& source) {
  return std::any_of(in.groups.begin(), in.groups.end(),
                     [&](const HistoryGroup& g) { return g.key.source == source; });
}

std::size_t run_count(const HistoryReportInput& in) {
  std::vector<std::string> ids;
  for (const auto& g : in.groups)
    for (const auto& p : g.points) ids.push_back(p.run_id);
  std::sort(ids.begin(), ids.end());
  return static_cast<std::size_t>(std::unique(ids.begin(), ids.end()) - ids.begin());
}

std::string cell(const std::optional<double>& v) {
  return v ? history_duration(*v) : "\u2014";
}

// ---- the time axis ----

struct TimeAxis {
  double origin = 0, unit = 3600;
  std::string label;
  double x(const HistoryPoint& p) const { return (p.started_unix_s - origin) / unit; }
};

TimeAxis time_axis(const HistoryGroup& g) {
  TimeAxis axis;
  axis.origin = g.points.front().started_unix_s;
  const double span = g.points.back().started_unix_s - axis.origin;
  const char* unit = "hours";
  if (span < 3 * 3600) {
    axis.unit = 60;
    unit = "minutes";
  } else if (span > 3 * 86400) {
    axis.unit = 86400;
    unit = "days";
  }
  axis.label = fmt::format("{} since the first run ({})", unit, day(g.points.front()));
  return axis;
}

std::vector<svg::XyMark> marks(const HistoryGroup& g, const TimeAxis& axis) {
  std::vector<svg::XyMark> out;
  for (const auto& cp : g.change_points)
    out.push_back(svg::XyMark{axis.x(g.points[cp.index]), "change: run " + cp.run_id, "#d55e00"});
  for (const auto& fc : g.fact_changes)
    out.push_back(svg::XyMark{axis.x(g.points[fc.index]),
                              "platform changed: run " + g.points[fc.index].run_id, "#777777"});
  return out;
}

std::string milestone_chart(const HistoryGroup& g, std::size_t gi, const std::string& milestone,
                            const TimeAxis& axis) {
  struct Line {
    const char* label;
    std::optional<double> results::HistoryFigures::*stat;
  };
  const Line lines[] = {{"mean", &results::HistoryFigures::mean},
                        {"P50", &results::HistoryFigures::p50},
                        {"P95", &results::HistoryFigures::p95}};
  std::vector<svg::XySeries> series;
  for (std::size_t l = 0; l < std::size(lines); ++l) {
    svg::XySeries s{lines[l].label, std::string(svg::series_color(l)), {}};
    for (const HistoryPoint& p : g.points) {
      auto it = p.milestones.find(milestone);
      if (it == p.milestones.end() || !(it->second.*lines[l].stat)) continue;
      const double v = *(it->second.*lines[l].stat);
      s.points.push_back(
          svg::XyPoint{axis.x(p), v,
                       fmt::format("run {} ({}): {} {}{}", p.run_id, day(p), lines[l].label,
                                   history_duration(v), p.in_detection ? "" : ", " + p.outcome)});
    }
    series.push_back(std::move(s));
  }
  return svg::xy_chart(fmt::format("history-{}-{}", gi, milestone),
                       fmt::format("{}: boot time over the runs", milestone),
                       fmt::format("Mean, P50 and P95 of {} in each run of {}, against the run's start.",
                                   milestone, heading(g)),
                       axis.label, "seconds", series, {}, marks(g, axis));
}

// The milestones charted: "ready" first, then the others whose series are followed.
std::vector<std::string> charted_milestones(const HistoryGroup& g) {
  std::vector<std::string> names{"ready"};
  for (const auto& s : g.series)
    if (s != "ready") names.push_back(s);
  return names;
}

std::string ready_fraction_chart(const HistoryGroup& g, std::size_t gi, const TimeAxis& axis) {
  std::vector<svg::XySeries> series;
  const std::vector<std::string> names = charted_milestones(g);
  for (std::size_t m = 0; m < names.size(); ++m) {
    svg::XySeries s{names[m], std::string(svg::series_color(m)), {}};
    for (const HistoryPoint& p : g.points) {
      auto it = p.milestones.find(names[m]);
      if (it == p.milestones.end()) continue;
      s.points.push_back(svg::XyPoint{axis.x(p), it->second.ready_fraction * 100,
                                      fmt::format("run {}: {} of {} VMs reached {}", p.run_id,
                                                  it->second.count, it->second.total, names[m])});
    }
    series.push_back(std::move(s));
  }
  return svg::xy_chart(
      fmt::format("history-{}-ready-fraction", gi), "Share of VMs that reached each milestone",
      fmt::format("Per run of {}, the percentage of its VMs that reached each milestone.", heading(g)),
      axis.label, "% of VMs", series, {}, marks(g, axis));
}

}  // namespace

std::string history_duration(double seconds) {
  const double a = std::abs(seconds);
  if (a < 1) return fmt::format("{:.1f} ms", seconds * 1e3);
  if (a < 100) return fmt::format("{:.2f} s", seconds);
  return fmt::format("{:.0f} s", seconds);
}

std::vector<std::string> history_lines(const std::vector<HistoryGroup>& groups) {
  std::vector<std::string> out;
  for (const HistoryGroup& g : groups) {
    if (g.detection_points() < kFewestRuns) {
      out.push_back(fmt::format("{}: {} run{}, too few to look for a change", heading(g), g.points.size(),
                                g.points.size() == 1 ? "" : "s"));
      continue;
    }
    if (g.change_points.empty()) {
      out.push_back(fmt::format("{}: {} runs, no change point", heading(g), g.points.size()));
      continue;
    }
    for (const auto& cp : g.change_points)
      out.push_back(fmt::format("{}: {} runs, {}", heading(g), g.points.size(), change_words(g, cp)));
  }
  return out;
}

// ---- history.md ----

std::string render_history_md(const HistoryReportInput& in) {
  std::string out = "# Boot storm history\n\n";
  out += fmt::format("Generated {}. {} runs in {} group{} (plan, scenario, platform and source alike).\n\n",
                     in.generated_at, run_count(in), in.groups.size(), in.groups.size() == 1 ? "" : "s");
  if (any_source(in, "predicted"))
    out +=
        "> **Predicted** \u2014 groups marked predicted are the lab model's predictions: nothing in them was "
        "measured.\n\n";
  if (any_source(in, "simulated"))
    out +=
        "> **Simulated lab** \u2014 groups marked simulated lab ran against a simulator, not real "
        "hardware.\n\n";
  out += escape_md(method_words(in)) + "\n";
  for (const HistoryGroup& g : in.groups) {
    out += "\n## " + escape_md(heading(g)) + "\n\n" + escape_md(group_sentence(g)) + "\n";
    if (!g.fact_changes.empty()) {
      out += "\n**The platform changed:**\n\n";
      for (const auto& fc : g.fact_changes)
        out += fmt::format("- before run {} ({}): {}\n", escape_md(g.points[fc.index].run_id),
                           day(g.points[fc.index]),
                           escape_md(fmt::format("{}", fmt::join(fc.differences, "; "))));
    }
    if (!g.change_points.empty()) {
      out +=
          "\n| Change at run | Started | Milestone | Before (mean) | After (mean) | \u0394 mean | \u0394 "
          "relative | "
          "Runs before / after | p |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n";
      for (const auto& cp : g.change_points)
        for (const SeriesShift& s : cp.shifts) {
          if (!s.shift) continue;
          out += fmt::format(
              "| {} | {} | {}{} | {} | {} | {} ({}) | {} ({}) | {} / {} | {} |\n", escape_md(cp.run_id),
              day(g.points[cp.index]), escape_md(s.milestone), s.detected ? " (change)" : "",
              history_duration(s.shift->before_mean), history_duration(s.shift->after_mean),
              signed_duration(s.shift->difference.estimate), difference_ci(*s.shift),
              signed_percent(s.shift->relative.estimate), relative_ci(*s.shift), s.shift->n_before,
              s.shift->n_after, s.detected ? fmt::format("{:.2g}", s.p_value) : "\u2014");
        }
    }
    out +=
        "\n| # | Run | Started | Outcome | VMs | Ready mean | P50 | P95 | Ready fraction | From |\n"
        "|---:|---|---|---|---:|---:|---:|---:|---:|---|\n";
    for (std::size_t i = 0; i < g.points.size(); ++i) {
      const HistoryPoint& p = g.points[i];
      auto it = p.milestones.find("ready");
      const results::HistoryFigures ready = it != p.milestones.end() ? it->second : results::HistoryFigures{};
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", i + 1, escape_md(p.run_id),
                         escape_md(p.started_at), escape_md(p.outcome.empty() ? "completed" : p.outcome),
                         p.vms, cell(ready.mean), cell(ready.p50), cell(ready.p95),
                         percent(ready.ready_fraction, 1), escape_md(p.where));
    }
  }
  if (!in.skipped.empty()) {
    out += "\n## Left out\n\n";
    for (const auto& s : in.skipped) out += "- " + escape_md(s.where) + ": " + escape_md(s.why) + "\n";
  }
  return out;
}

// ---- history.html ----

std::string render_history_html(const HistoryReportInput& in) {
  const std::string title = "Boot storm history";
  std::string out = detail::html_head(title);
  out += fmt::format(
      "<header class=\"top\">\n<h1>{}</h1>\n<p class=\"meta\"><span>{} runs</span><span>{} group{}</span>"
      "<span>generated {}</span></p>\n</header>\n",
      title, run_count(in), in.groups.size(), in.groups.size() == 1 ? "" : "s", escape_xml(in.generated_at));
  if (any_source(in, "predicted"))
    out +=
        "<div class=\"banner\" role=\"note\"><strong>Predicted</strong> \u2014 groups marked predicted are "
        "the "
        "lab model's predictions: nothing in them was measured.</div>\n";
  if (any_source(in, "simulated"))
    out +=
        "<div class=\"banner\" role=\"note\"><strong>Simulated lab</strong> \u2014 groups marked simulated "
        "lab "
        "ran against a simulator, not real hardware.</div>\n";
  out += "<section aria-label=\"Verdict\">\n";
  for (const auto& line : history_lines(in.groups))
    out += "<p class=\"verdict\">" + escape_xml(line) + "</p>\n";
  out += "<p class=\"meta\">" + escape_xml(method_words(in)) + "</p>\n</section>\n";
  for (std::size_t gi = 0; gi < in.groups.size(); ++gi) {
    const HistoryGroup& g = in.groups[gi];
    const TimeAxis axis = time_axis(g);
    out +=
        "<section>\n<h2>" + escape_xml(heading(g)) + "</h2>\n<p>" + escape_xml(group_sentence(g)) + "</p>\n";
    if (!g.fact_changes.empty()) {
      out +=
          "<div class=\"banner\" role=\"note\"><strong>The platform changed</strong> \u2014 a change in boot "
          "time at these runs may come from it:<ul>";
      for (const auto& fc : g.fact_changes)
        out += "<li>" +
               escape_xml(fmt::format("before run {} ({}): {}", g.points[fc.index].run_id,
                                      day(g.points[fc.index]), fmt::join(fc.differences, "; "))) +
               "</li>";
      out += "</ul></div>\n";
    }
    for (const std::string& m : charted_milestones(g))
      out +=
          "<h3>" +
          escape_xml(m == "ready" && !g.ready_milestone.empty() ? "ready (" + g.ready_milestone + ")" : m) +
          "</h3>\n<figure>\n" + milestone_chart(g, gi, m, axis) +
          fmt::format(
              "<figcaption>{}: each point a run; dashed lines mark change points and platform "
              "changes.</figcaption>\n</figure>\n",
              escape_xml(m));
    out += "<figure>\n" + ready_fraction_chart(g, gi, axis) +
           "<figcaption>Below 100 %: VMs of that run that never reached the "
           "milestone.</figcaption>\n</figure>\n";
    if (!g.change_points.empty()) {
      out += "<div class=\"scroll\"><table>\n<thead><tr>";
      for (const char* h : {"Change at run", "Milestone", "Before (mean)", "After (mean)", "\u0394 mean (CI)",
                            "\u0394 relative (CI)", "Runs before / after", "p"})
        out += fmt::format("<th scope=\"col\">{}</th>", h);
      out += "</tr></thead>\n<tbody>\n";
      for (const auto& cp : g.change_points)
        for (const SeriesShift& s : cp.shifts) {
          if (!s.shift) continue;
          out += fmt::format(
              "<tr><td>{}</td><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
              "class=\"num\">{}<br><small>{}</small></td><td class=\"num\">{}<br><small>{}</small></td><td "
              "class=\"num\">{} / {}</td><td class=\"num\">{}</td></tr>\n",
              escape_xml(cp.run_id + " (" + day(g.points[cp.index]) + ")"), escape_xml(s.milestone),
              s.detected ? " <strong>change</strong>" : "", history_duration(s.shift->before_mean),
              history_duration(s.shift->after_mean), signed_duration(s.shift->difference.estimate),
              escape_xml(difference_ci(*s.shift)), signed_percent(s.shift->relative.estimate),
              escape_xml(relative_ci(*s.shift)), s.shift->n_before, s.shift->n_after,
              s.detected ? fmt::format("{:.2g}", s.p_value) : "\u2014");
        }
      out += "</tbody></table></div>\n";
    }
    out += "<details><summary>The runs</summary>\n<div class=\"scroll\"><table>\n<thead><tr>";
    for (const char* h :
         {"#", "Run", "Started", "Outcome", "VMs", "Ready mean", "P50", "P95", "Ready fraction", "From"})
      out += fmt::format("<th scope=\"col\">{}</th>", h);
    out += "</tr></thead>\n<tbody>\n";
    for (std::size_t i = 0; i < g.points.size(); ++i) {
      const HistoryPoint& p = g.points[i];
      auto it = p.milestones.find("ready");
      const results::HistoryFigures ready = it != p.milestones.end() ? it->second : results::HistoryFigures{};
      out += fmt::format(
          "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td><td>{}</td></tr>\n",
          i + 1, escape_xml(p.run_id), escape_xml(p.started_at),
          escape_xml(p.outcome.empty() ? "completed" : p.outcome), p.vms, cell(ready.mean), cell(ready.p50),
          cell(ready.p95), percent(ready.ready_fraction, 1), escape_xml(p.where));
    }
    out += "</tbody></table></div>\n</details>\n</section>\n";
  }
  if (!in.skipped.empty()) {
    out += "<section>\n<h2>Left out</h2>\n<ul>\n";
    for (const auto& s : in.skipped) out += "<li>" + escape_xml(s.where + ": " + s.why) + "</li>\n";
    out += "</ul>\n</section>\n";
  }
  out += detail::html_tail(in.generated_at, fmt::format("History of {} runs.", run_count(in)));
  return out;
}

}  // namespace bootstorm::reports
