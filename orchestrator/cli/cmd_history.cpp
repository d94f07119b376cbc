// `bootstorm history RUN_DIR... [--index URL]`: a plan followed across its runs — the series of each
// milestone, where the platform changed, the change points and their size — written as history.md,
// history.html and history.json (reports/history.hpp; the statistics are results/history.hpp). With
// --fail-on-regression PCT it exits 1 when the newest runs are slower than the ones before their change
// point by more than PCT %, for CI pipelines.
#include <iostream>
#include <memory>

#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/index_client.hpp"
#include "reports/history.hpp"

namespace bootstorm::cli {
namespace {

struct HistoryArgs {
  std::vector<std::string> paths;
  std::string out = "history";
  std::string plan;
  double significance = results::ChangePointOptions{}.significance;
  std::size_t permutations = results::ChangePointOptions{}.permutations;
  std::uint64_t seed = results::ChangePointOptions{}.seed;
  double fail_on_regression = 0;
  CLI::Option* fail_option = nullptr;
  IndexArgs index;
};

// Only the groups of --plan, when given.
void keep_plan(reports::HistoryRuns& runs, const std::string& plan) {
  if (plan.empty()) return;
  std::erase_if(runs.runs, [&](const results::HistoryInput& r) { return r.summary.run.plan != plan; });
}

int history(const HistoryArgs& args) {
  if (args.paths.empty() && args.index.url.empty()) {
    std::cerr << "bootstorm history: give run directories (or a directory of runs), or --index URL\n";
    return kExitUsage;
  }
  reports::HistoryRuns runs;
  if (!args.paths.empty()) {
    auto found = reports::find_history_runs(args.paths);
    if (!found) {
      std::cerr << "bootstorm history: " << found.error().what() << "\n";
      return kExitUsage;
    }
    runs = std::move(*found);
  }
  if (!args.index.url.empty()) {
    auto documents = fetch_quantile_documents(args.index, args.plan);
    if (!documents) {
      std::cerr << "bootstorm history: " << documents.error().what() << "\n";
      return documents.error().kind == ErrorKind::invalid_input ? kExitUsage : kExitFailed;
    }
    auto indexed = reports::history_runs_from_documents(*documents, args.index.url);
    if (!indexed) {
      std::cerr << "bootstorm history: " << indexed.error().what() << "\n";
      return kExitFailed;
    }
    for (auto& r : indexed->runs) runs.runs.push_back(std::move(r));
    for (auto& s : indexed->skipped) runs.skipped.push_back(std::move(s));
  }
  keep_plan(runs, args.plan);
  reports::HistoryCommand command;
  command.out_dir = args.out;
  command.options.change_points.significance = args.significance;
  command.options.change_points.permutations = args.permutations;
  command.options.change_points.seed = args.seed;
  if (args.fail_option->count() > 0) command.fail_on_regression = args.fail_on_regression / 100;
  return reports::run_history(command, std::move(runs), std::cout, std::cerr);
}

const CommandRegistration registration{Command{
    "history", 45, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<HistoryArgs>();
      CLI::App* sub = app.add_subcommand(
          "history",
          "Follow a plan over its runs: each milestone's series, platform changes and change points");
      sub->add_option("runs", args->paths,
                      "Run directories, directories of runs (a plan's output) or quoted glob patterns");
      sub->add_option("--out", args->out, "Directory for history.md, history.html and history.json")
          ->capture_default_str();
      sub->add_option("--plan", args->plan, "Follow only the runs of this plan (by name)");
      args->fail_option = sub->add_option("--fail-on-regression", args->fail_on_regression,
                                          "Exit 1 when the newest runs' change point made a milestone slower "
                                          "by more than PCT % (e.g. 10)")
                              ->check(CLI::Range(0.0, 10000.0));
      sub->add_option("--significance", args->significance,
                      "Chance of a false change point per plan and scenario (shared among its milestones)")
          ->check(CLI::Range(0.0001, 0.5))
          ->capture_default_str();
      sub->add_option("--permutations", args->permutations, "Permutations of each change point's test")
          ->check(CLI::Range(99, 1000000))
          ->capture_default_str();
      sub->add_option("--seed", args->seed, "Seed of the permutations (same seed, same answer)");
      add_index_options(*sub, args->index, "Also read the runs from the index `report --index` writes");
      return [args] { return history(*args); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
