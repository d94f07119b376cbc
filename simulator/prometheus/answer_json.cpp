#include "simulator/prometheus/answer_json.hpp"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>

#include "common/json_string.hpp"
#include "common/rfc3339.hpp"

namespace bootstorm::sim::prometheus {
namespace {

Error bad_data(std::string message) {
  Error e = make_error(ErrorKind::invalid_input, std::move(message));
  e.status = 400;
  return e;
}

Error invalid_parameter(std::string_view name, const Error& why) {
  return bad_data(fmt::format("invalid parameter \"{}\": {}", name, why.message));
}

// Go's strconv.ParseFloat for the decimal forms a client sends (an optional sign, digits, a fraction, an
// exponent). Non-finite values are refused: they are no time and no step.
std::optional<double> parse_float(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

void append_labels(std::string& out, const Labels& labels) {
  out += '{';
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += json_quoted(name, JsonHtml::escape);
    out += ':';
    out += json_quoted(value, JsonHtml::escape);
  }
  out += '}';
}

void append_point(std::string& out, const Sample& s) {
  out += '[';
  out += format_timestamp_ms(std::llround(s.at * 1000));
  out += ",\"";
  out += format_sample_value(s.value);
  out += "\"]";
}

}  // namespace

std::string format_sample_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Both forms start from the shortest round-trip digits, which std::to_chars' scientific format gives.
  // Its fixed format is no substitute: it writes the exact binary value of large numbers
  // (1e20 + 1e4 -> "100000000000000016384"), where Go writes the shortest digits padded with zeros.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
  const double magnitude = std::fabs(v);
  if (magnitude != 0 && (magnitude < 1e-6 || magnitude >= 1e21)) return std::string(sci);
  std::string out;
  if (sci.front() == '-') {
    out += '-';
    sci.remove_prefix(1);
  }
  const std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  int exponent = 0;
  std::string_view exp_text = sci.substr(e + 1);
  const bool negative_exp = exp_text.front() == '-';
  exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  const long point = 1 + (negative_exp ? -exponent : exponent);  // digits before the decimal point
  const long n = static_cast<long>(digits.size());
  if (point <= 0) {
    out += "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
  } else if (point >= n) {
    out += digits + std::string(static_cast<std::size_t>(point - n), '0');
  } else {
    out += digits.substr(0, static_cast<std::size_t>(point)) + "." +
           digits.substr(static_cast<std::size_t>(point));
  }
  return out;
}

std::string format_timestamp_ms(std::int64_t ms) {
  std::string out;
  std::uint64_t magnitude = static_cast<std::uint64_t>(ms);
  if (ms < 0) {
    out += '-';
    magnitude = 0 - magnitude;
  }
  out += std::to_string(magnitude / 1000);
  if (const auto fraction = magnitude % 1000; fraction != 0) out += fmt::format(".{:03}", fraction);
  return out;
}

Expected<double> parse_time_param(std::string_view text) {
  if (auto v = parse_float(text); v && std::fabs(*v) <= 1e13) {
    double whole = 0;
    const double fraction = std::modf(*v, &whole);
    const auto ms =
        static_cast<std::int64_t>(whole) * 1000 + static_cast<std::int64_t>(std::round(fraction * 1000));
    return static_cast<double>(ms) / 1000;
  }
  if (auto t = parse_rfc3339(text)) {
    const auto ms = std::chrono::floor<std::chrono::milliseconds>(t->time_since_epoch()).count();
    return static_cast<double>(ms) / 1000;
  }
  return bad_data(fmt::format("cannot parse {} to a valid timestamp", go_quote(text)));
}

Expected<double> parse_duration_param(std::string_view text) {
  if (auto v = parse_float(text)) {
    if (std::fabs(*v * 1e9) >= 9.2e18)
      return bad_data(fmt::format("cannot parse {} to a valid duration. It overflows int64", go_quote(text)));
    return *v;
  }
  if (auto ms = parse_duration_ms(text)) return static_cast<double>(*ms) / 1000;
  return bad_data(fmt::format("cannot parse {} to a valid duration", go_quote(text)));
}

