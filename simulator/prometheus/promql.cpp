#include "simulator/prometheus/promql.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "simulator/prometheus/detail/promql_lexer.hpp"

namespace bootstorm::sim::prometheus {
namespace {

using namespace detail;

// Deep enough for any query a person writes; bounds the parser's and the evaluator's recursion.
constexpr int max_nesting = 200;
constexpr std::int64_t max_duration_ms = std::int64_t{1} << 53;

constexpr std::string_view subset_prefix = "bootstorm's lab Prometheus serves a subset of PromQL: ";
constexpr std::string_view subset_suffix =
    " not supported (it serves selectors, range selectors, rate, increase, irate, sum, avg, min, max, count)";

// Prometheus' functions and aggregations outside the subset, each between spaces: named as unsupported
// rather than unknown.
constexpr std::string_view prometheus_functions =
    " abs absent absent_over_time acos acosh asin asinh atan atanh avg_over_time ceil changes clamp"
    " clamp_max clamp_min cos cosh count_over_time day_of_month day_of_week day_of_year days_in_month"
    " deg delta deriv double_exponential_smoothing exp first_over_time floor histogram_avg"
    " histogram_count histogram_fraction histogram_quantile histogram_stddev histogram_stdvar"
    " histogram_sum holt_winters hour idelta info label_join label_replace last_over_time ln log10"
    " log2 mad_over_time max_over_time min_over_time minute month pi predict_linear present_over_time"
    " quantile_over_time rad resets round scalar sgn sin sinh sort sort_by_label sort_by_label_desc"
    " sort_desc sqrt stddev_over_time stdvar_over_time sum_over_time tan tanh time timestamp"
    " ts_of_first_over_time ts_of_last_over_time ts_of_max_over_time ts_of_min_over_time vector year ";
constexpr std::string_view other_aggregators =
    " stddev stdvar topk bottomk quantile count_values group limitk limit_ratio ";
constexpr std::string_view binary_keywords = " and or unless atan2 ";

class Parser {
 public:
  explicit Parser(std::string_view q) : lexer_(q) {}

  Expected<Expr> run() {
    if (peek().kind == Tok::end) {
      fail(peek().pos, "no expression found in input");
    } else if (auto e = expr()) {
      if (peek().kind == Tok::end) return std::move(*e);
      unexpected(peek());
    }
    Error error = make_error(ErrorKind::invalid_input,
                             fmt::format("parse error at char {}: {}", error_pos_ + 1, error_message_));
    error.status = 400;
    return error;
  }

 private:
  const Token& peek() {
    if (!peeked_) peeked_ = lexer_.next();
    return *peeked_;
  }

  Token next() {
    Token t = peeked_ ? std::move(*peeked_) : lexer_.next();
    peeked_.reset();
    return t;
  }

  bool peek_ident(std::string_view lowered) {
    return peek().kind == Tok::ident && lower(peek().text) == lowered;
  }

  std::nullopt_t fail(std::size_t pos, std::string message) {
    if (!failed_) {
      failed_ = true;
      error_pos_ = pos;
      error_message_ = std::move(message);
    }
    return std::nullopt;
  }

  std::nullopt_t subset(std::size_t pos, std::string_view what) {
    return fail(pos, std::string(subset_prefix) + std::string(what) + std::string(subset_suffix));
  }

  std::nullopt_t unexpected(const Token& t, std::string_view context = {}) {
    if (t.kind == Tok::invalid) return fail(t.pos, t.value);
    return fail(t.pos, "unexpected " + describe(t) + std::string(context));
  }

  bool expect(Tok kind, std::string_view context) {
    if (peek().kind == kind) {
      next();
      return true;
    }
    unexpected(peek(), context);
    return false;
  }

  std::optional<Expr> expr() {
    if (depth_ >= max_nesting) return fail(peek().pos, "expression nests too deeply");
    ++depth_;
    auto e = primary();
    --depth_;
    if (!e) return std::nullopt;
    const Token& t = peek();
    if (t.kind == Tok::binary_op || (t.kind == Tok::ident && one_of(binary_keywords, lower(t.text))))
      return subset(t.pos, "binary operators (" + go_quote(t.text) + ")");
    if (t.kind == Tok::ident && lower(t.text) == "offset") return subset(t.pos, "the offset modifier");
    if (t.kind == Tok::at) return subset(t.pos, "the @ modifier");
    if (t.kind == Tok::lbracket) return fail(t.pos, "ranges only allowed for vector selectors");
    return e;
  }

