// `bootstorm compare`, loading: a run directory's summary.json and the boot times of its vms.csv.
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "reports/compare.hpp"
#include "reports/csv.hpp"
#include "results/summary_json.hpp"

namespace bootstorm::reports {
namespace {

Expected<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    return make_error(
        ErrorKind::invalid_input, fmt::format("cannot read {}", path.string()),
        "pass a run directory written by `bootstorm run` (it contains summary.json and vms.csv)");
  }
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

Expected<void> fill_boot_times_from_csv(std::string_view csv_text, results::Summary& summary) {
  auto rows = parse_csv(csv_text);
  if (!rows) return rows.error();
  if (rows->empty())
    return make_error(ErrorKind::invalid_input, "vms.csv is empty",
                      "re-render the run with `bootstorm report RUN`");
  const auto& header = rows->front();
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* required : {"scenario", "repeat", "vm"}) {
    if (!col.count(required))
      return make_error(ErrorKind::invalid_input, fmt::format("vms.csv has no \"{}\" column", required),
                        "this is not a vms.csv written by bootstorm");
  }
  for (auto& sc : summary.scenarios) sc.boot_times_s.clear();
  for (std::size_t r = 1; r < rows->size(); ++r) {
    const auto& row = (*rows)[r];
    auto cell = [&](const std::string& name) -> std::string {
      auto it = col.find(name);
      return it != col.end() && it->second < row.size() ? row[it->second] : std::string();
    };
    const std::string scenario = cell("scenario");
    int repeat = 1;
    try {
      repeat = std::stoi(cell("repeat"));
    } catch (const std::exception&) {
      return make_error(ErrorKind::invalid_input,
                        fmt::format("vms.csv line {}: repeat is not a number", r + 1));
    }
    auto sc = std::find_if(summary.scenarios.begin(), summary.scenarios.end(),
                           [&](const auto& s) { return s.name == scenario && s.repeat == repeat; });
    if (sc == summary.scenarios.end()) {
      return make_error(
          ErrorKind::invalid_input,
          fmt::format("vms.csv line {}: scenario \"{}\" repeat {} is not in summary.json", r + 1, scenario,
                      repeat),
          "summary.json and vms.csv come from different runs; re-render with `bootstorm report RUN`");
    }
    const std::string column = sc->ready_milestone + "_s";
    if (!col.count(column)) {
      return make_error(ErrorKind::invalid_input,
                        fmt::format("vms.csv has no column \"{}\" for the ready milestone \"{}\"", column,
                                    sc->ready_milestone),
                        "summary.json must name the scenario's readyMilestone");
    }
    const std::string value = cell(column);
    if (value.empty()) continue;
    try {
      sc->boot_times_s.push_back(std::stod(value));
    } catch (const std::exception&) {
      return make_error(ErrorKind::invalid_input,
                        fmt::format("vms.csv line {}: {} \"{}\" is not a number", r + 1, column, value));
    }
  }
  return {};
}

Expected<LoadedRun> load_run(const std::filesystem::path& dir) {
  LoadedRun run;
  run.dir = dir;
  auto summary_text = read_text(dir / "summary.json");
  if (!summary_text) return summary_text.error();
  nlohmann::json doc = nlohmann::json::parse(*summary_text, nullptr, false);
  if (doc.is_discarded()) {
    return make_error(ErrorKind::invalid_input,
                      fmt::format("{} is not valid JSON", (dir / "summary.json").string()),
                      "re-render the run with `bootstorm report RUN`");
  }
  auto summary = results::summary_from_json(doc);
  if (!summary) {
    auto e = summary.error();
    e.message = fmt::format("{}: {}", dir.string(), e.message);
    return e;
  }
  run.summary = std::move(summary.value());
  auto csv_text = read_text(dir / "vms.csv");
  if (!csv_text) return csv_text.error();
  if (auto r = fill_boot_times_from_csv(*csv_text, run.summary); !r) {
    auto e = r.error();
    e.message = fmt::format("{}: {}", (dir / "vms.csv").string(), e.message);
    return e;
  }
  return run;
}

}  // namespace bootstorm::reports
