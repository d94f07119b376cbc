// `bootstorm merge RUN... --out DIR`: combines the run directories of the shards of one sharded run
// (`bootstorm run PLAN --shard I/N --start-at T`) into one run directory. The merge itself (checks and the
// merged journal) is engine::merge_shard_runs; the outputs are then rendered from the merged journal by the
// same code as `bootstorm report`, so every statistic comes from the union of the shards' VMs.
#include <iostream>
#include <memory>

#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/engine/merge.hpp"

namespace bootstorm::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> runs;
  std::string out;
  bool allow_missing = false;
};

int merge(const MergeArgs& args) {
  std::vector<std::filesystem::path> dirs(args.runs.begin(), args.runs.end());
  engine::MergeOptions options;
  options.allow_missing = args.allow_missing;
  auto merged = engine::merge_shard_runs(dirs, args.out, options);
  if (!merged) {
    std::cerr << "bootstorm merge: " << merged.error().what() << "\n";
    return merged.error().kind == ErrorKind::invalid_input || merged.error().kind == ErrorKind::not_found
               ? kExitUsage
               : kExitFailed;
  }
  for (const auto& w : merged->warnings) std::cerr << "warning: " << w << "\n";

  // The `bootstorm report` path: the record from journal.jsonl alone, then every output from the record.
  auto contents = engine::read_journal(merged->out_dir / "journal.jsonl");
  if (!contents) {
    std::cerr << "bootstorm merge: " << contents.error().what() << "\n";
    return kExitFailed;
  }
  for (const auto& w : contents->warnings) std::cerr << "warning: " << w << "\n";
  auto written = write_run_outputs(merged->out_dir, contents->record);
  if (!written) {
    std::cerr << "bootstorm merge: " << written.error().what() << "\n";
    return kExitFailed;
  }
  std::cout << "merged " << merged->shards.size() << " of " << merged->shard_count << " shards of run "
            << merged->run_id << " (" << merged->plan << "): " << contents->record.vms.size()
            << " VMs, outcome " << contents->record.outcome << "\n";
  for (const auto& s : merged->shards)
    std::cout << "  shard " << s.index << ": " << s.dir.string() << " (" << s.vms << " VMs, "
              << (s.outcome.empty() ? "unfinished" : s.outcome) << ")\n";
  std::cout << "run directory: " << merged->out_dir.string() << "\n";
  if (!merged->missing.empty()) return kExitFailed;
  return contents->record.outcome == "completed" && *written ? kExitOk : kExitFailed;
}

const CommandRegistration registration{Command{
    "merge", 35, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<MergeArgs>();
      CLI::App* sub =
          app.add_subcommand("merge", "Combine the run directories of the shards of one run into one");
      sub->add_option("runs", args->runs, "The shards' run directories")
          ->required()
          ->check(CLI::ExistingDirectory);
      sub->add_option("--out", args->out, "The merged run directory (created; must not exist or be empty)")
          ->required();
      sub->add_flag("--allow-missing", args->allow_missing,
                    "Merge even when some shards are missing (warned; exit code 1)");
      return [args] { return merge(*args); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