  std::optional<Expr> primary() {
    Token t = next();
    switch (t.kind) {
      case Tok::lparen: {
        auto inner = expr();
        if (!inner) return std::nullopt;
        if (peek().kind == Tok::end) return fail(t.pos, "unclosed left parenthesis");
        if (!expect(Tok::rparen, ", expected \")\"")) return std::nullopt;
        return inner;
      }
      case Tok::lbrace:
        return selector(t.pos, {});
      case Tok::ident:
        return identifier(t);
      case Tok::string:
        return subset(t.pos, "string literals");
      case Tok::number:
        return subset(t.pos, "number literals");
      case Tok::binary_op:
        if (t.text == "-" || t.text == "+") return subset(t.pos, "unary operators");
        return unexpected(t);
      default:
        return unexpected(t);
    }
  }

  std::optional<Expr> identifier(const Token& t) {
    const std::string name = lower(t.text);
    const bool grouping_follows = peek_ident("by") || peek_ident("without");
    const bool call_follows = peek().kind == Tok::lparen;
    if (call_follows || grouping_follows) {
      for (auto op :
           {AggregateOp::sum, AggregateOp::avg, AggregateOp::min, AggregateOp::max, AggregateOp::count})
        if (name == to_string(op)) return aggregation(t.pos, op);
      if (one_of(other_aggregators, name)) return subset(t.pos, "the " + name + " aggregation");
    }
    if (call_follows) {
      for (auto f : {Function::rate, Function::increase, Function::irate})
        if (t.text == to_string(f)) return call(t, f);
      if (one_of(prometheus_functions, t.text)) return subset(t.pos, "the function " + go_quote(t.text));
      return fail(t.pos, "unknown function with name " + go_quote(t.text));
    }
    if (name == "inf" || name == "nan") return subset(t.pos, "number literals");
    Matcher name_matcher{metric_name_label, MatchOp::equal, std::string(t.text), nullptr};
    if (peek().kind == Tok::lbrace) {
      next();
      return selector(t.pos, std::move(name_matcher));
    }
    return range_suffix(t.pos, VectorSelector{{std::move(name_matcher)}});
  }

  // After "{" (and the metric name, when one was written before it).
  std::optional<Expr> selector(std::size_t pos, std::optional<Matcher> name) {
    VectorSelector vs;
    if (name) vs.matchers.push_back(*name);
    while (peek().kind != Tok::rbrace) {
      Token label = next();
      if (label.kind != Tok::ident)
        return unexpected(label, " in label matching, expected label name or \"}\"");
      if (!valid_label_name(label.text)) return fail(label.pos, "invalid label name " + go_quote(label.text));
      Token op_token = next();
      MatchOp op = MatchOp::equal;
      switch (op_token.kind) {
        case Tok::eq:
          break;
        case Tok::neq:
          op = MatchOp::not_equal;
          break;
        case Tok::re:
          op = MatchOp::regex;
          break;
        case Tok::nre:
          op = MatchOp::not_regex;
          break;
        default:
          return unexpected(op_token, " in label matching, expected label matching operator");
      }
      Token value = next();
      if (value.kind != Tok::string) return unexpected(value, " in label matching, expected string");
      auto matcher = make_matcher(std::string(label.text), op, std::move(value.value));
      if (!matcher) return fail(value.pos, matcher.error().message);
      if (name && matcher->label == metric_name_label)
        return fail(pos, "metric name must not be set twice: " + go_quote(name->value) + " or " +
                             go_quote(matcher->value));
      vs.matchers.push_back(std::move(*matcher));
      if (peek().kind == Tok::comma) {
        next();
      } else if (peek().kind != Tok::rbrace) {
        return unexpected(peek(), " in label matching, expected \",\" or \"}\"");
      }
    }
    next();
    const bool selective =
        std::any_of(vs.matchers.begin(), vs.matchers.end(), [](const Matcher& m) { return !m.matches(""); });
    if (!selective) return fail(pos, "vector selector must contain at least one non-empty matcher");
    return range_suffix(pos, std::move(vs));
  }

