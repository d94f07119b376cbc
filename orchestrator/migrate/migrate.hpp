#pragma once
// `bootstorm migrate PLAN`: moves desktops from vSphere to OpenShift Virtualization / KubeVirt with the
// Migration Toolkit for Virtualization (Forklift), times every pipeline step of every VM, and optionally
// boot-storms the migrated desktops and compares them with the same desktops on vSphere.
//
//   [fromStorm] vSphere storm of fresh clones (RunEngine, cleanup never) -> their names
//   [fromRun]   the VMs a previous vSphere run created and kept (its journal)
//   Secret + vsphere Provider (an existing one for the same vCenter is reused) [+ host Provider] -> Ready
//   NetworkMap + StorageMap + Plan -> Ready (validation conditions reported verbatim when not)
//   Migration -> list+watch of the Plan: status.migration.vms[].pipeline[] per VM and step -> journal
//   migration.md / migration.json / migration-vms.csv
//   [--then-storm] KubeVirt storm of the migrated VMs (adopted, not cloned) + compare.md/html of both sides
//
// Everything created carries the label bootstorm.io/run=<run id> and is journaled, so
// `bootstorm cleanup RUN` removes the Forklift objects, the migrated VMs and the namespaces the run created
// (journaled, still carrying the run label) — never the source VMs nor a namespace that existed before.
#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "orchestrator/engine/hooks.hpp"
#include "orchestrator/migrate/migration_plan.hpp"
#include "orchestrator/migrate/migration_record.hpp"

namespace bootstorm::migrate {

struct MigrateOptions {
  std::filesystem::path out_dir;  // --out (empty: plan.output)
  bool then_storm = false;
  bool dry_run = false;
  bool skip_checks = false;  // --skip-checks: no checks before the migration (a warning says so)
  bool handle_signals = true;
  CancelSignal interrupt;
  std::string run_id;                                                 // empty: random
  std::chrono::milliseconds ready_timeout{std::chrono::minutes(10)};  // Provider / Plan Ready
};

struct MigrateResult {
  int exit_code = 1;  // 0 every VM migrated (and stormed), 1 failures, 2 invalid input, 130 interrupted
  std::string outcome;
  std::filesystem::path run_dir;
  MigrationRecord record;
  std::optional<Error> error;
  std::filesystem::path vsphere_run;    // source storm run directory (fromStorm) or the fromRun directory
  std::filesystem::path openshift_run;  // --then-storm run directory
  bool compared = false;                // compare.md / compare.html written
};

// Blocking. `plan_text` is the plan file as read (kept in the run directory). Progress and results go to
// `out`.
MigrateResult run_migration(const MigrationPlan& plan, const MigrateOptions& options,
                            const engine::EngineHooks& hooks, std::ostream& out);

// The calls a run would make, one per line ("POST /apis/.../plans {json}"), secrets redacted. No network.
std::vector<std::string> dry_run_calls(const MigrationPlan& plan, const std::string& run_id);

// Re-renders migration.md/json/csv from the run directory's journal.
Expected<MigrationRecord> read_migration_journal(const std::filesystem::path& journal_file);
Expected<void> write_migration_outputs(const std::filesystem::path& run_dir, const MigrationRecord& record);

// True when `run_dir` holds a migration run (plan.yaml of kind MigrationPlan).
bool is_migration_run(const std::filesystem::path& run_dir);

struct MigrateCleanupReport {
  std::string run_id;
  std::vector<std::string> deleted;  // "Plan openshift-mtv/bs-..." (would be) deleted
  std::vector<std::string> refused;  // objects without the run's label
  std::vector<std::string> failed;
  std::vector<std::string> kept;  // source VMs, reused Providers: never deleted
  std::string note;
  bool ok() const { return failed.empty() && refused.empty(); }
};
// Deletes the run's Forklift objects and migrated VMs (journal + label selector), never source VMs or
// Providers the run reused. Idempotent; every deletion is journaled.
Expected<MigrateCleanupReport> cleanup_migration(const std::filesystem::path& run_dir,
                                                 const engine::EngineHooks& hooks, bool dry_run);

}  // namespace bootstorm::migrate
