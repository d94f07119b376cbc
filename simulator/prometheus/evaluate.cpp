#include "simulator/prometheus/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>

namespace bootstorm::sim::prometheus {
namespace {

using Ms = std::int64_t;

// Times beyond this (about year 318,000) are refused rather than overflowing millisecond arithmetic.
constexpr double max_abs_seconds = 1e13;

struct Point {
  Ms t = 0;
  double v = 0;
};

// One series as fetched for a selector: labels without empty values (Prometheus has no empty labels), the
// same without __name__ (what functions output), and its points in the window every step needs.
struct Fetched {
  Labels labels;
  Labels without_name;
  std::vector<Point> points;
};

// An element of an instant vector. Labels point into the fetched series or the evaluator's interned label
// sets, both stable for the evaluator's lifetime: a range query copies no label set per step.
struct Element {
  const Labels* labels = nullptr;
  double value = 0;
};
using Vector = std::vector<Element>;

Error bad_data(std::string message) {
  Error e = make_error(ErrorKind::invalid_input, std::move(message));
  e.status = 400;
  return e;
}

Error execution_error(std::string message) {
  Error e = make_error(ErrorKind::invalid_input, std::move(message));
  e.status = 422;
  return e;
}

// Prometheus rounds query times to the millisecond: whole seconds plus the rounded fraction.
std::optional<Ms> to_ms(double seconds) {
  if (!std::isfinite(seconds) || std::fabs(seconds) > max_abs_seconds) return std::nullopt;
  double whole = 0;
  const double fraction = std::modf(seconds, &whole);
  return static_cast<Ms>(whole) * 1000 + static_cast<Ms>(std::round(fraction * 1000));
}

double to_seconds(Ms ms) {
  return static_cast<double>(ms) / 1000.0;
}

// Points in (from, to].
std::span<const Point> window(const std::vector<Point>& points, Ms from, Ms to) {
  auto by_time = [](Ms t, const Point& p) { return t < p.t; };
  auto first = std::upper_bound(points.begin(), points.end(), from, by_time);
  auto last = std::upper_bound(first, points.end(), to, by_time);
  return {first, last};
}

// Prometheus' extrapolatedRate for float samples (promql/functions.go), counter variant.
std::optional<double> extrapolated_rate(std::span<const Point> s, Ms range_start, Ms range_end, Ms range,
                                        bool is_rate) {
  if (s.size() < 2) return std::nullopt;
  const std::size_t samples_minus_one = s.size() - 1;
  const Ms first_t = s.front().t, last_t = s.back().t;
  double result = s.back().v - s.front().v;
  double previous = s.front().v;
  for (const Point& p : s.subspan(1)) {
    if (p.v < previous) result += previous;  // counter reset: the counter restarted from zero
    previous = p.v;
  }
  double duration_to_start = static_cast<double>(first_t - range_start) / 1000;
  double duration_to_end = static_cast<double>(range_end - last_t) / 1000;
  const double sampled_interval = static_cast<double>(last_t - first_t) / 1000;
  const double average_interval = sampled_interval / static_cast<double>(samples_minus_one);
  // A sample missing where one would be expected means the series starts or ends inside the window:
  // extrapolate by half an interval only.
  const double extrapolation_threshold = average_interval * 1.1;
  double extrapolate_to_interval = sampled_interval;
  if (duration_to_start >= extrapolation_threshold) duration_to_start = average_interval / 2;
  if (result > 0 && s.front().v >= 0) {
    // A counter is never negative: do not extrapolate back past the point where it would have been zero.
    const double duration_to_zero = sampled_interval * (s.front().v / result);
    if (duration_to_zero < duration_to_start) duration_to_start = duration_to_zero;
  }
  extrapolate_to_interval += duration_to_start;
  if (duration_to_end >= extrapolation_threshold) duration_to_end = average_interval / 2;
  extrapolate_to_interval += duration_to_end;
  double factor = extrapolate_to_interval / sampled_interval;
  if (is_rate) factor /= static_cast<double>(range) / 1000;
  return result * factor;
}

// Prometheus' instantValue for irate: the last two samples, a decrease being a counter reset.
std::optional<double> instant_rate(std::span<const Point> s) {
  if (s.size() < 2) return std::nullopt;
  const Point& last = s[s.size() - 1];
  const Point& previous = s[s.size() - 2];
  const double delta = last.v < previous.v ? last.v : last.v - previous.v;
  const Ms interval = last.t - previous.t;
  if (interval == 0) return std::nullopt;
  return delta / (static_cast<double>(interval) / 1000);
}

// Kahan summation with Neumaier's improvement, as Prometheus' kahanSumInc.
void kahan_add(double inc, double& sum, double& c) {
  const double t = sum + inc;
  if (std::isinf(t)) {
    c = 0;
  } else if (std::fabs(sum) >= std::fabs(inc)) {
    c += (sum - t) + inc;
  } else {
    c += (inc - t) + sum;
  }
  sum = t;
}

struct Accumulator {
  double value = 0;
  double kahan = 0;
  double mean = 0;
  double count = 0;
  bool incremental_mean = false;

