// Evaluation of the PromQL subset (simulator/prometheus/evaluate.hpp) against hand-computed Prometheus
// values: lookback, left-open windows, extrapolatedRate (resets, partial windows, the zero point),
// aggregations and range queries.
#include "simulator/prometheus/evaluate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace bootstorm::sim::prometheus {
namespace {

constexpr double t0 = 1700000000;  // 2023-11-14T22:13:20Z

// A store that records what the engine asks for.
class RecordingStore : public SeriesStore {
 public:
  struct Call {
    std::vector<Matcher> matchers;
    double from = 0, to = 0;
  };
  MemorySeriesStore data;
  mutable std::vector<Call> calls;

  std::vector<Series> select(const std::vector<Matcher>& matchers, double from, double to) const override {
    calls.push_back({matchers, from, to});
    return data.select(matchers, from, to);
  }
};

Labels vmi(const std::string& name, const std::string& vm, const std::string& node) {
  return {{"__name__", name}, {"name", vm}, {"namespace", "storm"}, {"node", node}};
}

Expr query(std::string_view text) {
  auto e = parse_query(text);
  EXPECT_TRUE(e.has_value()) << text << ": " << (e ? "" : e.error().message);
  return e ? std::move(*e) : Expr{};
}

QueryResult instant(const SeriesStore& store, std::string_view text, double at, EvalOptions options = {}) {
  auto r = evaluate_instant(query(text), at, store, options);
  EXPECT_TRUE(r.has_value()) << text << ": " << (r ? "" : r.error().message);
  return r ? std::move(*r) : QueryResult{};
}

// The one value of an instant query that must return exactly one series.
double only_value(const SeriesStore& store, std::string_view text, double at) {
  QueryResult r = instant(store, text, at);
  EXPECT_EQ(r.type, ResultType::vector);
  EXPECT_EQ(r.series.size(), 1u) << text;
  if (r.series.size() != 1 || r.series[0].samples.size() != 1) return std::nan("");
  EXPECT_EQ(r.series[0].samples[0].at, at);
  return r.series[0].samples[0].value;
}

TEST(PromEvaluate, InstantSelectorTakesTheLatestSampleWithinTheLookback) {
  MemorySeriesStore store;
  const Labels x{{"__name__", "x"}, {"vm", "a"}};
  store.add(x, t0, 1);
  store.add(x, t0 + 10, 2);
  store.add(x, t0 + 20, 3);
  QueryResult r = instant(store, "x", t0 + 25);
  ASSERT_EQ(r.series.size(), 1u);
  EXPECT_EQ(r.series[0].labels, x);  // a selector keeps __name__
  ASSERT_EQ(r.series[0].samples.size(), 1u);
  EXPECT_EQ(r.series[0].samples[0].value, 3);
  EXPECT_EQ(r.series[0].samples[0].at, t0 + 25);  // stamped with the query time
  EXPECT_EQ(only_value(store, "x", t0 + 19.999), 2);
  EXPECT_EQ(only_value(store, "x", t0 + 20), 3);
  // The lookback window is left-open: a sample exactly 5 minutes old is out.
  EXPECT_EQ(only_value(store, "x", t0 + 20 + 299.999), 3);
  EXPECT_TRUE(instant(store, "x", t0 + 20 + 300).series.empty());
  EXPECT_TRUE(instant(store, "x", t0 - 0.001).series.empty());
  EXPECT_TRUE(instant(store, "x", t0 + 100, EvalOptions{60}).series.empty());
  EXPECT_EQ(instant(store, "x", t0 + 79, EvalOptions{60}).series.size(), 1u);
}

TEST(PromEvaluate, MatchersSelectSeries) {
  MemorySeriesStore store;
  for (const char* vm : {"desk-1", "desk-2", "web-1"}) store.add(vmi("m", vm, "n1"), t0, 1);
  store.add(vmi("other", "desk-1", "n1"), t0, 1);
  EXPECT_EQ(instant(store, "m", t0).series.size(), 3u);
  EXPECT_EQ(instant(store, R"(m{name=~"desk-.*"})", t0).series.size(), 2u);
  EXPECT_EQ(instant(store, R"(m{name!~"desk-.*"})", t0).series.size(), 1u);
  EXPECT_EQ(instant(store, R"(m{name!="web-1", node="n1"})", t0).series.size(), 2u);
  EXPECT_EQ(instant(store, R"({name="desk-1"})", t0).series.size(), 2u);
  EXPECT_EQ(instant(store, R"({__name__=~"m|other", name="desk-1"})", t0).series.size(), 2u);
  EXPECT_TRUE(instant(store, R"(m{missing="x"})", t0).series.empty());
  EXPECT_EQ(instant(store, R"(m{missing=""})", t0).series.size(), 3u);
}

TEST(PromEvaluate, RangeSelectorIsLeftOpen) {
  MemorySeriesStore store;
  for (int k = 0; k <= 4; ++k) store.add({{"__name__", "x"}}, t0 + 15 * k, 10 * k);
  QueryResult r = instant(store, "x[30s]", t0 + 60);
  EXPECT_EQ(r.type, ResultType::matrix);
  ASSERT_EQ(r.series.size(), 1u);
  EXPECT_EQ(r.series[0].labels.at("__name__"), "x");
  ASSERT_EQ(r.series[0].samples.size(), 2u);  // t0+45 and t0+60; t0+30 is on the open edge
  EXPECT_EQ(r.series[0].samples[0].at, t0 + 45);
  EXPECT_EQ(r.series[0].samples[0].value, 30);
  EXPECT_EQ(r.series[0].samples[1].at, t0 + 60);
  EXPECT_TRUE(instant(store, "x[30s]", t0 + 200).series.empty());
}

class PromCounterEvery15s : public ::testing::Test {
 protected:
  MemorySeriesStore store;
  // A counter at 1000 + 30 per 15 s scrape, from t0 to t0 + 300.
  void SetUp() override {
    for (int k = 0; k <= 20; ++k)
      store.add({{"__name__", "c_total"}, {"vm", "a"}}, t0 + 15 * k, 1000 + 30 * k);
  }
};

TEST_F(PromCounterEvery15s, RateOverTwoScrapesIsTheDeltaOver15s) {
  // (T-30, T] holds two samples 15 s apart; the gap to the window's start (15 s) is under 1.1 intervals, so
  // the increase is extrapolated to the whole 30 s: 30 * 30/15 = 60, a rate of 60/30 = 30/15.
  EXPECT_DOUBLE_EQ(only_value(store, "rate(c_total[30s])", t0 + 150), 30.0 / 15);
  EXPECT_DOUBLE_EQ(only_value(store, "increase(c_total[30s])", t0 + 150), 60);
  EXPECT_DOUBLE_EQ(only_value(store, "irate(c_total[30s])", t0 + 150), 30.0 / 15);
  // Between scrapes: 8 s to the start, 7 s to the end, both extrapolated: still 60.
  EXPECT_DOUBLE_EQ(only_value(store, "increase(c_total[30s])", t0 + 157), 60);
  EXPECT_DOUBLE_EQ(only_value(store, "rate(c_total[5m])", t0 + 300), 2);
  QueryResult r = instant(store, "rate(c_total[30s])", t0 + 150);
  ASSERT_EQ(r.series.size(), 1u);
  EXPECT_EQ(r.series[0].labels, (Labels{{"vm", "a"}}));  // functions drop __name__
}

TEST_F(PromCounterEvery15s, OneSampleInTheWindowGivesNothing) {
  EXPECT_TRUE(instant(store, "rate(c_total[15s])", t0 + 150).series.empty());
  EXPECT_TRUE(instant(store, "irate(c_total[10s])", t0 + 150).series.empty());
  EXPECT_TRUE(instant(store, "increase(c_total[1m])", t0 - 1).series.empty());
  EXPECT_TRUE(instant(store, "increase(c_total[1m])", t0).series.empty());
}

TEST(PromEvaluate, CounterResetIsAddedBack) {
  MemorySeriesStore store;
  const double values[] = {100, 130, 10, 40};  // reset between the 2nd and 3rd scrape
  for (int k = 0; k < 4; ++k) store.add({{"__name__", "c_total"}}, t0 + 15 * k, values[k]);
  const double t = t0 + 45;
  // Increase: 30 + 10 (from zero after the reset) + 30 = 70 over 45 s sampled, extrapolated by 15 s to the
  // window's start (the zero point, 45 * 100/70 s back, is farther): 70 * 60/45.
  EXPECT_DOUBLE_EQ(only_value(store, "increase(c_total[1m])", t), 70.0 * 60 / 45);
  EXPECT_DOUBLE_EQ(only_value(store, "rate(c_total[1m])", t), 70.0 * 60 / 45 / 60);
  EXPECT_DOUBLE_EQ(only_value(store, "irate(c_total[1m])", t), 30.0 / 15);
  EXPECT_DOUBLE_EQ(only_value(store, "irate(c_total[1m])", t0 + 30), 10.0 / 15);  // the reset: 10 since zero
}

TEST(PromEvaluate, ASeriesStartingMidWindowIsNotExtrapolatedBelowZero) {
  MemorySeriesStore store;
  const double values[] = {5, 35, 65};  // a counter that started from zero just before its first scrape
  for (int k = 0; k < 3; ++k) store.add({{"__name__", "c_total"}}, t0 + 15 * k, values[k]);
  const double t = t0 + 30;
  // 60 over 30 s sampled. The first sample is 30 s after the window's start, beyond 1.1 intervals: at most
  // half an interval (7.5 s) is added, and the counter's zero point (30 * 5/60 = 2.5 s back) caps that:
  // 60 * 32.5/30 = 65, the counter's value. Without the zero point it would be 60 * 37.5/30 = 75.
  EXPECT_DOUBLE_EQ(only_value(store, "increase(c_total[1m])", t), 65);
  EXPECT_DOUBLE_EQ(only_value(store, "rate(c_total[1m])", t), 65.0 / 60);
}

TEST(PromEvaluate, ASeriesEndingMidWindowIsExtrapolatedByHalfAnInterval) {
  MemorySeriesStore store;
  const double values[] = {100, 115, 130};
  for (int k = 0; k < 3; ++k) store.add({{"__name__", "c_total"}}, t0 + 15 * k, values[k]);
  // At t0 + 55 over 1m: 5 s to the start (extrapolated), 25 s to the end (> 16.5 s: 7.5 s only).
  EXPECT_DOUBLE_EQ(only_value(store, "increase(c_total[1m])", t0 + 55), 30.0 * (30 + 5 + 7.5) / 30);
}

TEST(PromEvaluate, SumByNodeOfRates) {
  MemorySeriesStore store;
  const std::string read = "kubevirt_vmi_storage_read_traffic_bytes_total";
  for (int k = 0; k <= 4; ++k) {
    store.add(vmi(read, "desk-1", "n1"), t0 + 15 * k, 1500.0 * k);  // 100 B/s
    store.add(vmi(read, "desk-2", "n1"), t0 + 15 * k, 3000.0 * k);  // 200 B/s
    store.add(vmi(read, "desk-3", "n2"), t0 + 15 * k, 4500.0 * k);  // 300 B/s
  }
  const double t = t0 + 60;
  QueryResult r = instant(store, "sum by (node) (rate(" + read + "[30s]))", t);
  ASSERT_EQ(r.series.size(), 2u);
  EXPECT_EQ(r.series[0].labels, (Labels{{"node", "n1"}}));
  EXPECT_DOUBLE_EQ(r.series[0].samples[0].value, 300);
  EXPECT_EQ(r.series[1].labels, (Labels{{"node", "n2"}}));
  EXPECT_DOUBLE_EQ(r.series[1].samples[0].value, 300);
  EXPECT_EQ(r.series[1].samples[0].at, t);

  QueryResult total = instant(store, "sum(rate(" + read + "[30s]))", t);
  ASSERT_EQ(total.series.size(), 1u);
  EXPECT_TRUE(total.series[0].labels.empty());
  EXPECT_DOUBLE_EQ(total.series[0].samples[0].value, 600);

  QueryResult without = instant(store, "max without (name) (" + read + ")", t);
  ASSERT_EQ(without.series.size(), 2u);
  EXPECT_EQ(without.series[0].labels, (Labels{{"namespace", "storm"}, {"node", "n1"}}));  // no __name__
  EXPECT_EQ(without.series[0].samples[0].value, 3000.0 * 4);
  EXPECT_EQ(instant(store, "sum by (__name__) (" + read + ")", t).series.at(0).labels.at("__name__"), read);
}

TEST(PromEvaluate, AvgMinMaxCount) {
  MemorySeriesStore store;
  const double values[] = {4, 1, 10};
  const char* vms[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) store.add({{"__name__", "g"}, {"vm", vms[i]}, {"node", "n"}}, t0, values[i]);
  EXPECT_DOUBLE_EQ(only_value(store, "avg(g)", t0), 5);
  EXPECT_EQ(only_value(store, "min(g)", t0), 1);
  EXPECT_EQ(only_value(store, "max(g)", t0), 10);
  EXPECT_EQ(only_value(store, "count(g)", t0), 3);
  EXPECT_EQ(only_value(store, R"(count by (node) (g{vm!="a"}))", t0), 2);
  EXPECT_TRUE(instant(store, "count(nothing)", t0).series.empty());  // no input, no group
}

TEST(PromEvaluate, SumAndAvgUsePrometheusCompensatedArithmetic) {
  MemorySeriesStore store;
  // Input order is label order: 1e100, 1, -1e100. A plain sum gives 0; Kahan-Neumaier keeps the 1.
  store.add({{"__name__", "s"}, {"k", "a"}}, t0, 1e100);
  store.add({{"__name__", "s"}, {"k", "b"}}, t0, 1);
  store.add({{"__name__", "s"}, {"k", "c"}}, t0, -1e100);
  EXPECT_EQ(only_value(store, "sum(s)", t0), 1);
  // The sum of two 1e308 overflows; the mean switches to incremental calculation and stays finite.
  store.add({{"__name__", "big"}, {"k", "a"}}, t0, 1e308);
  store.add({{"__name__", "big"}, {"k", "b"}}, t0, 1e308);
  EXPECT_EQ(only_value(store, "avg(big)", t0), 1e308);
  EXPECT_TRUE(std::isinf(only_value(store, "sum(big)", t0)));
}

TEST(PromEvaluate, MinAndMaxSkipNaN) {
  MemorySeriesStore store;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  store.add({{"__name__", "g"}, {"k", "a"}}, t0, nan);
  store.add({{"__name__", "g"}, {"k", "b"}}, t0, 2);
  store.add({{"__name__", "g"}, {"k", "c"}}, t0, 1);
  store.add({{"__name__", "only_nan"}}, t0, nan);
  EXPECT_EQ(only_value(store, "max(g)", t0), 2);
  EXPECT_EQ(only_value(store, "min(g)", t0), 1);
  EXPECT_TRUE(std::isnan(only_value(store, "max(only_nan)", t0)));
  EXPECT_TRUE(std::isnan(only_value(store, "sum(g)", t0)));
}

TEST(PromEvaluate, SameLabelsetAfterDroppingTheNameIsAnExecutionError) {
  MemorySeriesStore store;
  for (int k = 0; k <= 4; ++k) {
    store.add({{"__name__", "a_total"}, {"vm", "x"}}, t0 + 15 * k, k);
    store.add({{"__name__", "b_total"}, {"vm", "x"}}, t0 + 15 * k, k);
  }
  auto r = evaluate_instant(query(R"(rate({__name__=~"a_total|b_total"}[1m]))"), t0 + 60, store);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "vector cannot contain metrics with the same labelset");
  EXPECT_EQ(r.error().status, 422);
  // Aggregating them is fine: the selector keeps the names apart.
  EXPECT_EQ(instant(store, R"(sum by (vm) ({__name__=~"a_total|b_total"}))", t0 + 60).series.size(), 1u);
}

