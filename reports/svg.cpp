#include "reports/detail/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "providers/api/milestone.hpp"
#include "reports/detail/format.hpp"

namespace bootstorm::reports::svg {
namespace {

constexpr double kWidth = 760;
constexpr std::string_view kAxisColor = "#4b5563";
constexpr std::string_view kGridColor = "#e5e7eb";

std::string f1(double v) {
  return fmt::format("{:.1f}", v);
}

std::string tick_label(double v) {
  return number(v, 2);
}

double nice_step(double range, int target) {
  if (!(range > 0) || target <= 0) return 1;
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  double nice = 10;
  for (double c : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (norm <= c + 1e-9) {
      nice = c;
      break;
    }
  }
  return nice * mag;
}

// A plotting frame: data ranges mapped to the SVG box, with axes, grid and labels.
struct Frame {
  double height = 320;
  double left = 60, right = 20, top = 40, bottom = 48;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;

  double px(double x) const { return left + (x - x0) / (x1 - x0) * (kWidth - left - right); }
  double py(double y) const { return height - bottom - (y - y0) / (y1 - y0) * (height - top - bottom); }
};

std::string open_svg(std::string_view id, std::string_view title, std::string_view desc, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"{0}\" viewBox=\"0 0 {1} {2}\" "
      "role=\"img\" "
      "aria-labelledby=\"{0}-title {0}-desc\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, "
      "sans-serif\" font-size=\"12\">\n<title id=\"{0}-title\">{3}</title>\n<desc "
      "id=\"{0}-desc\">{4}</desc>\n"
      "<rect x=\"0\" y=\"0\" width=\"{1}\" height=\"{2}\" fill=\"#ffffff\"/>\n",
      escape_xml(id), kWidth, f1(height), escape_xml(title), escape_xml(desc));
}

std::string axes(const Frame& f, const std::vector<double>& xticks, const std::vector<double>& yticks,
                 std::string_view xlabel, std::string_view ylabel, bool y_percent) {
  std::string out = "<g class=\"axes\">\n";
  for (double y : yticks) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1\"/>\n",
                       f1(f.left), f1(f.py(y)), f1(kWidth - f.right), f1(f.py(y)), kGridColor);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">{}</text>\n", f1(f.left - 6),
                       f1(f.py(y) + 4), kAxisColor, y_percent ? tick_label(y * 100) + " %" : tick_label(y));
  }
  for (double x : xticks) {
    out +=
        fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1\"/>\n",
                    f1(f.px(x)), f1(f.top), f1(f.height - f.bottom), kGridColor);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n", f1(f.px(x)),
                       f1(f.height - f.bottom + 16), kAxisColor, tick_label(x));
  }
  out +=
      fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"1.2\"/>\n",
                  f1(f.left), f1(f.height - f.bottom), f1(kWidth - f.right), kAxisColor);
  out +=
      fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.2\"/>\n",
                  f1(f.left), f1(f.top), f1(f.height - f.bottom), kAxisColor);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#111827\">{}</text>\n",
                     f1((f.left + kWidth - f.right) / 2), f1(f.height - 10), escape_xml(xlabel));
  out += fmt::format(
      "<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" fill=\"#111827\" transform=\"rotate(-90 14 "
      "{0})\">{1}</text>\n",
      f1((f.top + f.height - f.bottom) / 2), escape_xml(ylabel));
  out += "</g>\n";
  return out;
}

// Legend in the top margin: a swatch and the label of each series, left to right, wrapping when needed.
std::string legend(const std::vector<std::pair<std::string, std::string>>& items, double left, double top) {
  std::string out = "<g class=\"legend\">\n";
  double x = left, y = top;
  for (const auto& [label, color] : items) {
    const double w = 26 + 6.8 * static_cast<double>(label.size());
    if (x + w > kWidth - 10 && x > left) {
      x = left;
      y += 16;
    }
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" rx=\"2\" fill=\"{}\"/>\n", f1(x),
                       f1(y - 9), color);
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#111827\">{}</text>\n", f1(x + 18), f1(y),
                       escape_xml(label));
    x += w + 12;
  }
  out += "</g>\n";
  return out;
}

