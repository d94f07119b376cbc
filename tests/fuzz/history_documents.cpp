// Fuzz target: what `bootstorm history --index` reads from an index server (reports/history_load.cpp), then
// the history built from it and its three renderings. Whatever the server answers, the reader either takes
// runs or leaves documents out with a reason; nothing it takes may crash the statistics or the renderers.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "reports/history.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto documents = nlohmann::json::parse(text, nullptr, false);
  if (documents.is_discarded()) return 0;
  auto runs = bootstorm::reports::history_runs_from_documents(documents, "fuzz");
  if (!runs) {
    if (runs.error().kind != bootstorm::ErrorKind::invalid_input) std::abort();
    return 0;
  }
  bootstorm::reports::HistoryReportInput input;
  input.options.change_points.permutations = 99;
  input.groups = bootstorm::results::build_history(runs->runs, input.options);
  input.skipped = runs->skipped;
  input.fail_on_regression = 0.1;
  input.generated_at = "2026-12-04T00:00:00.000Z";
  const std::string md = bootstorm::reports::render_history_md(input);
  const std::string html = bootstorm::reports::render_history_html(input);
  const std::string json = bootstorm::reports::history_to_json(input).dump();
  if (md.empty() || html.empty() || json.empty()) std::abort();
  for (const auto& group : input.groups)
    for (const auto& cp : group.change_points)
      if (cp.index == 0 || cp.index >= group.points.size()) std::abort();  // runs on both sides of a change
  return 0;
}
