#pragma once
// Evaluation of the PromQL subset (promql.hpp) over a SeriesStore, with the semantics of Prometheus 3:
//
// * Times are whole milliseconds, as in Prometheus: query times and sample times are rounded to the
//   millisecond before anything is compared.
// * An instant vector selector at time T takes, per series, the latest sample in (T - lookback_delta, T] and
//   stamps it T. A range selector `x[r]` at T takes the samples in (T - r, T]. Both windows are left-open, as
//   in Prometheus 3 (Prometheus 2 included a sample exactly at T - r).
// * rate and increase are Prometheus' extrapolatedRate: counter resets are added back, at least two samples
//   are needed, the result is extrapolated to the window's edges when the first or last sample is within 1.1
//   average sample intervals of them (else by half an interval), and never back past the counter's zero.
//   irate uses the last two samples. All three drop __name__.
// * sum, avg, min, max, count drop __name__ and group by the `by` labels (or all but the `without` ones). sum
//   and avg use Kahan-Neumaier summation as Prometheus does; avg switches to an incremental mean when the sum
//   would overflow.
// * Two elements of one instant vector with the same labels are an execution error ("vector cannot contain
//   metrics with the same labelset").
//
// The store is asked once per selector, for the whole window the query needs (every step of a range query).
// Errors are invalid_input with the HTTP status Prometheus would answer: 400 for a bad query or bad
// parameters, 422 for an execution error.
#include <vector>

#include "common/expected.hpp"
#include "simulator/prometheus/promql.hpp"
#include "simulator/prometheus/series_store.hpp"

namespace bootstorm::sim::prometheus {

struct EvalOptions {
  double lookback_delta = 300;  // seconds: how old a sample an instant selector still takes
};

// Prometheus' cap on the points of a range query per series: (end - start) / step may not exceed it.
inline constexpr double max_points_per_series = 11000;

enum class ResultType { vector, matrix };

const char* to_string(ResultType type) noexcept;  // "vector", "matrix"

struct QueryResult {
  ResultType type = ResultType::vector;
  // Sorted by labels. vector: one sample per series, at the query time. matrix: the raw samples of a range
  // selector (instant query) or one sample per step at which the series had a value (range query).
  std::vector<Series> series;
};

// An instant query at `time` (unix seconds). A range selector as the whole expression gives a matrix.
Expected<QueryResult> evaluate_instant(const Expr& expr, double time, const SeriesStore& store,
                                       const EvalOptions& options = {});

// A range query: the expression (an instant vector) evaluated at start, start + step, ... <= end; always a
// matrix. step > 0, end >= start and at most max_points_per_series steps, or an error with Prometheus'
// wording.
Expected<QueryResult> evaluate_range(const Expr& expr, double start, double end, double step,
                                     const SeriesStore& store, const EvalOptions& options = {});

}  // namespace bootstorm::sim::prometheus
