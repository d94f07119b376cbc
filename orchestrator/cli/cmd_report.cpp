// `bootstorm report RUN`: re-renders every output of a run directory (summary.json, vms.csv, report.md,
// report.html, junit.xml, metrics.prom) from its journal.jsonl alone.
#include <iostream>
#include <memory>

#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/engine/journal.hpp"

namespace bootstorm::cli {
namespace {

int report(const std::string& run_dir) {
  auto contents = engine::read_journal(std::filesystem::path(run_dir) / "journal.jsonl");
  if (!contents) {
    std::cerr << contents.error().what() << "\n";
    return kExitUsage;
  }
  for (auto& w : contents->warnings) std::cerr << "warning: " << w << "\n";
  if (contents->truncated_tail)
    std::cerr << "note: the journal's last line was incomplete (crash?) and was ignored\n";
  if (!contents->has_run_ended)
    std::cerr << "note: the journal has no run_ended event: the run did not finish\n";
  auto written = write_run_outputs(run_dir, contents->record);
  if (!written) {
    std::cerr << written.error().what() << "\n";
    return kExitFailed;
  }
  std::cout << "re-rendered the outputs of " << run_dir << " from journal.jsonl ("
            << contents->record.vms.size() << " VMs, outcome "
            << (contents->record.outcome.empty() ? "unknown" : contents->record.outcome) << ", SLOs "
            << (*written ? "passed" : "missed") << ")\n";
  return kExitOk;
}

const CommandRegistration registration{Command{
    "report", 30, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto run_dir = std::make_shared<std::string>();
      CLI::App* sub = app.add_subcommand("report", "Re-render a run directory's outputs from its journal");
      sub->add_option("run", *run_dir, "Run directory")->required()->check(CLI::ExistingDirectory);
      return [run_dir] { return report(*run_dir); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
