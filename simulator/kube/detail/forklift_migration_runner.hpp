#pragma once
// Internal to the Forklift controller: the migration runner. It starts a Migration of a Ready Plan and runs
// each VM's cold-migration pipeline (Initialize, DiskTransfer, ImageConversion, VirtualMachineCreation) over
// the lab model's physics, at most `forklift_max_vm_inflight` VMs at once across all migrations, and writes
// the Plan's and the Migration's status as Forklift does.
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "simulator/kube/detail/cluster_state.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube::forklift {

using json = nlohmann::json;

enum Step : std::size_t { kInitialize, kDiskTransfer, kImageConversion, kVirtualMachineCreation, kStepCount };
inline constexpr const char* kStepNames[kStepCount] = {"Initialize", "DiskTransfer", "ImageConversion",
                                                       "VirtualMachineCreation"};
inline constexpr const char* kStepDescriptions[kStepCount] = {"Initialize migration.", "Transfer disks.",
                                                              "Convert image to kubevirt.", "Create VM."};
// The VM's itinerary phase while each step runs (Forklift's VM status `phase`).
inline constexpr const char* kStepItinerary[kStepCount] = {"Started", "CopyDisks", "ConvertGuest",
                                                           "CreateVM"};

struct StepRun {
  std::optional<double> started, completed;
  std::string error;
  double total = 1;  // progress total (DiskTransfer: MB)
  double completed_units = 0;
};

struct VmRun {
  json ref;  // the plan's vms[] entry
  std::string source_id, source_name, target_name, profile;
  std::string source_host_id, source_datastore_id, source_datastore_name;
  double disk_gb = 0;
  bool restore_on = false;
  bool queued = true, active = false, done = false;
  std::string result;  // Succeeded, Failed, Canceled
  std::string itinerary = "Pending";
  std::string error_phase;  // itinerary phase at failure
  std::size_t step = 0;
  std::array<StepRun, kStepCount> steps{};
  std::optional<double> started, completed;
  model::OperationId flow = 0;
  double flow_mb = 0;     // MB the current flow moves
  double flow_scale = 1;  // progress units per MB of the flow
  std::uint64_t timer = 0;
  std::string node, volume_name;
};

struct Run {
  std::string ns, name, uid;
  std::string plan_ns, plan_name, plan_uid;
  json plan;  // the plan as it was at start
  json history;
  std::string target_ns, storage_class, network_type, network_name, provider_url, secret_name;
  std::vector<VmRun> vms;
  std::optional<double> started, completed;
  bool finished = false;
  bool migration_gone = false, plan_gone = false;
  std::string result;
};

// The source disk as the DataVolume's VDDK source and the DiskTransfer task name it: "[ds] vm/vm.vmdk".
std::string backing_file(const VmRun& vm);

class MigrationRunner : public std::enable_shared_from_this<MigrationRunner> {
 public:
  // `on_run_finished` runs when a migration ends: its plan may start another one.
  MigrationRunner(ClusterState& cluster, std::function<void()> on_run_finished);

  // Starts the Migration when its plan is Ready and idle, or applies its `spec.cancel` when it runs.
  void reconcile_migration(const ObjectPtr& migration);
  // A deleted Migration or Plan stops the migration it runs.
  void migration_deleted(const std::string& ns, const std::string& name);
  void plan_deleted(const std::string& ns, const std::string& name);
  // Stops every running transfer and timer.
  void shutdown();
  // The runs' step times: the "migrations" section of /_lab/truth.
  json truth() const;

 private:
  // ---- the runs and the VM pipeline (forklift_migration_runner.cpp) ----
  void start_run(const ObjectPtr& migration, const ObjectPtr& plan);
  void pump();
  std::optional<std::string> injected_failure(const VmRun& vm, Step step) const;
  std::function<void()> guarded(const std::string& key, const std::string& uid, std::size_t index, Step step,
                                std::function<void(Run&, std::size_t)> fn);
  void begin_step(Run& run, std::size_t index, Step step);
  void complete_step(Run& run, std::size_t index, Step step);
  void fail_step(Run& run, std::size_t index, Step step, const std::string& reason);
  void finish_vm(Run& run, std::size_t index, const std::string& result);
  void stop_work(VmRun& vm);
  void cancel_vm(Run& run, std::size_t index);
  void apply_cancel(Run& run, const json& migration);
  void stop_run(Run& run);
  void finish_run(Run& run);
  void update_progress(VmRun& vm);
  void ensure_ticker();
  void tick();

  // ---- the objects created in the target namespace (forklift_migration_targets.cpp) ----
  void create_volume(Run& run, VmRun& vm);
  void finish_volume(Run& run, VmRun& vm, bool ok, const std::string& reason);
  void ensure_namespace(const std::string& ns);
  // Creates the KubeVirt VirtualMachine; returns an error message when it cannot.
  std::string create_target_vm(Run& run, VmRun& vm);

  // ---- status (forklift_migration_status.cpp) ----
  json step_json(const VmRun& vm, Step step) const;
  json vm_json(const VmRun& vm) const;
  // Writes the run's VM statuses into its Plan and its Migration.
  void publish(Run& run);

  ClusterState& cluster_;
  model::Lab& lab_;
  std::function<void()> on_run_finished_;
  bool alive_ = true;
  bool ticker_ = false;
  std::map<std::string, Run> runs_;  // by Migration "ns/name"
  std::deque<std::pair<std::string, std::size_t>> queue_;
  std::size_t inflight_ = 0;
  std::size_t node_cursor_ = 0;
};

}  // namespace bootstorm::sim::kube::forklift