  std::optional<Expr> range_suffix(std::size_t pos, VectorSelector vs) {
    if (peek().kind != Tok::lbracket) return Expr{std::move(vs), pos};
    next();
    Token d = lexer_.duration();
    if (d.text.empty()) return unexpected(peek(), ", expected duration");
    auto range = parse_duration_ms(d.text);
    if (!range) return fail(d.pos, "bad duration syntax: " + go_quote(d.text));
    if (*range == 0) return fail(d.pos, "range selector duration must be greater than zero");
    if (peek().kind == Tok::ident && peek().text.front() == ':') return subset(peek().pos, "subqueries");
    if (!expect(Tok::rbracket, ", expected \"]\"")) return std::nullopt;
    return Expr{MatrixSelector{std::move(vs), *range}, pos};
  }

  std::optional<std::vector<std::string>> grouping() {
    next();  // by | without
    if (!expect(Tok::lparen, " in grouping opts, expected \"(\"")) return std::nullopt;
    std::vector<std::string> labels;
    while (peek().kind != Tok::rparen) {
      Token label = next();
      if (label.kind != Tok::ident) return unexpected(label, " in grouping opts, expected label");
      if (!valid_label_name(label.text)) return fail(label.pos, "invalid label name " + go_quote(label.text));
      labels.emplace_back(label.text);
      if (peek().kind == Tok::comma) {
        next();
      } else if (peek().kind != Tok::rparen) {
        return unexpected(peek(), " in grouping opts, expected \",\" or \")\"");
      }
    }
    next();
    return labels;
  }

  // Arguments of a call or an aggregation after its "(": returns them all so that a wrong count is reported
  // as such.
  std::optional<std::vector<Expr>> arguments() {
    std::vector<Expr> args;
    if (peek().kind == Tok::rparen) {
      next();
      return args;
    }
    while (true) {
      auto arg = expr();
      if (!arg) return std::nullopt;
      args.push_back(std::move(*arg));
      if (peek().kind == Tok::rparen) {
        next();
        return args;
      }
      if (!expect(Tok::comma, ", expected \",\" or \")\"")) return std::nullopt;
    }
  }

  std::optional<Expr> aggregation(std::size_t pos, AggregateOp op) {
    Aggregate agg;
    agg.op = op;
    bool grouped = false;
    if (peek_ident("by") || peek_ident("without")) {
      agg.without = peek_ident("without");
      auto labels = grouping();
      if (!labels) return std::nullopt;
      agg.grouping = std::move(*labels);
      grouped = true;
    }
    const std::size_t open = peek().pos;
    if (!expect(Tok::lparen, ", expected \"(\"")) return std::nullopt;
    auto args = arguments();
    if (!args) return std::nullopt;
    if (args->empty()) return fail(open, "no arguments for aggregate expression provided");
    if (args->size() > 1)
      return fail(open,
                  fmt::format("wrong number of arguments for aggregate expression provided, expected 1, "
                              "got {}",
                              args->size()));
    if (peek_ident("by") || peek_ident("without")) {
      if (grouped) return fail(peek().pos, "aggregation must only contain one grouping clause");
      agg.without = peek_ident("without");
      auto labels = grouping();
      if (!labels) return std::nullopt;
      agg.grouping = std::move(*labels);
    }
    if (is_range_vector((*args)[0]))
      return fail((*args)[0].position,
                  "expected type instant vector in aggregation expression, got range vector");
    agg.arg = std::make_shared<const Expr>(std::move((*args)[0]));
    return Expr{std::move(agg), pos};
  }

  std::optional<Expr> call(const Token& name, Function f) {
    next();  // (
    auto args = arguments();
    if (!args) return std::nullopt;
    if (args->size() != 1)
      return fail(name.pos, fmt::format("expected 1 argument(s) in call to {}, got {}", go_quote(name.text),
                                        args->size()));
    if (!is_range_vector((*args)[0]))
      return fail((*args)[0].position, fmt::format("expected type range vector in call to function {}, got "
                                                   "instant vector",
                                                   go_quote(name.text)));
    return Expr{Call{f, std::make_shared<const Expr>(std::move((*args)[0]))}, name.pos};
  }