double legend_rows(const std::vector<std::pair<std::string, std::string>>& items, double left) {
  double x = left;
  int rows = 1;
  for (const auto& item : items) {
    const double w = 26 + 6.8 * static_cast<double>(item.first.size());
    if (x + w > kWidth - 10 && x > left) {
      x = left;
      ++rows;
    }
    x += w + 12;
  }
  return rows;
}

std::vector<std::pair<std::string, std::string>> legend_items(const std::vector<Series>& series) {
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& s : series) items.emplace_back(s.label, s.color);
  return items;
}

double max_value(const std::vector<Series>& series) {
  double m = 0;
  for (const auto& s : series)
    for (double v : s.values) m = std::max(m, v);
  return m;
}

// A chart with nothing to draw: its title, why (`desc`) and a short `message` where the plot would be.
std::string empty_chart(std::string_view id, std::string_view title, std::string_view desc,
                        std::string_view message) {
  return open_svg(id, title, desc, 80) +
         fmt::format("<text x=\"380\" y=\"45\" text-anchor=\"middle\" fill=\"#6b7280\">{}</text>\n</svg>\n",
                     escape_xml(message));
}

std::string no_data(std::string_view id, std::string_view title) {
  return empty_chart(id, title, "No VM reached the ready milestone, so there is nothing to plot.",
                     "No VM became ready.");
}

}  // namespace

std::string_view series_color(std::size_t index) {
  static constexpr std::string_view kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                  "#E69F00", "#56B4E9", "#000000", "#8C6D31"};
  return kPalette[index % std::size(kPalette)];
}

std::string_view milestone_color(std::size_t milestone_index) {
  static constexpr std::string_view kColors[] = {"#6b7280", "#b0b7c3", "#56B4E9", "#0072B2",
                                                 "#009E73", "#E69F00", "#CC79A7", "#D55E00"};
  return kColors[milestone_index % std::size(kColors)];
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1;
  const double step = nice_step(hi - lo, target);
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double t = first; t <= hi + step * 1e-6; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  if (ticks.empty() || ticks.back() < hi - step * 1e-6)
    ticks.push_back(ticks.empty() ? hi : ticks.back() + step);
  return ticks;
}

std::string cdf_chart(std::string_view id, std::string_view title, const std::vector<Series>& series) {
  const double xmax_data = max_value(series);
  if (xmax_data <= 0) return no_data(id, title);
  const auto items = legend_items(series);
  Frame f;
  f.top = 20 + 16 * legend_rows(items, f.left);
  f.height = 300 + f.top;
  const auto xticks = nice_ticks(0, xmax_data, 10);
  f.x1 = xticks.back();
  const auto yticks = nice_ticks(0, 1, 5);
  std::string desc = "Cumulative share of VMs ready against boot time.";
  for (const auto& s : series) {
    std::vector<double> v = s.values;
    std::sort(v.begin(), v.end());
    if (!v.empty())
      desc += fmt::format(" {}: {} of {} VMs ready, median {:.2f} s, slowest {:.2f} s.", s.label, v.size(),
                          s.total, v[v.size() / 2], v.back());
  }
  std::string out = open_svg(id, title, desc, f.height);
  out += axes(f, xticks, yticks, "boot time (s)", "VMs ready", true);
  out += legend(items, f.left, 18);
  for (const auto& s : series) {
    std::vector<double> v = s.values;
    std::sort(v.begin(), v.end());
    const double total = static_cast<double>(std::max(s.total, v.size()));
    if (total == 0) continue;
    std::string d = fmt::format("M{} {}", f1(f.px(0)), f1(f.py(0)));
    for (std::size_t i = 0; i < v.size(); ++i) {
      d += fmt::format(" H{} V{}", f1(f.px(v[i])), f1(f.py(static_cast<double>(i + 1) / total)));
    }
    d += fmt::format(" H{}", f1(f.px(f.x1)));
    out += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.2\" "
        "stroke-linejoin=\"round\"><title>{}</title>"
        "</path>\n",
        d, s.color, escape_xml(s.label));
  }
  out += "</svg>\n";
  return out;
}

