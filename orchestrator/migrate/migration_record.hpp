#pragma once
// What a migration run measured, per VM and per pipeline step, built from successive Forklift Plan status
// snapshots (MigrationTracker) and rebuilt from the journal alone (`migration_vm` events), plus the
// migration report rendered from it: migration.md, migration.json and migration-vms.csv.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/migrate/forklift_objects.hpp"

namespace bootstorm::migrate {

struct StepRecord {
  std::string name;
  std::string phase;
  std::optional<double> started_s;    // unix seconds: the API's timestamp, else when bootstorm first saw it
  std::optional<double> completed_s;  // same
  long long progress_completed = 0;
  long long progress_total = 0;
  std::string unit;   // DiskTransfer: MB
  std::string error;  // "phase: reason; reason"
  std::optional<double> duration_s() const;
};

struct VmMigrationRecord {
  std::string name;                // source VM name
  std::string id;                  // source VM id (vSphere moref)
  std::string target_name;         // VirtualMachine created on the destination
  std::string status = "pending";  // succeeded | failed | canceled | pending
  std::string phase;               // Forklift's VM phase
  std::optional<double> started_s, completed_s;
  std::vector<StepRecord> steps;
  std::string failed_step;  // the step that failed (error.phase or the failed step's name)
  std::string reason;       // error reasons, verbatim
  std::optional<double> total_s() const;
  double disk_mb() const;                       // DiskTransfer progress total, in MB
  std::optional<double> transfer_mbps() const;  // DiskTransfer MB / DiskTransfer duration
  const StepRecord* step(std::string_view name) const;
};

struct MigrationRecord {
  std::string run_id;
  std::string plan_name;
  bool simulated = false;
  std::string lab;
  std::string source_url;   // vCenter
  std::string destination;  // API server
  std::string forklift_namespace;
  std::string target_namespace;
  bool warm = false;
  std::string started_at;                     // RFC 3339 (run start)
  std::optional<double> migration_started_s;  // Migration created
  std::optional<double> migration_ended_s;    // every VM done (or the run gave up)
  std::string outcome;                        // completed | failed | timeout | interrupted | error
  std::vector<VmMigrationRecord> vms;
};

nlohmann::json to_json(const StepRecord& s);
nlohmann::json to_json(const VmMigrationRecord& v);
VmMigrationRecord vm_record_from_json(const nlohmann::json& j);

// Folds Plan status snapshots into per-VM records. Step times come from the API's started/completed
// timestamps (whole seconds, as Forklift writes them); when bootstorm saw the timestamp appear within that
// second, the observation (sub-second) is used instead. Without API timestamps, the observation time.
class MigrationTracker {
 public:
  explicit MigrationTracker(std::vector<std::string> vm_names);
  // Returns the names of the VMs whose record changed.
  std::vector<std::string> update(const std::vector<VmStatus>& statuses, double observed_unix_s);
  // Marks every unfinished VM failed with `reason` (timeout, interruption).
  std::vector<std::string> give_up(const std::string& reason, double now_unix_s);
  bool all_done() const;
  const std::vector<VmMigrationRecord>& vms() const { return vms_; }
  const VmMigrationRecord* find(const std::string& name) const;

 private:
  std::vector<VmMigrationRecord> vms_;
  // When bootstorm first saw each API timestamp appear ("vm/step/started"): Forklift writes whole seconds,
  // the watch sees the change within milliseconds, so the observation refines the timestamp.
  std::map<std::string, double> first_seen_;
  std::optional<double> refine(const std::string& key, const std::string& rfc3339, double now);
};

struct MigrationSummary {
  std::size_t vms = 0, succeeded = 0, failed = 0;
  std::optional<double> mean_s, p95_s, max_s, min_s, p50_s;  // per-VM total time of succeeded VMs
  std::optional<double> wall_s;                              // first VM start -> last VM end
  double total_mb = 0;
  std::optional<double> aggregate_mbps;  // total MB / wall time
  std::optional<double> mean_vm_mbps;
  std::vector<std::string> step_names;  // every step seen, in pipeline order
  // Per step: mean and max duration over the VMs that completed it.
  std::vector<std::pair<std::optional<double>, std::optional<double>>> step_mean_max;
};
MigrationSummary summarize(const MigrationRecord& record);

std::string render_migration_md(const MigrationRecord& record);
std::string render_migration_json(const MigrationRecord& record);
std::string render_migration_csv(const MigrationRecord& record);

}  // namespace bootstorm::migrate
