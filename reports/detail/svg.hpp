#pragma once
// Inline SVG charts for report.html and compare.html (internal to bootstorm::reports). Every chart is a
// complete, well-formed <svg> element with role="img", a <title> and a <desc>, sized by its viewBox so it
// scales with the page and prints crisply. No scripts: tooltips are SVG <title> elements.
#include <string>
#include <string_view>
#include <vector>

namespace bootstorm::reports::svg {

// Colour-blind-safe palette (Okabe & Ito, 2008), in the order scenarios are drawn.
std::string_view series_color(std::size_t index);
// Colour of a milestone (api::Milestone enum index).
std::string_view milestone_color(std::size_t milestone_index);

// "Nice" axis ticks covering [lo, hi] with about `target` intervals (steps of 1, 2, 2.5 or 5 x 10^k).
std::vector<double> nice_ticks(double lo, double hi, int target);

struct Series {
  std::string label;
  std::string color;
  std::vector<double> values;  // seconds, any order
  std::size_t total = 0;       // VMs of the scenario (CDF denominator; ready-over-time y range)
};

// Empirical CDF of each series, overlaid: y = share of all VMs of the scenario ready by x.
std::string cdf_chart(std::string_view id, std::string_view title, const std::vector<Series>& series);
// Histogram of each series, grouped bars on common bins.
std::string histogram_chart(std::string_view id, std::string_view title, const std::vector<Series>& series);
// Number of VMs ready against seconds since the scenario's first start request (step lines).
std::string ready_over_time_chart(std::string_view id, std::string_view title,
                                  const std::vector<Series>& series);

// A quantity measured over intervals (a monitoring system's samples): each interval drawn as a flat step at
// its mean, against seconds since the scenario's first start request.
struct IntervalValue {
  double from_s = 0, to_s = 0;
  double value = 0;
};
struct IntervalSeries {
  std::string label;
  std::string color;
  std::vector<IntervalValue> values;
};
// `x_max`: the axis' end, to share the ready curve's (0: the data's end).
std::string interval_chart(std::string_view id, std::string_view title, std::string_view desc,
                           std::string_view ylabel, const std::vector<IntervalSeries>& series, double x_max);

struct GanttMark {
  std::size_t milestone = 0;  // api::Milestone index
  double at_s = 0;            // seconds since the scenario's first start request
};
struct GanttRow {
  std::string label;  // VM name
  std::string host;
  double start_s = 0;            // its start request, seconds since the scenario's first one
  std::vector<GanttMark> marks;  // ascending milestone order
  bool failed = false;
  std::string reason;
};
// Per-VM timeline: one row per VM (sorted by start), a segment per milestone interval.
// `omitted` VMs are mentioned in the description when rows were thinned out.
std::string gantt_chart(std::string_view id, std::string_view title, const std::vector<GanttRow>& rows,
                        std::size_t omitted);

// One horizontal bar per row, split into parts drawn left to right (seconds), each part coloured as its
// legend entry: where the mean boot time of each scenario went.
struct StackedBar {
  std::string label;
  std::vector<double> parts;  // seconds, one per legend entry (0: absent)
};
struct StackedPart {
  std::string label;
  std::string color;
};
std::string stacked_bar_chart(std::string_view id, std::string_view title, std::string_view desc,
                              const std::vector<StackedPart>& legend, const std::vector<StackedBar>& bars,
                              std::string_view xlabel);

// Points joined by lines, against a numeric x axis (e.g. desktops per host): each series a line with round
// markers (a point's `note` is its tooltip), plus dashed reference lines across (`y`) and along (`x`) the
// plot.
struct XyPoint {
  double x = 0, y = 0;
  std::string note;
};
struct XySeries {
  std::string label;
  std::string color;
  std::vector<XyPoint> points;  // ascending x
};
struct XyMark {
  double at = 0;
  std::string label;
  std::string color;
};
std::string xy_chart(std::string_view id, std::string_view title, std::string_view desc,
                     std::string_view xlabel, std::string_view ylabel, const std::vector<XySeries>& series,
                     const std::vector<XyMark>& across, const std::vector<XyMark>& along);

}  // namespace bootstorm::reports::svg