std::string render_result(const QueryResult& result) {
  std::string out = R"({"status":"success","data":{"resultType":")";
  out += to_string(result.type);
  out += R"(","result":[)";
  bool first = true;
  for (const Series& s : result.series) {
    if (!first) out += ',';
    first = false;
    out += R"({"metric":)";
    append_labels(out, s.labels);
    if (result.type == ResultType::vector) {
      out += R"(,"value":)";
      if (s.samples.empty()) {
        out += "null";
      } else {
        append_point(out, s.samples.front());
      }
    } else {
      out += R"(,"values":[)";
      for (std::size_t i = 0; i < s.samples.size(); ++i) {
        if (i > 0) out += ',';
        append_point(out, s.samples[i]);
      }
      out += ']';
    }
    out += '}';
  }
  return out + "]}}";
}

std::string render_error(const Error& error) {
  const char* type = error.status == 422 ? "execution" : "bad_data";
  return fmt::format(R"({{"status":"error","errorType":"{}","error":{}}})", type,
                     json_quoted(error.message, JsonHtml::escape));
}

std::string answer_query(const QueryParams& params, const SeriesStore& store, int& http_status) {
  auto value = [&](const char* name) -> std::string_view {
    auto it = params.values.find(name);
    return it == params.values.end() ? std::string_view() : std::string_view(it->second);
  };
  auto fail = [&](const Error& e) {
    http_status = e.status == 422 ? 422 : 400;
    return render_error(e);
  };
  Expected<QueryResult> result = bad_data("no result");
  if (params.endpoint == QueryEndpoint::instant) {
    double time = params.now;
    if (!value("time").empty()) {
      auto t = parse_time_param(value("time"));
      if (!t) return fail(invalid_parameter("time", t.error()));
      time = *t;
    }
    auto expr = parse_query(value("query"));
    if (!expr) return fail(invalid_parameter("query", expr.error()));
    result = evaluate_instant(*expr, time, store, params.options);
  } else {
    auto start = parse_time_param(value("start"));
    if (!start) return fail(invalid_parameter("start", start.error()));
    auto end = parse_time_param(value("end"));
    if (!end) return fail(invalid_parameter("end", end.error()));
    if (*end < *start) return fail(bad_data("end timestamp must not be before start time"));
    auto step = parse_duration_param(value("step"));
    if (!step) return fail(invalid_parameter("step", step.error()));
    // Prometheus compares in whole nanoseconds: (end - start) / step, integer division.
    // A step beyond int64 nanoseconds (about 292 years) is one point whatever the span: capped, not cast.
    const double step_ns_f = *step * 1e9;
    const auto step_ns =
        step_ns_f >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(step_ns_f);
    if (step_ns <= 0)
      return fail(
          bad_data("zero or negative query resolution step widths are not accepted. Try a positive integer"));
    const std::int64_t span_ms = std::llround(*end * 1000) - std::llround(*start * 1000);
    const bool too_many =
        span_ms <= 9'000'000'000'000
            ? span_ms * 1'000'000 / step_ns > static_cast<std::int64_t>(max_points_per_series)
            : static_cast<long double>(span_ms) * 1e6L / static_cast<long double>(step_ns) >=
                  max_points_per_series + 1;
    if (too_many)
      return fail(bad_data(
          "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution "
          "(?step=XX)"));
    auto expr = parse_query(value("query"));
    if (!expr) return fail(invalid_parameter("query", expr.error()));
    if (is_range_vector(*expr))
      return fail(
          invalid_parameter("query", bad_data("invalid expression type \"range vector\" for range query, "
                                              "must be Scalar or instant Vector")));
    result = evaluate_range(*expr, *start, *end, static_cast<double>(step_ns) / 1e9, store, params.options);
  }
  if (!result) return fail(result.error());
  http_status = 200;
  return render_result(*result);
}

}  // namespace bootstorm::sim::prometheus