  Lexer lexer_;
  std::optional<Token> peeked_;
  bool failed_ = false;
  std::size_t error_pos_ = 0;
  std::string error_message_;
  int depth_ = 0;
};

std::string format_selector(const VectorSelector& vs) {
  std::string name;
  std::vector<const Matcher*> rest;
  const auto name_matchers = std::count_if(vs.matchers.begin(), vs.matchers.end(),
                                           [](const Matcher& m) { return m.label == metric_name_label; });
  for (const Matcher& m : vs.matchers) {
    const std::string lowered = lower(m.value);
    if (name_matchers == 1 && m.label == metric_name_label && m.op == MatchOp::equal &&
        valid_metric_name(m.value) && lowered != "inf" && lowered != "nan") {
      name = m.value;
    } else {
      rest.push_back(&m);
    }
  }
  if (!name.empty() && rest.empty()) return name;
  std::string out = name + "{";
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (i > 0) out += ", ";
    out += rest[i]->label + to_string(rest[i]->op) + go_quote(rest[i]->value);
  }
  return out + "}";
}

}  // namespace

bool is_range_vector(const Expr& expr) {
  return std::holds_alternative<MatrixSelector>(expr.node);
}

const char* to_string(Function f) noexcept {
  static constexpr const char* names[] = {"rate", "increase", "irate"};
  return names[static_cast<int>(f)];
}

const char* to_string(AggregateOp op) noexcept {
  static constexpr const char* names[] = {"sum", "avg", "min", "max", "count"};
  return names[static_cast<int>(op)];
}

Expected<Expr> parse_query(std::string_view query) {
  return Parser(query).run();
}

std::string format_expr(const Expr& expr) {
  if (auto* vs = std::get_if<VectorSelector>(&expr.node)) return format_selector(*vs);
  if (auto* ms = std::get_if<MatrixSelector>(&expr.node))
    return format_selector(ms->selector) + "[" + format_duration_ms(ms->range_ms) + "]";
  if (auto* call = std::get_if<Call>(&expr.node))
    return std::string(to_string(call->function)) + "(" + format_expr(*call->arg) + ")";
  const auto& agg = std::get<Aggregate>(expr.node);
  std::string out = to_string(agg.op);
  if (agg.without || !agg.grouping.empty()) {
    out += agg.without ? " without (" : " by (";
    for (std::size_t i = 0; i < agg.grouping.size(); ++i) out += (i > 0 ? ", " : "") + agg.grouping[i];
    out += ") ";
  }
  return out + "(" + format_expr(*agg.arg) + ")";
}

std::optional<std::int64_t> parse_duration_ms(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, std::int64_t>, 7> units = {{{"y", 365LL * 86400000},
                                                                                      {"w", 7LL * 86400000},
                                                                                      {"d", 86400000},
                                                                                      {"h", 3600000},
                                                                                      {"m", 60000},
                                                                                      {"s", 1000},
                                                                                      {"ms", 1}}};
  if (text.empty()) return std::nullopt;
  std::int64_t total = 0;
  std::size_t next_unit = 0, pos = 0;
  while (pos < text.size()) {
    std::int64_t n = 0;
    const std::size_t digits_start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      n = n * 10 + (text[pos++] - '0');
      if (n > max_duration_ms) return std::nullopt;
    }
    if (pos == digits_start) return std::nullopt;
    const std::size_t unit_start = pos;
    while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) ++pos;
    const std::string_view unit = text.substr(unit_start, pos - unit_start);
    std::size_t u = next_unit;
    while (u < units.size() && units[u].first != unit) ++u;
    if (u == units.size()) return std::nullopt;
    if (n > (max_duration_ms - total) / units[u].second) return std::nullopt;
    total += n * units[u].second;
    next_unit = u + 1;
  }
  return total;
}

std::string format_duration_ms(std::int64_t ms) {
  if (ms <= 0) return "0s";
  std::string out;
  auto emit = [&](const char* unit, std::int64_t mult, bool exact) {
    if (exact && ms % mult != 0) return;
    if (const std::int64_t v = ms / mult; v > 0) {
      out += std::to_string(v) + unit;
      ms -= v * mult;
    }
  };
  // Years and weeks only when they divide the rest exactly, as Prometheus prints them ("90d", not "12w6d").
  emit("y", 365LL * 86400000, true);
  emit("w", 7LL * 86400000, true);
  emit("d", 86400000, false);
  emit("h", 3600000, false);
  emit("m", 60000, false);
  emit("s", 1000, false);
  emit("ms", 1, false);
  return out;
}

std::string go_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace bootstorm::sim::prometheus
