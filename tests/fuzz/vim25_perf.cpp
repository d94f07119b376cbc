// Fuzz target: PerformanceManager answers (vim25 SOAP), through the XML document and the SOAP framing into
// the QueryPerf decoder, the QueryPerfCounter decoder, and the perfCounter property of a RetrievePropertiesEx
// answer. An answer a decoder refuses is fine; a crash, a sanitizer report or an exception is a bug.
//
// Input: one HTTP body. A first line of three digits is the HTTP status (else 200).
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/performance.hpp"
#include "protocol/vim25/soap.hpp"

namespace {

using namespace bootstorm::vsphere::vim25;

void check(const PerfEntityMetric& metric) {
  // What the telemetry source does with an answer: index the series by sample.
  std::size_t values = 0;
  for (const PerfSeries& s : metric.series)
    for (std::size_t i = 0; i < s.values.size() && i < metric.samples.size(); ++i) values += s.values[i] < 0;
  (void)values;
  (void)metric.entity.str();
}

void fuzz_one(std::string_view input) {
  int status = 200;
  const auto newline = input.find('\n');
  if (newline == 3 && input.substr(0, 3).find_first_not_of("0123456789") == std::string_view::npos) {
    status = (input[0] - '0') * 100 + (input[1] - '0') * 10 + (input[2] - '0');
    input.remove_prefix(4);
  }
  auto reply = SoapReply::parse(status, input, "fuzz");
  if (!reply || reply->is_fault()) return;
  if (auto metrics = decode_query_perf(reply->response()))
    for (const PerfEntityMetric& m : *metrics) check(m);
  (void)decode_query_perf_counter(reply->response());
  if (auto result = decode_retrieve_result(reply->response())) {
    for (const ObjectContent& o : result->objects)
      if (const Value* list = o.prop("perfCounter")) (void)decode_perf_counters(*list);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz_one(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
