// `bootstorm compare RUN [RUN...]`: compares the scenarios of one run, or the same scenarios across runs,
// from each run directory's summary.json and vms.csv; writes compare.md and compare.html and prints one
// verdict per comparison. The logic lives in bootstorm::reports (reports/compare.hpp) so the engine can print
// the same verdict at the end of a run.
#include <iostream>
#include <memory>

#include "orchestrator/cli/command.hpp"
#include "reports/compare.hpp"

namespace bootstorm::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> runs;
  std::string out;
  std::uint64_t seed = results::BootstrapOptions{}.seed;
  std::size_t resamples = results::BootstrapOptions{}.resamples;
};

const CommandRegistration registration{Command{
    "compare", 40, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<CompareArgs>();
      CLI::App* sub = app.add_subcommand(
          "compare",
          "Compare boot-time distributions: the scenarios of one run, or the same scenarios across runs");
      sub->add_option("runs", args->runs, "Run directories (each with summary.json and vms.csv)")->required();
      sub->add_option("--out", args->out,
                      "Directory for compare.md and compare.html (default: the first run)");
      sub->add_option("--seed", args->seed, "Seed of the bootstrap resampling (same seed, same intervals)");
      sub->add_option("--resamples", args->resamples, "Bootstrap resamples")->check(CLI::Range(100, 1000000));
      return [args] {
        reports::CompareOptions options;
        for (const auto& r : args->runs) options.runs.emplace_back(r);
        options.out_dir = args->out;
        options.bootstrap.seed = args->seed;
        options.bootstrap.resamples = args->resamples;
        return reports::run_compare(options, std::cout, std::cerr);
      };
    }}};

}  // namespace
}  // namespace bootstorm::cli
