// `bootstorm migrate PLAN [--out DIR] [--then-storm] [--dry-run] [--yes]`: moves the desktops of a
// MigrationPlan from vSphere to OpenShift Virtualization with Forklift (MTV), times every step of every VM,
// and with --then-storm boot-storms the migrated desktops and compares them with the same desktops on
// vSphere.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <memory>

#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/command_support.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/cli/plan_bounds.hpp"
#include "orchestrator/engine/platform.hpp"
#include "orchestrator/migrate/migrate.hpp"
#include "orchestrator/migrate/migration_plan.hpp"

namespace bootstorm::cli {
namespace {

struct MigrateArgs {
  std::string plan;
  std::string out;
  bool then_storm = false;
  bool dry_run = false;
  bool yes = false;
  bool skip_checks = false;
  long long max_vms = kRunMaxVms;
};

bool confirm(const migrate::MigrationPlan& p) {
  return confirmed(
      fmt::format("This run migrates VMs from the vCenter {} to {} (namespace {}) with Forklift; {} "
                  "migration {}.",
                  p.source.endpoint, p.destination.endpoint, p.target_namespace, p.warm ? "warm" : "cold",
                  p.warm ? "keeps the source VMs running until cutover" : "powers the source VMs off"));
}

int migrate_command(const MigrateArgs& args) {
  migrate::MigrationLoadResult loaded = migrate::load_migration_plan_file(args.plan);
  for (const auto& d : loaded.diagnostics) std::cerr << d.to_string() << "\n";
  if (!loaded.plan) {
    std::cerr << args.plan << ": invalid plan, nothing was run\n";
    return kExitUsage;
  }
  const migrate::MigrationPlan& p = *loaded.plan;
  if (const auto bounds = migration_size_diagnostics(args.plan, p, args.max_vms); !bounds.empty()) {
    for (const auto& d : bounds) std::cerr << d.to_string() << "\n";
    std::cerr << args.plan << ": invalid plan, nothing was run\n";
    return kExitUsage;
  }
  const bool simulated = engine::is_simulated_endpoint(p.source.endpoint) &&
                         engine::is_simulated_endpoint(p.destination.endpoint);
  if (!simulated && !args.yes && !args.dry_run && ::isatty(STDIN_FILENO)) {
    if (!confirm(p)) {
      std::cerr << "aborted: nothing was changed\n";
      return kExitUsage;
    }
  }
  migrate::MigrateOptions options;
  options.out_dir = args.out;
  options.then_storm = args.then_storm;
  options.dry_run = args.dry_run;
  options.skip_checks = args.skip_checks;
  migrate::MigrateResult result = migrate::run_migration(p, options, make_engine_hooks(), std::cout);
  if (result.error) std::cerr << "error: " << result.error->what() << "\n";
  std::cout << "outcome: " << result.outcome << "\n";
  return result.exit_code;
}

const CommandRegistration registration{Command{
    "migrate", 35, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<MigrateArgs>();
      CLI::App* sub = app.add_subcommand(
          "migrate", "Migrate VMs from vSphere to OpenShift Virtualization with MTV (Forklift) and time it");
      sub->add_option("plan", args->plan, "MigrationPlan file (YAML or JSON)")->required();
      sub->add_option("--out", args->out, "Directory for run directories (overrides the plan's output)");
      sub->add_flag(
          "--then-storm", args->then_storm,
          "Boot-storm the migrated VMs afterwards and compare them with the same desktops on vSphere");
      sub->add_flag("--dry-run", args->dry_run, "Print every call the migration would make and make none");
      sub->add_flag("--yes,-y", args->yes, "Do not ask before touching a non-simulated platform");
      sub->add_flag("--skip-checks", args->skip_checks,
                    "Do not check the destination (Forklift, namespaces, permissions) before migrating");
      sub->add_option("--max-vms", args->max_vms,
                      "Refuse a vms.fromStorm that clones more VMs than this (default 500)")
          ->check(CLI::PositiveNumber);
      return [args] { return migrate_command(*args); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