std::string histogram_chart(std::string_view id, std::string_view title, const std::vector<Series>& series) {
  const double xmax_data = max_value(series);
  if (xmax_data <= 0) return no_data(id, title);
  const auto items = legend_items(series);
  const double width = nice_step(xmax_data, 24);
  const auto bins = static_cast<std::size_t>(std::floor(xmax_data / width)) + 1;
  std::vector<std::vector<std::size_t>> counts(series.size(), std::vector<std::size_t>(bins, 0));
  std::size_t max_count = 1;
  for (std::size_t s = 0; s < series.size(); ++s) {
    for (double v : series[s].values) {
      const auto b = std::min(bins - 1, static_cast<std::size_t>(std::floor(std::max(v, 0.0) / width)));
      max_count = std::max(max_count, ++counts[s][b]);
    }
  }
  Frame f;
  f.top = 20 + 16 * legend_rows(items, f.left);
  f.height = 280 + f.top;
  f.x1 = width * static_cast<double>(bins);
  auto xticks = nice_ticks(0, f.x1, 10);
  while (!xticks.empty() && xticks.back() > f.x1 + 1e-9) xticks.pop_back();
  const auto yticks = nice_ticks(0, static_cast<double>(max_count), 5);
  f.y1 = yticks.back();
  std::string out =
      open_svg(id, title,
               fmt::format("Number of VMs per boot-time bin of {} s, one bar per scenario in each bin.",
                           number(width)),
               f.height);
  out += axes(f, xticks, yticks, "boot time (s)", "VMs", false);
  out += legend(items, f.left, 18);
  const double bin_px = f.px(width) - f.px(0);
  const double bar_px =
      std::max(1.0, (bin_px - 2) / static_cast<double>(std::max<std::size_t>(series.size(), 1)));
  for (std::size_t s = 0; s < series.size(); ++s) {
    out += fmt::format("<g fill=\"{}\">\n", series[s].color);
    for (std::size_t b = 0; b < bins; ++b) {
      if (counts[s][b] == 0) continue;
      const double x = f.px(width * static_cast<double>(b)) + 1 + bar_px * static_cast<double>(s);
      const double y = f.py(static_cast<double>(counts[s][b]));
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}: {}\u2013{} s: {} "
          "VM{}</title></rect>\n",
          f1(x), f1(y), f1(bar_px), f1(f.py(0) - y), escape_xml(series[s].label),
          number(width * static_cast<double>(b)), number(width * static_cast<double>(b + 1)), counts[s][b],
          counts[s][b] == 1 ? "" : "s");
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

std::string ready_over_time_chart(std::string_view id, std::string_view title,
                                  const std::vector<Series>& series) {
  const double xmax_data = max_value(series);
  if (xmax_data <= 0) return no_data(id, title);
  const auto items = legend_items(series);
  std::size_t max_total = 1;
  for (const auto& s : series) max_total = std::max({max_total, s.total, s.values.size()});
  Frame f;
  f.top = 20 + 16 * legend_rows(items, f.left);
  f.height = 280 + f.top;
  const auto xticks = nice_ticks(0, xmax_data, 10);
  f.x1 = xticks.back();
  const auto yticks = nice_ticks(0, static_cast<double>(max_total), 6);
  f.y1 = yticks.back();
  std::string out = open_svg(
      id, title, "Number of VMs ready against seconds since the scenario's first start request.", f.height);
  out += axes(f, xticks, yticks, "seconds since the first start request", "VMs ready", false);
  out += legend(items, f.left, 18);
  for (const auto& s : series) {
    std::vector<double> v = s.values;
    std::sort(v.begin(), v.end());
    std::string d = fmt::format("M{} {}", f1(f.px(0)), f1(f.py(0)));
    for (std::size_t i = 0; i < v.size(); ++i)
      d += fmt::format(" H{} V{}", f1(f.px(v[i])), f1(f.py(static_cast<double>(i + 1))));
    d += fmt::format(" H{}", f1(f.px(f.x1)));
    out += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.2\"><title>{}</title></path>\n", d,
        s.color, escape_xml(s.label));
    // Dashed line at the number of VMs of the scenario: where the curve should end.
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1\" "
        "stroke-dasharray=\"4 4\" "
        "opacity=\"0.6\"/>\n",
        f1(f.px(0)), f1(f.px(f.x1)), f1(f.py(static_cast<double>(s.total))), s.color);
  }
  out += "</svg>\n";
  return out;
}