TEST(PromEvaluate, TheStoreIsAskedOncePerSelectorForTheWholeWindow) {
  RecordingStore store;
  for (int k = 0; k <= 8; ++k) store.data.add({{"__name__", "c_total"}}, t0 + 15 * k, k);
  auto r = evaluate_range(query("sum(rate(c_total[30s])) by (node)"), t0 + 30, t0 + 120, 15, store);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(store.calls.size(), 1u);
  EXPECT_DOUBLE_EQ(store.calls[0].from, t0);  // first step minus the range
  EXPECT_DOUBLE_EQ(store.calls[0].to, t0 + 120.001);
  ASSERT_EQ(store.calls[0].matchers.size(), 1u);
  EXPECT_EQ(store.calls[0].matchers[0].value, "c_total");

  store.calls.clear();
  ASSERT_TRUE(evaluate_instant(query("c_total"), t0 + 120, store).has_value());
  ASSERT_EQ(store.calls.size(), 1u);
  EXPECT_DOUBLE_EQ(store.calls[0].from, t0 + 120 - 300);  // the lookback delta
}

TEST(PromEvaluate, RangeQueryEvaluatesEachStep) {
  MemorySeriesStore store;
  for (int k = 0; k <= 6; ++k) store.add({{"__name__", "g"}, {"vm", "a"}}, t0 + 10 * k, k);
  store.add({{"__name__", "g"}, {"vm", "late"}}, t0 + 45, 99);
  auto r = evaluate_range(query("g"), t0, t0 + 60, 20, store);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->type, ResultType::matrix);
  ASSERT_EQ(r->series.size(), 2u);
  const Series& a = r->series[0];
  EXPECT_EQ(a.labels.at("vm"), "a");
  ASSERT_EQ(a.samples.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a.samples[i].at, t0 + 20 * i);
    EXPECT_EQ(a.samples[i].value, 2 * i);
  }
  const Series& late = r->series[1];
  ASSERT_EQ(late.samples.size(), 1u);  // only the step at t0 + 60 sees it
  EXPECT_EQ(late.samples[0].at, t0 + 60);

  auto steps = evaluate_range(query("g"), t0, t0 + 59, 20, store);  // the last step is <= end
  ASSERT_TRUE(steps.has_value());
  EXPECT_EQ(steps->series[0].samples.size(), 3u);
  auto one = evaluate_range(query("g"), t0 + 5, t0 + 5, 1, store);
  ASSERT_TRUE(one.has_value());
  ASSERT_EQ(one->series[0].samples.size(), 1u);
  EXPECT_EQ(one->series[0].samples[0].at, t0 + 5);
}

