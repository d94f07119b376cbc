#pragma once
// `bootstorm compare RUN [RUN...]`: reads run directories (summary.json + vms.csv), compares the scenarios of
// one run or the same scenarios across runs, and renders compare.md and compare.html.
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "results/inference.hpp"
#include "results/summary.hpp"

namespace bootstorm::reports {

struct LoadedRun {
  std::filesystem::path dir;
  results::Summary summary;  // boot_times_s of every scenario filled from vms.csv
};

// Reads DIR/summary.json and DIR/vms.csv. Boot times come from the vms.csv column of each scenario's
// readyMilestone ("<milestone>_s"). Fails with invalid_input naming the file and what is wrong.
Expected<LoadedRun> load_run(const std::filesystem::path& dir);

// Boot times per scenario/repeat from vms.csv text, given the summary whose scenarios they belong to (fills
// summary.scenarios[i].boot_times_s, in the file's row order).
Expected<void> fill_boot_times_from_csv(std::string_view csv_text, results::Summary& summary);

// What to compare: one run -> every scenario against the run's first; several runs -> the same scenario name
// across runs (first run = baseline) when names recur, otherwise every sample against the first run's first
// scenario. Labels carry "(run <id>)" only when a name appears in several runs.
struct CompareSet {
  std::vector<results::ComparedSample> samples;  // every sample involved, in run then scenario order
  std::vector<results::Comparison> comparisons;
};
Expected<CompareSet> compare_runs(const std::vector<LoadedRun>& runs,
                                  const results::BootstrapOptions& options = {});

// Why these runs may not be comparable: for each run after the first, what differs from the first run's
// platform (versions, simulator, hosts, storage), clone kind and API budget, one sentence each, naming both
// runs. Facts a run did not record are not differences. Empty when they agree.
std::vector<std::string> platform_warnings(const std::vector<LoadedRun>& runs);

// Which phase of the boot grew most (results/phases.hpp, its part of the mean boot time), one
// sentence per compared pair that both report phases: the same scenario across runs (first run = baseline),
// or within one run each scenario against the first. Pairs where no phase grew are left out.
std::vector<std::string> phase_growth(const std::vector<LoadedRun>& runs);

std::string render_compare_md(const std::vector<LoadedRun>& runs, const CompareSet& set,
                              std::string_view generated_at);
std::string render_compare_html(const std::vector<LoadedRun>& runs, const CompareSet& set,
                                std::string_view generated_at);

struct CompareOptions {
  std::vector<std::filesystem::path> runs;
  std::filesystem::path out_dir;  // empty: the first run directory
  results::BootstrapOptions bootstrap;
  std::string generated_at;  // empty: now (UTC)
};
// The whole command: load, compare, write compare.md + compare.html, print one verdict per line to `out`.
// Returns the exit code (0 ok, 2 unreadable input or nothing to compare); messages go to `err`.
int run_compare(const CompareOptions& options, std::ostream& out, std::ostream& err);

// Current UTC time as RFC 3339 with milliseconds.
std::string utc_now_iso();

}  // namespace bootstorm::reports
