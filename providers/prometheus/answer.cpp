// Decoding of the Prometheus query API's answers (see the header).
#include "providers/prometheus/answer.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace bootstorm::prometheus {

namespace {

using nlohmann::json;

// Sample values travel as strings ("1.5", "NaN", "+Inf") so that Go's floats survive JSON.
std::optional<double> sample_value(const json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "+Inf" || text == "Inf") return std::numeric_limits<double>::infinity();
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  double out = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return out;
}

std::optional<PromSample> pair_sample(const json& pair) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number()) return std::nullopt;
  auto value = sample_value(pair[1]);
  if (!value) return std::nullopt;
  return PromSample{pair[0].get<double>(), *value};
}

Error malformed(const std::string& where, const std::string& what) {
  return make_error(ErrorKind::protocol, fmt::format("The query API at {} answered {}.", where, what),
                    "Check that the telemetry endpoint is a Prometheus or Thanos Querier query API.");
}

}  // namespace

Expected<QueryAnswer> decode_answer(std::string_view body, const std::string& where) {
  const json document = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) return malformed(where, "a body that is not JSON");
  // value() would throw on a "status" that is not a string: read it only when it is one.
  const auto status_it = document.find("status");
  const std::string status =
      status_it != document.end() && status_it->is_string() ? status_it->get<std::string>() : std::string();
  if (status == "error") {
    const std::string type = document.contains("errorType") && document["errorType"].is_string()
                                 ? document["errorType"].get<std::string>()
                                 : "unknown";
    const std::string message = document.contains("error") && document["error"].is_string()
                                    ? document["error"].get<std::string>()
                                    : "";
    return make_error(ErrorKind::api,
                      fmt::format("The query API at {} refused the query ({}): {}.", where, type, message),
                      "The query is bootstorm's own: report it with the message above.");
  }
  if (status != "success") return malformed(where, "JSON without \"status\": \"success\"");
  if (!document.contains("data") || !document["data"].is_object()) return malformed(where, "no \"data\"");
  const json& data = document["data"];
  QueryAnswer answer;
  if (!data.contains("resultType") || !data["resultType"].is_string())
    return malformed(where, "no resultType");
  answer.result_type = data["resultType"].get<std::string>();
  if (document.contains("warnings") && document["warnings"].is_array()) {
    for (const auto& w : document["warnings"]) {
      if (w.is_string()) answer.warnings.push_back(w.get<std::string>());
    }
  }
  if (!data.contains("result")) return malformed(where, "no result");
  const json& result = data["result"];
  if (answer.result_type == "scalar" || answer.result_type == "string") {
    if (answer.result_type == "scalar") {
      auto sample = pair_sample(result);
      if (!sample) return malformed(where, "a scalar that is not [time, \"value\"]");
      answer.series.push_back({{}, {*sample}});
    }
    return answer;
  }
  if (answer.result_type != "vector" && answer.result_type != "matrix") {
    return malformed(where, fmt::format("the unknown resultType \"{}\"", answer.result_type));
  }
  if (!result.is_array()) return malformed(where, "a result that is not a list");
  for (const auto& item : result) {
    if (!item.is_object() || !item.contains("metric") || !item["metric"].is_object()) {
      return malformed(where, "a series without its labels");
    }
    PromSeries series;
    for (const auto& [name, value] : item["metric"].items()) {
      if (!value.is_string())
        return malformed(where, fmt::format("the label {} with a value that is not a string", name));
      series.labels.emplace(name, value.get<std::string>());
    }
    if (answer.result_type == "vector") {
      auto sample = item.contains("value") ? pair_sample(item["value"]) : std::nullopt;
      if (!sample) return malformed(where, "a vector sample that is not [time, \"value\"]");
      series.samples.push_back(*sample);
    } else {
      if (!item.contains("values") || !item["values"].is_array())
        return malformed(where, "a matrix series without values");
      for (const auto& pair : item["values"]) {
        auto sample = pair_sample(pair);
        if (!sample) return malformed(where, "a matrix sample that is not [time, \"value\"]");
        if (!series.samples.empty() && sample->at <= series.samples.back().at) {
          return malformed(where, "a matrix series out of time order");
        }
        series.samples.push_back(*sample);
      }
    }
    answer.series.push_back(std::move(series));
  }
  return answer;
}

}  // namespace bootstorm::prometheus
