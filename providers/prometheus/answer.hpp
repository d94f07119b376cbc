#pragma once
// The Prometheus HTTP query API's answers as bootstorm reads them (Thanos Querier answers the same): a
// vector, a matrix, a scalar, or an error with its type. Pure decoding: no I/O, fuzzed
// (tests/fuzz/prometheus_answer).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::prometheus {

struct PromSample {
  double at = 0;  // unix seconds
  double value = 0;
};

struct PromSeries {
  std::map<std::string, std::string> labels;  // "__name__" kept where the answer has it
  std::vector<PromSample> samples;            // a vector's or scalar's one sample; a matrix's in time order
};

struct QueryAnswer {
  std::string result_type;  // vector, matrix, scalar, string
  std::vector<PromSeries> series;
  std::vector<std::string> warnings;  // the answer's "warnings" (partial data from a querier)
};

// Decodes an answer body. An error answer ({"status":"error"}) or a body that is not the API's JSON becomes
// an Error naming `where` (the endpoint) and quoting Prometheus' own errorType and message.
Expected<QueryAnswer> decode_answer(std::string_view body, const std::string& where);

}  // namespace bootstorm::prometheus
