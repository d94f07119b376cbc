#pragma once
// `bootstorm cleanup RUN`: deletes exactly what a run created and did not delete — the VMs its journal lists
// as created without a matching vm_deleted — plus anything the platform still reports under the run id
// (Provider::list_run_vms). Anything whose name lacks the run id is refused, never deleted. Every deletion is
// appended to the journal, so the command is idempotent and safe to re-run.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "orchestrator/engine/hooks.hpp"
#include "orchestrator/plan/plan.hpp"

namespace bootstorm::engine {

struct CleanupOptions {
  bool dry_run = false;  // list what would be deleted; delete nothing
  int max_concurrent = 16;
};

struct CleanupReport {
  std::string run_id;
  std::vector<std::string> deleted;  // (would be) deleted
  std::vector<std::string> refused;  // messages: objects without the run id
  std::vector<std::string> failed;   // messages: delete errors
  std::size_t from_journal = 0;      // candidates the journal listed
  std::size_t from_platform = 0;     // extra candidates found by list_run_vms
  std::string note;                  // e.g. why nothing could be done
  bool ok() const { return failed.empty() && refused.empty(); }
};

// Blocking; runs its own io_context. `plan` is the run's plan (run_dir/plan.yaml), used to reach the
// platform.
Expected<CleanupReport> cleanup_run(const std::filesystem::path& run_dir, const plan::StormPlan& plan,
                                    const EngineHooks& hooks, const CleanupOptions& options = {});

}  // namespace bootstorm::engine
