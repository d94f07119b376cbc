#pragma once
// The Prometheus HTTP query API's answers (/api/v1/query and /api/v1/query_range), byte for byte as
// Prometheus writes them:
//  {"status":"success","data":{"resultType":"vector","result":[{"metric":{..},"value":[<t>,"<v>"]}]}}
//  {"status":"success","data":{"resultType":"matrix","result":[{"metric":{..},"values":[[<t>,"<v>"],..]}]}}
//  {"status":"error","errorType":"bad_data","error":"..."}      (HTTP 400; "execution" with 422)
// Timestamps are JSON numbers in unix seconds with the milliseconds written out ("1700000000.120"). Values
// are strings as Prometheus' jsonutil.MarshalFloat writes them: Go's strconv.FormatFloat(v, 'f', -1, 64) (the
// shortest decimal that reads back to the same double, no exponent), except that magnitudes below 1e-6 or
// from 1e21 up take the 'e' form ("1e-07", "1e+21"); "NaN", "+Inf", "-Inf".
//
// Parameters are read as Prometheus reads them: times as unix seconds (a float, the fraction rounded to the
// millisecond) or RFC 3339, the step as float seconds or a duration ("15s"), with the same error wording
// ("invalid parameter \"start\": cannot parse \"x\" to a valid timestamp").
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/expected.hpp"
#include "simulator/prometheus/evaluate.hpp"
#include "simulator/prometheus/series_store.hpp"

namespace bootstorm::sim::prometheus {

enum class QueryEndpoint {
  instant,  // /api/v1/query: query, time (default: now)
  range,    // /api/v1/query_range: query, start, end, step
};

struct QueryParams {
  QueryEndpoint endpoint = QueryEndpoint::instant;
  // The decoded URL and form parameters; a missing one reads as "" as Go's FormValue does. Others (timeout,
  // stats, limit, ...) are ignored.
  std::map<std::string, std::string> values;
  double now = 0;  // unix seconds: the instant query's time when `time` is absent
  EvalOptions options;
};

// The answer's body; http_status is set to 200, 400 (bad_data) or 422 (execution).
std::string answer_query(const QueryParams& params, const SeriesStore& store, int& http_status);

// {"status":"success","data":{"resultType":...,"result":[...]}}.
std::string render_result(const QueryResult& result);

// {"status":"error","errorType":"bad_data"|"execution","error":...}: "execution" for an error with status
// 422, "bad_data" otherwise. The message is Error::message.
std::string render_error(const Error& error);

// 0.1 -> "0.1", 1e20 -> "100000000000000000000", 1e21 -> "1e+21", 1.5e-7 -> "1.5e-07", NaN -> "NaN".
std::string format_sample_value(double v);

// Milliseconds since the epoch as Prometheus writes a timestamp: 1700000000120 -> "1700000000.120",
// 1700000000000 -> "1700000000".
std::string format_timestamp_ms(std::int64_t ms);

// A time parameter: unix seconds ("1700000000.5", the fraction rounded to the millisecond) or RFC 3339.
// Returns unix seconds; the error reads "cannot parse \"x\" to a valid timestamp".
Expected<double> parse_time_param(std::string_view text);

// A step or duration parameter: float seconds ("15", "0.5") or a Prometheus duration ("15s", "1m30s").
// Returns seconds; the error reads "cannot parse \"x\" to a valid duration".
Expected<double> parse_duration_param(std::string_view text);

}  // namespace bootstorm::sim::prometheus
