// capacity.html (see the header).
#include "reports/capacity_html.hpp"

#include <fmt/format.h>

#include "reports/detail/format.hpp"
#include "reports/detail/svg.hpp"
#include "reports/text.hpp"

namespace bootstorm::reports {

namespace {

std::string seconds_cell(const std::optional<double>& s) {
  return s ? fmt::format("{:.2f} s", *s) : "not reached";
}

std::string curve_chart(const CapacityView& v) {
  svg::XySeries p50{"P50", std::string(svg::series_color(0)), {}};
  svg::XySeries p95{"P95", std::string(svg::series_color(1)), {}};
  std::string desc = "Boot time against desktops per host, one point per step.";
  for (const auto& s : v.steps) {
    const std::string note = fmt::format("{} per host: P50 {}, P95 {}, {:.1f} % ready, {}", s.per_host,
                                         seconds_cell(s.p50_s), seconds_cell(s.p95_s), s.ready_fraction * 100,
                                         s.meets ? "meets the SLO" : "misses the SLO");
    if (s.p50_s) p50.points.push_back({static_cast<double>(s.per_host), *s.p50_s, note});
    if (s.p95_s) p95.points.push_back({static_cast<double>(s.per_host), *s.p95_s, note});
    desc += " " + note + ".";
  }
  std::vector<svg::XyMark> across, along;
  if (v.bound_s) across.push_back({*v.bound_s, "SLO " + v.slo, "#b91c1c"});
  if (v.capacity)
    along.push_back({static_cast<double>(*v.capacity), fmt::format("capacity {}", *v.capacity), "#047857"});
  if (v.knee && (!v.capacity || *v.knee != *v.capacity))
    along.push_back({static_cast<double>(*v.knee), fmt::format("knee {}", *v.knee), "#6b7280"});
  return svg::xy_chart("capacity-curve", "Boot time against desktops per host", desc, "desktops per host",
                       "ready boot time (s)", {p50, p95}, across, along);
}

}  // namespace

std::string render_capacity_html(const CapacityView& v, std::string_view generated_at) {
  std::string out = detail::html_head(v.title);
  out += fmt::format("<header class=\"top\"><h1>{}</h1><p>{}</p></header>\n", escape_xml(v.title),
                     escape_xml(v.origin));
  out += "<h2>Verdict</h2>\n<ul>\n";
  for (const auto& line : v.verdict) out += "<li>" + escape_xml(line) + "</li>\n";
  out +=
      "</ul>\n<h2>The curve</h2>\n<figure>\n" + curve_chart(v) +
      "<figcaption>Pooled over each step's storms. A desktop that never became ready counts as slower than "
      "every one that did: a percentile that falls among them is not drawn.</figcaption>\n</figure>\n";
  out += fmt::format(
      "<table>\n<thead><tr><th>per host</th><th>desktops</th><th>storms</th><th>P50</th><th>P95</th>"
      "<th>ready</th><th>{}</th><th>meets</th><th>held back by</th><th>run</th></tr></thead>\n<tbody>\n",
      escape_xml(v.slo));
  for (const auto& s : v.steps) {
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f} %</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td><a href=\"{}/report.html\">{}</a></td></tr>\n",
        s.per_host, s.vms, s.storms, seconds_cell(s.p50_s), seconds_cell(s.p95_s), s.ready_fraction * 100,
        escape_xml(s.slo_value),
        s.meets ? (s.marginal ? "yes (marginal)" : "yes") : (s.marginal ? "no (marginal)" : "no"),
        escape_xml(s.held_by), escape_xml(s.run_dir), escape_xml(s.run_dir.substr(s.run_dir.rfind('/') + 1)));
  }
  out += "</tbody>\n</table>\n";
  out += detail::html_tail(generated_at, "Capacity search.");
  return out;
}

}  // namespace bootstorm::reports