  void first(double v) {
    value = mean = v;
    count = 1;
  }

  void add(AggregateOp op, double v) {
    count += 1;
    switch (op) {
      case AggregateOp::sum:
        kahan_add(v, value, kahan);
        break;
      case AggregateOp::avg:
        if (!incremental_mean) {
          double sum = value, c = kahan;
          kahan_add(v, sum, c);
          if (!std::isinf(sum)) {
            value = sum;
            kahan = c;
            break;
          }
          // The sum would overflow: continue with an incremental mean.
          incremental_mean = true;
          mean = value / (count - 1);
          kahan /= count - 1;
        }
        {
          const double q = (count - 1) / count;
          double m = q * mean, c = q * kahan;
          kahan_add(v / count, m, c);
          mean = m;
          kahan = c;
        }
        break;
      case AggregateOp::min:
        if (value > v || std::isnan(value)) value = v;
        break;
      case AggregateOp::max:
        if (value < v || std::isnan(value)) value = v;
        break;
      case AggregateOp::count:
        break;
    }
  }

  double result(AggregateOp op) const {
    switch (op) {
      case AggregateOp::sum:
        return value + kahan;
      case AggregateOp::avg:
        return incremental_mean ? mean + kahan : value / count + kahan / count;
      case AggregateOp::count:
        return count;
      default:
        return value;
    }
  }
};

Labels group_labels(const Labels& labels, const Aggregate& agg) {
  Labels out;
  if (!agg.without) {
    for (const std::string& name : agg.grouping)
      if (auto it = labels.find(name); it != labels.end()) out.insert(*it);
    return out;
  }
  out = labels;
  out.erase(metric_name_label);
  for (const std::string& name : agg.grouping) out.erase(name);
  return out;
}

class Evaluator {
 public:
  Evaluator(const SeriesStore& store, Ms lookback) : store_(store), lookback_(lookback) {}

  // Fetches every selector of the expression for evaluations at times in [first, last].
  void prefetch(const Expr& expr, Ms first, Ms last) {
    if (auto* vs = std::get_if<VectorSelector>(&expr.node)) {
      fetch(*vs, first - lookback_, last);
    } else if (auto* ms = std::get_if<MatrixSelector>(&expr.node)) {
      fetch(ms->selector, first - ms->range_ms, last);
    } else if (auto* call = std::get_if<Call>(&expr.node)) {
      prefetch(*call->arg, first, last);
    } else {
      prefetch(*std::get<Aggregate>(expr.node).arg, first, last);
    }
  }

  Expected<Vector> instant(const Expr& expr, Ms t) {
    Vector out;
    if (auto* vs = std::get_if<VectorSelector>(&expr.node)) {
      for (const Fetched& f : data_[vs]) {
        auto w = window(f.points, t - lookback_, t);
        if (!w.empty()) out.push_back({&f.labels, w.back().v});
      }
      return checked(std::move(out));
    }
    if (auto* call = std::get_if<Call>(&expr.node)) {
      const auto& ms = std::get<MatrixSelector>(call->arg->node);
      for (const Fetched& f : data_[&ms.selector]) {
        auto w = window(f.points, t - ms.range_ms, t);
        std::optional<double> v =
            call->function == Function::irate
                ? instant_rate(w)
                : extrapolated_rate(w, t - ms.range_ms, t, ms.range_ms, call->function == Function::rate);
        if (v) out.push_back({&f.without_name, *v});
      }
      return checked(std::move(out));
    }
    if (std::holds_alternative<MatrixSelector>(expr.node))
      return bad_data(
          "a range vector is only allowed as a function argument or as the whole of an instant query");
    const auto& agg = std::get<Aggregate>(expr.node);
    auto input = instant(*agg.arg, t);
    if (!input) return input.error();
    std::map<Labels, Accumulator> groups;
    for (const Element& e : *input) {
      auto [it, fresh] = groups.try_emplace(group_labels(*e.labels, agg));
      if (fresh) {
        it->second.first(e.value);
      } else {
        it->second.add(agg.op, e.value);
      }
    }
    for (const auto& [labels, acc] : groups) out.push_back({intern(labels), acc.result(agg.op)});
    return out;
  }

  std::vector<Series> raw_samples(const MatrixSelector& ms, Ms t) {
    std::vector<Series> out;
    for (const Fetched& f : data_[&ms.selector]) {
      auto w = window(f.points, t - ms.range_ms, t);
      if (w.empty()) continue;
      Series s{f.labels, {}};
      for (const Point& p : w) s.samples.push_back({to_seconds(p.t), p.v});
      out.push_back(std::move(s));
    }
    return out;
  }