std::string interval_chart(std::string_view id, std::string_view title, std::string_view desc,
                           std::string_view ylabel, const std::vector<IntervalSeries>& series, double x_max) {
  double xmax = x_max, ymax = 0;
  for (const auto& s : series) {
    for (const auto& v : s.values) {
      xmax = std::max(xmax, v.to_s);
      ymax = std::max(ymax, v.value);
    }
  }
  if (xmax <= 0 || series.empty())
    return empty_chart(id, title, "The monitoring system returned no sample for this storm.", "No sample.");
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& s : series) items.emplace_back(s.label, s.color);
  Frame f;
  f.top = 20 + 16 * legend_rows(items, f.left);
  f.height = 220 + f.top;
  const auto xticks = nice_ticks(0, xmax, 10);
  f.x1 = xticks.back();
  const auto yticks = nice_ticks(0, ymax > 0 ? ymax : 1, 5);
  f.y1 = yticks.back();
  std::string out = open_svg(id, title, desc, f.height);
  out += axes(f, xticks, yticks, "seconds since the first start request", ylabel, false);
  out += legend(items, f.left, 18);
  for (const auto& s : series) {
    std::string d;
    std::optional<double> pen;  // where the previous step ended, to join adjacent intervals
    for (const auto& v : s.values) {
      const double x0 = std::max(0.0, v.from_s);
      if (!pen || std::abs(*pen - x0) > 1e-9) {
        d += fmt::format("M{} {} ", f1(f.px(x0)), f1(f.py(v.value)));
      } else {
        d += fmt::format("V{} ", f1(f.py(v.value)));
      }
      d += fmt::format("H{} ", f1(f.px(v.to_s)));
      pen = v.to_s;
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"transparent\"><title>{}: {:.1f} to "
          "{:.1f} "
          "s: {:.1f}</title></rect>\n",
          f1(f.px(x0)), f1(f.py(v.value) - 4), f1(std::max(1.0, f.px(v.to_s) - f.px(x0))), 8,
          escape_xml(s.label), v.from_s, v.to_s, v.value);
    }
    out += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"><title>{}</title></path>\n", d,
        s.color, escape_xml(s.label));
  }
  out += "</svg>\n";
  return out;
}

