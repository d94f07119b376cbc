// capacity.html: self-contained and well formed, the curve drawn with the SLO's bound and the capacity, every
// step in the table with a link to its own report, text escaped.
#include "reports/capacity_html.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/reports/fixture.hpp"

namespace bootstorm::reports {
namespace {

using testing::count;
using testing::kGeneratedAt;

CapacityView view() {
  CapacityView v;
  v.title = "Capacity: consolidation — 1x R7625 <64GFC>";
  v.origin = "predicted with lab model tolly-2024 (virtual time: not a measurement)";
  v.slo = "ready p95 <= 60s";
  v.stat = "p95";
  v.bound_s = 60;
  v.capacity = 384;
  v.knee = 48;
  v.verdict = {
      "capacity (predicted): 384 desktops per host within 'ready p95 <= 60s'; 385 per host missed it"};
  v.steps = {
      {24, 24, 1, 7.7, 8.4, 1.0, "8.37 s", true, false, "per-I/O latency", "steps/a"},
      {384, 384, 1, 39.6, 46.0, 1.0, "45.95 s", true, false, "link r7625-01", "steps/b"},
      {385, 385, 1, 39.6, std::nullopt, 0.997, "not reached", false, false, "memory r7625-01", "steps/c"}};
  return v;
}

TEST(CapacityHtml, TheCurveTheBoundTheCapacityAndEveryStep) {
  const std::string html = render_capacity_html(view(), kGeneratedAt);
  EXPECT_EQ(testing::tag_balance_problem(html), "");
  EXPECT_EQ(count(html, "<svg "), 1u);
  EXPECT_NE(html.find("id=\"capacity-curve\""), std::string::npos);
  EXPECT_NE(html.find(">SLO ready p95 &lt;= 60s</text>"), std::string::npos);
  EXPECT_NE(html.find(">capacity 384</text>"), std::string::npos);
  EXPECT_NE(html.find(">knee 48</text>"), std::string::npos);
  // Two series: three P50 points, two P95 points (the third is not reached, so it is not drawn).
  EXPECT_EQ(count(html, "<circle "), 5u);
  EXPECT_EQ(count(html, "<tr><td>"), 3u);
  EXPECT_NE(html.find("<a href=\"steps/c/report.html\">c</a>"), std::string::npos);
  EXPECT_NE(html.find("1x R7625 &lt;64GFC&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<64GFC>"), std::string::npos);
  for (const char* forbidden : {"<script", "<link", "<img", "https://"})
    EXPECT_EQ(html.find(forbidden), std::string::npos) << forbidden;
}

TEST(CapacityHtml, NothingMeasuredIsSaidNotDrawn) {
  CapacityView v = view();
  v.steps.clear();
  v.bound_s.reset();
  v.capacity.reset();
  v.knee.reset();
  const std::string html = render_capacity_html(v, kGeneratedAt);
  EXPECT_NE(html.find("No data."), std::string::npos);
  EXPECT_EQ(testing::tag_balance_problem(html), "");
}

}  // namespace
}  // namespace bootstorm::reports
