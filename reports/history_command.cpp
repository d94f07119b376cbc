// `bootstorm history`, the command once its runs are found: analyse, write, say.
#include <fmt/format.h>

#include <ostream>

#include "reports/compare.hpp"
#include "reports/detail/format.hpp"
#include "reports/history.hpp"

namespace bootstorm::reports {

int run_history(const HistoryCommand& command, HistoryRuns runs, std::ostream& out, std::ostream& err) {
  for (const auto& s : runs.skipped)
    err << "bootstorm history: left out " << s.where << ": " << s.why << "\n";
  if (runs.runs.empty()) {
    err << "bootstorm history: no run to follow (every place given was left out)\n";
    return 2;
  }
  HistoryReportInput input;
  input.groups = results::build_history(runs.runs, command.options);
  input.skipped = std::move(runs.skipped);
  input.options = command.options;
  input.fail_on_regression = command.fail_on_regression;
  input.generated_at = command.generated_at.empty() ? utc_now_iso() : command.generated_at;

  std::error_code ec;
  std::filesystem::create_directories(command.out_dir, ec);
  if (ec) {
    err << "bootstorm history: cannot create " << command.out_dir.string() << ": " << ec.message()
        << " (choose a writable directory with --out)\n";
    return 2;
  }
  const std::pair<const char*, std::string> files[] = {
      {"history.md", render_history_md(input)},
      {"history.html", render_history_html(input)},
      {"history.json", history_to_json(input).dump(2) + "\n"}};
  for (const auto& [name, content] : files) {
    if (auto written = detail::write_file(command.out_dir / name, content); !written) {
      err << "bootstorm history: " << written.error().what() << "\n";
      return 2;
    }
  }
  for (const auto& line : history_lines(input.groups)) out << line << "\n";
  out << fmt::format("Wrote {0}/history.md, {0}/history.html and {0}/history.json\n",
                     command.out_dir.string());
  if (!command.fail_on_regression) return 0;
  const auto found = results::regressions(input.groups, *command.fail_on_regression);
  for (const auto& r : found)
    err << fmt::format(
        "bootstorm history: regression in {}: {} is {:+.1f} % slower from run {} on (more than "
        "--fail-on-regression {:g} %)\n",
        results::group_label(r.group->key), r.shift->milestone, r.shift->shift->relative.estimate * 100,
        r.change_point->run_id, *command.fail_on_regression * 100);
  return found.empty() ? 0 : 1;
}

}  // namespace bootstorm::reports