std::string gantt_chart(std::string_view id, std::string_view title, const std::vector<GanttRow>& rows,
                        std::size_t omitted) {
  if (rows.empty()) return no_data(id, title);
  double xmax = 0;
  std::vector<bool> used(api::kMilestoneCount, false);
  for (const auto& r : rows) {
    xmax = std::max(xmax, r.start_s);
    for (const auto& m : r.marks) {
      xmax = std::max(xmax, m.at_s);
      if (m.milestone < used.size()) used[m.milestone] = true;
    }
  }
  std::vector<std::pair<std::string, std::string>> items;
  for (std::size_t i = 1; i < api::kMilestoneCount; ++i)
    if (used[i]) items.emplace_back(std::string(api::to_string(api::kAllMilestones[i])), milestone_color(i));
  items.emplace_back("not ready", "#B91C1C");
  const bool labels = rows.size() <= 60;
  const double row_h = std::clamp(420.0 / static_cast<double>(rows.size()), 3.0, 14.0);
  Frame f;
  f.left = labels ? 170 : 60;
  f.top = 20 + 16 * legend_rows(items, 20);
  f.height = f.top + row_h * static_cast<double>(rows.size()) + f.bottom;
  const auto xticks = nice_ticks(0, std::max(xmax, 1e-3), 10);
  f.x1 = xticks.back();
  f.y0 = 0;
  f.y1 = static_cast<double>(rows.size());
  std::string desc = fmt::format(
      "Timeline of {} VMs sorted by start request; each bar is coloured by the milestone reached at its end.",
      rows.size());
  if (omitted > 0) desc += fmt::format(" {} further VMs are not drawn (every n-th VM is shown).", omitted);
  std::string out = open_svg(id, title, desc, f.height);
  out += axes(f, xticks, {}, "seconds since the first start request", labels ? "" : "VMs (by start)", false);
  out += legend(items, 20, 18);
  const double bar = std::max(1.5, row_h * 0.62);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    // Row i occupies [top + i*row_h, top + (i+1)*row_h]; y increases downwards here.
    const double yc = f.top + row_h * (static_cast<double>(i) + 0.5);
    std::string tip = fmt::format("{} on {}: start +{:.2f} s", r.label, r.host, r.start_s);
    for (const auto& m : r.marks)
      tip +=
          fmt::format(", {} {:.2f} s", api::to_string(api::kAllMilestones[m.milestone]), m.at_s - r.start_s);
    if (r.failed) tip += ", not ready: " + r.reason;
    out += fmt::format("<g><title>{}</title>\n", escape_xml(tip));
    if (labels) {
      out +=
          fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"{}\" fill=\"{}\">{}</text>\n",
                      f1(f.left - 6), f1(yc + std::min(4.0, row_h / 3)), f1(std::min(11.0, row_h)),
                      r.failed ? "#B91C1C" : "#374151", escape_xml(r.label));
    }
    double from = r.start_s;
    for (const auto& m : r.marks) {
      if (m.at_s < from) continue;
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", f1(f.px(from)),
                         f1(yc - bar / 2), f1(std::max(0.8, f.px(m.at_s) - f.px(from))), f1(bar),
                         milestone_color(m.milestone));
      from = m.at_s;
    }
    if (r.failed) {
      const double x = f.px(from);
      const double s = std::max(2.0, bar / 2);
      out +=
          fmt::format("<path d=\"M{} {} L{} {} M{} {} L{} {}\" stroke=\"#B91C1C\" stroke-width=\"1.6\"/>\n",
                      f1(x + 2 - s / 2), f1(yc - s), f1(x + 2 + s * 1.5), f1(yc + s), f1(x + 2 - s / 2),
                      f1(yc + s), f1(x + 2 + s * 1.5), f1(yc - s));
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

std::string stacked_bar_chart(std::string_view id, std::string_view title, std::string_view desc,
                              const std::vector<StackedPart>& parts, const std::vector<StackedBar>& bars,
                              std::string_view xlabel) {
  double xmax = 0;
  for (const auto& b : bars) {
    double total = 0;
    for (double p : b.parts) total += std::max(0.0, p);
    xmax = std::max(xmax, total);
  }
  if (bars.empty() || xmax <= 0) return no_data(id, title);
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& p : parts) items.emplace_back(p.label, p.color);
  constexpr double kRow = 26;
  Frame f;
  f.left = 200;
  f.top = 20 + 16 * legend_rows(items, 20);
  f.height = f.top + kRow * static_cast<double>(bars.size()) + f.bottom;
  const auto xticks = nice_ticks(0, xmax, 8);
  f.x1 = xticks.back();
  std::string out = open_svg(id, title, desc, f.height);
  out += axes(f, xticks, {}, xlabel, "", false);
  out += legend(items, 20, 18);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const double yc = f.top + kRow * (static_cast<double>(i) + 0.5);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#374151\">{}</text>\n",
                       f1(f.left - 6), f1(yc + 4), escape_xml(b.label));
    double from = 0;
    for (std::size_t p = 0; p < b.parts.size() && p < parts.size(); ++p) {
      const double v = std::max(0.0, b.parts[p]);
      if (v <= 0) continue;
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"16\" fill=\"{}\"><title>{}: {} {:.3f} "
          "s</title></rect>\n",
          f1(f.px(from)), f1(yc - 8), f1(std::max(0.8, f.px(from + v) - f.px(from))), parts[p].color,
          escape_xml(b.label), escape_xml(parts[p].label), v);
      from += v;
    }
  }
  out += "</svg>\n";
  return out;
}

