// Fuzz target: the Prometheus query API's answers as bootstorm decodes them, then made into a storm's storage
// telemetry (every metric answered with the decoded matrix). Property beyond "no crash": a decoded matrix's
// samples are in time order, and the totals are never negative for counters that only grow or reset; the
// per-node sums (a range query's answer) never count a negative amount.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "providers/prometheus/answer.hpp"
#include "providers/prometheus/storage_window.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace bootstorm::prometheus;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto answer = decode_answer(body, "https://fuzz");
  if (!answer) return 0;
  for (const auto& series : answer->series) {
    for (std::size_t i = 1; i < series.samples.size() && answer->result_type == "matrix"; ++i) {
      if (!(series.samples[i - 1].at < series.samples[i].at)) std::abort();
    }
  }
  std::array<QueryAnswer, 6> answers;
  answers.fill(*answer);
  bootstorm::api::TelemetryRequest request{1e9, 1e9 + 600, {}, {}, {}};
  auto report = storage_report(answers, request, std::nullopt);
  if (report) {
    for (const auto& total : report->totals) {
      if (total.read_bytes < 0 && total.read_bytes == total.read_bytes) {
        bool finite_input = true;
        for (const auto& s : answer->series) {
          for (const auto& p : s.samples) finite_input = finite_input && p.value >= 0 && p.value < 1e300;
        }
        if (finite_input) std::abort();
      }
    }
  }
  const NodeSumGrid grid = node_sum_grid(request, 15);
  auto sums = node_sum_report(answers, request, grid, 15);
  if (sums) {
    for (const auto& total : sums->totals) {
      if (total.read_bytes < 0 || total.read_ios < 0 || total.write_bytes < 0) std::abort();
    }
  }
  return 0;
}
