#pragma once
// The PromQL subset the lab's Prometheus serves, parsed to an AST.
//
// Grammar (whitespace between tokens; keywords and aggregation names case-insensitive, functions not):
//   expr        = selector [ "[" duration "]" ] | function "(" expr ")" | aggregation | "(" expr ")"
//   selector    = metric_name [ "{" matchers "}" ] | "{" matchers "}"
//   matchers    = [ matcher { "," matcher } [ "," ] ]
//   matcher     = label_name ( "=" | "!=" | "=~" | "!~" ) string
//   aggregation = aggregator [ grouping ] "(" expr ")" [ grouping ]
//   grouping    = ( "by" | "without" ) "(" [ label_name { "," label_name } [ "," ] ] ")"
//   function    = "rate" | "increase" | "irate"           (their argument is a range selector)
//   aggregator  = "sum" | "avg" | "min" | "max" | "count"  (their argument is an instant vector)
//   duration    = one or more <integer><unit>, units in the order y w d h m s ms ("1m30s")
//   string      = "..." or '...' with Go's backslash escapes, or `...` taken literally
// A selector needs a metric name or a matcher that does not match "", as Prometheus requires. Number
// literals, strings as expressions, unary and binary operators, offset, @, subqueries and Prometheus
// functions and aggregations outside the subset are errors that say so.
//
// Errors are invalid_input with status 400 and read like Prometheus' "parse error at char 12: unexpected
// ...", the char being the 1-based byte offset in the query.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/expected.hpp"
#include "simulator/prometheus/series_store.hpp"

namespace bootstorm::sim::prometheus {

struct Expr;

// `metric{...}`: the metric name, when written in front of the braces, is also a `__name__ =` matcher.
struct VectorSelector {
  std::vector<Matcher> matchers;
};

// `selector[range]`.
struct MatrixSelector {
  VectorSelector selector;
  std::int64_t range_ms = 0;
};

enum class Function { rate, increase, irate };

struct Call {
  Function function = Function::rate;
  std::shared_ptr<const Expr> arg;  // a MatrixSelector
};

enum class AggregateOp { sum, avg, min, max, count };

struct Aggregate {
  AggregateOp op = AggregateOp::sum;
  bool without = false;               // `without (...)`, else `by (...)` (empty: one group of all)
  std::vector<std::string> grouping;  // label names as written
  std::shared_ptr<const Expr> arg;    // an instant vector expression
};

struct Expr {
  std::variant<VectorSelector, MatrixSelector, Call, Aggregate> node;
  std::size_t position = 0;  // 0-based byte offset of the expression in the query
};

// True for a MatrixSelector (a range vector), false for the instant vector expressions.
bool is_range_vector(const Expr& expr);

const char* to_string(Function f) noexcept;
const char* to_string(AggregateOp op) noexcept;

Expected<Expr> parse_query(std::string_view query);

// Canonical PromQL text of the expression (`sum by (node) (rate(x{a="b"}[30s]))`); parses back to the same
// AST.
std::string format_expr(const Expr& expr);

// Prometheus durations: one or more <integer><unit>, units y w d h m s ms in that order, each at most once
// ("1m30s", "1h", "0s"). nullopt when malformed or beyond 2^53 milliseconds.
std::optional<std::int64_t> parse_duration_ms(std::string_view text);

// The shortest Prometheus rendering: 90000 -> "1m30s", 0 -> "0s".
std::string format_duration_ms(std::int64_t ms);

// Text quoted as Go's strconv.Quote (and %q) writes it, as Prometheus quotes text in its error messages:
// parses back to the same bytes, and nothing in it garbles the message.
std::string go_quote(std::string_view s);

}  // namespace bootstorm::sim::prometheus
