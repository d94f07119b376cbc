// `bootstorm cleanup RUN [--dry-run]`: deletes exactly what the run created and did not delete (its journal,
// plus what the platform still lists under the run id). Never deletes an object without the run id.
#include <iostream>
#include <memory>

#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/engine/cleanup.hpp"
#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/migrate/migrate.hpp"
#include "orchestrator/plan/plan.hpp"

namespace bootstorm::cli {
namespace {

struct CleanupArgs {
  std::string run_dir;
  bool dry_run = false;
};

// A migration run (plan.yaml of kind MigrationPlan): its Forklift objects and migrated VMs, never the
// source VMs.
int cleanup_migration(const std::filesystem::path& dir, bool dry_run) {
  auto report = migrate::cleanup_migration(dir, make_engine_hooks(), dry_run);
  if (!report) {
    std::cerr << "cleanup failed: " << report.error().what() << "\n";
    return report.error().kind == ErrorKind::invalid_input ? kExitUsage : kExitFailed;
  }
  for (auto& msg : report->refused) std::cerr << msg << "\n";
  for (auto& msg : report->failed) std::cerr << msg << "\n";
  if (!report->note.empty()) std::cout << report->note << "\n";
  for (auto& what : report->deleted) std::cout << (dry_run ? "would delete " : "deleted ") << what << "\n";
  std::cout << "migration run " << report->run_id << ": " << (dry_run ? "would delete " : "deleted ")
            << report->deleted.size() << " objects, kept " << report->kept.size()
            << " (source VMs and reused Providers)";
  if (!report->refused.empty()) std::cout << ", refused " << report->refused.size();
  if (!report->failed.empty()) std::cout << ", " << report->failed.size() << " failed";
  std::cout << "\n";
  return report->ok() ? kExitOk : kExitFailed;
}

int cleanup(const CleanupArgs& args) {
  const std::filesystem::path dir(args.run_dir);
  if (migrate::is_migration_run(dir)) return cleanup_migration(dir, args.dry_run);
  // The plan as the run resolved it: plan.yaml of the run directory, else the copy inside the journal.
  plan::LoadResult loaded = plan::load_plan_file((dir / "plan.yaml").string());
  if (!loaded.plan) {
    auto contents = engine::read_journal(dir / "journal.jsonl");
    if (!contents) {
      std::cerr << contents.error().what() << "\n";
      return kExitUsage;
    }
    loaded = plan::load_plan_text(contents->record.plan_yaml, (dir / "journal.jsonl").string());
  }
  if (!loaded.plan) {
    for (auto& d : loaded.diagnostics) std::cerr << d.to_string() << "\n";
    std::cerr << args.run_dir << ": cannot read the run's plan, nothing was deleted\n";
    return kExitUsage;
  }
  engine::CleanupOptions options;
  options.dry_run = args.dry_run;
  auto report = engine::cleanup_run(dir, *loaded.plan, make_engine_hooks(), options);
  if (!report) {
    std::cerr << "cleanup failed: " << report.error().what() << "\n";
    return kExitFailed;
  }
  for (auto& msg : report->refused) std::cerr << msg << "\n";
  for (auto& msg : report->failed) std::cerr << msg << "\n";
  if (!report->note.empty()) std::cout << report->note << "\n";
  std::cout << "run " << report->run_id << ": " << (args.dry_run ? "would delete " : "deleted ")
            << report->deleted.size() << " VMs (" << report->from_journal << " from the journal, "
            << report->from_platform << " more listed by the platform)";
  if (!report->refused.empty()) std::cout << ", refused " << report->refused.size();
  if (!report->failed.empty()) std::cout << ", " << report->failed.size() << " failed";
  std::cout << "\n";
  return report->ok() ? kExitOk : kExitFailed;
}

const CommandRegistration registration{Command{
    "cleanup", 40, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<CleanupArgs>();
      CLI::App* sub = app.add_subcommand("cleanup", "Delete what a run created and left behind");
      sub->add_option("run", args->run_dir, "Run directory")->required()->check(CLI::ExistingDirectory);
      sub->add_flag("--dry-run", args->dry_run, "List what would be deleted; delete nothing");
      return [args] { return cleanup(*args); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