std::string xy_chart(std::string_view id, std::string_view title, std::string_view desc,
                     std::string_view xlabel, std::string_view ylabel, const std::vector<XySeries>& series,
                     const std::vector<XyMark>& across, const std::vector<XyMark>& along) {
  double xmax = 0, ymax = 0;
  for (const auto& s : series) {
    for (const auto& p : s.points) {
      xmax = std::max(xmax, p.x);
      ymax = std::max(ymax, p.y);
    }
  }
  for (const auto& m : across) ymax = std::max(ymax, m.at);
  for (const auto& m : along) xmax = std::max(xmax, m.at);
  if (xmax <= 0 || ymax <= 0) return empty_chart(id, title, "Nothing was measured to plot.", "No data.");
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& s : series) items.emplace_back(s.label, s.color);
  Frame f;
  f.top = 20 + 16 * legend_rows(items, f.left);
  f.height = 280 + f.top;
  const auto xticks = nice_ticks(0, xmax, 10);
  f.x1 = xticks.back();
  const auto yticks = nice_ticks(0, ymax * 1.05, 6);
  f.y1 = yticks.back();
  std::string out = open_svg(id, title, desc, f.height);
  out += axes(f, xticks, yticks, xlabel, ylabel, false);
  out += legend(items, f.left, 18);
  for (const auto& m : across) {
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"1.5\" "
        "stroke-dasharray=\"6 4\"><title>{4}</title></line>\n"
        "<text x=\"{6}\" y=\"{5}\" fill=\"{3}\">{4}</text>\n",
        f1(f.left), f1(f.py(m.at)), f1(kWidth - f.right), m.color, escape_xml(m.label), f1(f.py(m.at) - 5),
        f1(f.left + 6));
  }
  for (const auto& m : along) {
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.5\" "
        "stroke-dasharray=\"6 4\"><title>{4}</title></line>\n"
        "<text x=\"{5}\" y=\"{6}\" fill=\"{3}\">{4}</text>\n",
        f1(f.px(m.at)), f1(f.top), f1(f.height - f.bottom), m.color, escape_xml(m.label), f1(f.px(m.at) + 4),
        f1(f.top + 12));
  }
  for (const auto& s : series) {
    std::string d;
    for (const auto& p : s.points)
      d += fmt::format("{}{} {} ", d.empty() ? "M" : "L", f1(f.px(p.x)), f1(f.py(p.y)));
    if (!d.empty()) {
      out += fmt::format(
          "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
          "stroke-linejoin=\"round\"/>\n",
          d, s.color);
    }
    for (const auto& p : s.points) {
      out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"><title>{}</title></circle>\n",
                         f1(f.px(p.x)), f1(f.py(p.y)), s.color, escape_xml(p.note));
    }
  }
  out += "</svg>\n";
  return out;
}

}  // namespace bootstorm::reports::svg