 private:
  // Asks the store once for samples in (from, to]; the window handed over is 1 ms wider on the right so that
  // a sample stored in seconds just below `to` after floating-point rounding is not lost.
  void fetch(const VectorSelector& vs, Ms from, Ms to) {
    auto& out = data_[&vs];
    for (Series& s : store_.select(vs.matchers, to_seconds(from), to_seconds(to + 1))) {
      Fetched f;
      for (auto& [name, value] : s.labels)
        if (!value.empty()) f.labels.emplace(name, value);
      f.without_name = f.labels;
      f.without_name.erase(metric_name_label);
      for (const Sample& sample : s.samples) {
        auto t = to_ms(sample.at);
        if (t && *t > from && *t <= to) f.points.push_back({*t, sample.value});
      }
      std::stable_sort(f.points.begin(), f.points.end(),
                       [](const Point& a, const Point& b) { return a.t < b.t; });
      // Two samples in one millisecond: Prometheus keeps the first it ingested.
      f.points.erase(std::unique(f.points.begin(), f.points.end(),
                                 [](const Point& a, const Point& b) { return a.t == b.t; }),
                     f.points.end());
      if (!f.points.empty()) out.push_back(std::move(f));
    }
  }

  const Labels* intern(const Labels& labels) { return &*interned_.insert(labels).first; }

  static Expected<Vector> checked(Vector v) {
    std::sort(v.begin(), v.end(), [](const Element& a, const Element& b) { return *a.labels < *b.labels; });
    for (std::size_t i = 1; i < v.size(); ++i)
      if (*v[i].labels == *v[i - 1].labels)
        return execution_error("vector cannot contain metrics with the same labelset");
    return v;
  }

  const SeriesStore& store_;
  Ms lookback_;
  std::unordered_map<const VectorSelector*, std::vector<Fetched>> data_;
  std::set<Labels> interned_;
};

std::optional<Ms> lookback_ms(const EvalOptions& options) {
  auto ms = to_ms(options.lookback_delta);
  if (!ms || *ms <= 0) return std::nullopt;
  return ms;
}

}  // namespace

const char* to_string(ResultType type) noexcept {
  return type == ResultType::vector ? "vector" : "matrix";
}

Expected<QueryResult> evaluate_instant(const Expr& expr, double time, const SeriesStore& store,
                                       const EvalOptions& options) {
  const auto t = to_ms(time);
  if (!t) return bad_data("invalid query time");
  const auto lookback = lookback_ms(options);
  if (!lookback) return bad_data("the lookback delta must be positive");
  Evaluator ev(store, *lookback);
  ev.prefetch(expr, *t, *t);
  QueryResult result;
  if (auto* ms = std::get_if<MatrixSelector>(&expr.node)) {
    result.type = ResultType::matrix;
    result.series = ev.raw_samples(*ms, *t);
    std::sort(result.series.begin(), result.series.end(),
              [](const Series& a, const Series& b) { return a.labels < b.labels; });
    return result;
  }
  auto v = ev.instant(expr, *t);
  if (!v) return v.error();
  for (const Element& e : *v) result.series.push_back(Series{*e.labels, {{to_seconds(*t), e.value}}});
  return result;
}

Expected<QueryResult> evaluate_range(const Expr& expr, double start, double end, double step,
                                     const SeriesStore& store, const EvalOptions& options) {
  const auto start_ms = to_ms(start), end_ms = to_ms(end);
  if (!start_ms) return bad_data("invalid start time");
  if (!end_ms) return bad_data("invalid end time");
  if (*end_ms < *start_ms) return bad_data("end timestamp must not be before start time");
  if (!(step > 0))
    return bad_data("zero or negative query resolution step widths are not accepted. Try a positive integer");
  if (std::floor(to_seconds(*end_ms - *start_ms) / step) > max_points_per_series)
    return bad_data(
        "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution "
        "(?step=XX)");
  if (is_range_vector(expr))
    return bad_data(
        "invalid expression type \"range vector\" for range query, must be Scalar or instant Vector");
  const auto lookback = lookback_ms(options);
  if (!lookback) return bad_data("the lookback delta must be positive");
  // Prometheus steps in whole milliseconds (the step truncated); a step below 1 ms still advances.
  const Ms step_ms =
      step >= 1e9 ? Ms{1'000'000'000'000} : std::max<Ms>(1, std::llround(step * 1e9) / 1'000'000);

  Evaluator ev(store, *lookback);
  ev.prefetch(expr, *start_ms, *end_ms);
  std::map<Labels, std::vector<Sample>> series;
  std::unordered_map<const Labels*, std::vector<Sample>*> slot;  // label set pointer -> its series
  for (Ms t = *start_ms; t <= *end_ms; t += step_ms) {
    auto v = ev.instant(expr, t);
    if (!v) return v.error();
    for (const Element& e : *v) {
      auto [it, fresh] = slot.try_emplace(e.labels, nullptr);
      if (fresh) it->second = &series[*e.labels];
      it->second->push_back({to_seconds(t), e.value});
    }
    if (*end_ms - t < step_ms) break;
  }
  QueryResult result;
  result.type = ResultType::matrix;
  for (auto& [labels, samples] : series) result.series.push_back(Series{labels, std::move(samples)});
  return result;
}

}  // namespace bootstorm::sim::prometheus
