#pragma once
// `bootstorm history RUN_DIR...`: a plan followed over its runs (results/history.hpp), rendered as
// history.md, history.html (self-contained, the look of report.html) and history.json. Reads each run's
// summary.json and nothing else, so runs of any bootstorm version that wrote schema 1 take part.
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "results/history.hpp"

namespace bootstorm::reports {

// Why a place given to history was not read.
struct SkippedRun {
  std::string where;
  std::string why;
};

struct HistoryRuns {
  std::vector<results::HistoryInput> runs;
  std::vector<SkippedRun> skipped;
};

// The runs named by `paths`, each one of:
//   a run directory (it holds summary.json);
//   a directory of run directories (a plan's `output`, e.g. runs/): its subdirectories that hold one;
//   a glob pattern (quoted, so that the shell leaves it), expanded in name order.
// A run directory without a readable schema-1 summary.json (an interrupted run, a run from a newer
// bootstorm) is skipped with the reason; a path that names nothing is an error.
Expected<HistoryRuns> find_history_runs(const std::vector<std::string>& paths);

// The same runs from the documents `report --index` wrote (quantile documents, one per run, scenario,
// repeat and milestone): what history reads from an index.
Expected<HistoryRuns> history_runs_from_documents(const nlohmann::json& documents, std::string_view where);

struct HistoryReportInput {
  std::vector<results::HistoryGroup> groups;
  std::vector<SkippedRun> skipped;
  results::HistoryOptions options;
  std::optional<double> fail_on_regression;  // the threshold given, as a fraction
  std::string generated_at;
};

std::string render_history_md(const HistoryReportInput& input);
std::string render_history_html(const HistoryReportInput& input);
nlohmann::ordered_json history_to_json(const HistoryReportInput& input);

// "116.2 ms", "34.18 s", "612 s": durations at the precision a history needs to show a change.
std::string history_duration(double seconds);
// One line per group for the terminal: its runs and its change points, or that it has none.
std::vector<std::string> history_lines(const std::vector<results::HistoryGroup>& groups);

struct HistoryCommand {
  std::filesystem::path out_dir = "history";
  results::HistoryOptions options;
  std::optional<double> fail_on_regression;  // fraction
  std::string generated_at;                  // empty: now
};
// The whole command once the runs are found: analyse, write the three files, print a line per group and
// each regression. Exit: 0, 1 when --fail-on-regression finds one, 2 when nothing can be read or written.
int run_history(const HistoryCommand& command, HistoryRuns runs, std::ostream& out, std::ostream& err);

}  // namespace bootstorm::reports