TEST(PromEvaluate, RangeQueryMergesALabelsetAcrossSteps) {
  MemorySeriesStore store;
  for (int k = 0; k <= 2; ++k) store.add({{"__name__", "a_total"}, {"vm", "x"}}, t0 + 15 * k, k);
  for (int k = 6; k <= 8; ++k) store.add({{"__name__", "b_total"}, {"vm", "x"}}, t0 + 15 * k, k);
  // Never both in one step, so no error; one series {vm="x"} with points from both.
  auto r = evaluate_range(query(R"(irate({__name__=~"a_total|b_total"}[20s]))"), t0, t0 + 120, 15, store);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->series.size(), 1u);
  EXPECT_EQ(r->series[0].labels, (Labels{{"vm", "x"}}));
  ASSERT_EQ(r->series[0].samples.size(), 4u);
  EXPECT_EQ(r->series[0].samples[0].at, t0 + 15);
  EXPECT_EQ(r->series[0].samples[3].at, t0 + 120);
}

TEST(PromEvaluate, RangeQueryErrors) {
  MemorySeriesStore store;
  auto error = [&](std::string_view q, double start, double end, double step) {
    auto r = evaluate_range(query(q), start, end, step, store);
    EXPECT_FALSE(r.has_value());
    if (r) return std::string();
    EXPECT_EQ(r.error().status, 400);
    return r.error().message;
  };
  EXPECT_EQ(error("x", t0, t0 - 1, 15), "end timestamp must not be before start time");
  EXPECT_EQ(error("x", t0, t0 + 60, 0),
            "zero or negative query resolution step widths are not accepted. Try a positive integer");
  EXPECT_EQ(error("x", t0, t0 + 60, -15),
            "zero or negative query resolution step widths are not accepted. Try a positive integer");
  EXPECT_EQ(
      error("x", t0, t0 + 11001, 1),
      "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution "
      "(?step=XX)");
  EXPECT_EQ(error("x[1m]", t0, t0 + 60, 15),
            "invalid expression type \"range vector\" for range query, must be Scalar or instant Vector");
  EXPECT_TRUE(evaluate_range(query("x"), t0, t0 + 11000, 1, store).has_value());  // 11,001 points: allowed
}

}  // namespace
}  // namespace bootstorm::sim::prometheus
