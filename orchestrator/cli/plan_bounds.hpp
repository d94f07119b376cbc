#pragma once
// The size bounds of the commands that read a plan (plan/size_bounds.hpp), with what the CLI knows of the
// hosts without touching a platform: the lab profile the command models the platform with (predict's and
// capacity's --lab and --set), or the plan's own lab when its endpoint is embedded.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/migrate/migration_plan.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/plan/size_bounds.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::cli {

// What a command creates without --max-vms (run, check, validate, migrate), and what predict and capacity
// --predict model: the model holds every VM of a storm in memory, and 100,000 desktops on one host took
// 75 s and 1.1 GB (2 cores).
constexpr long long kRunMaxVms = 500;
constexpr long long kPredictMaxVms = 100'000;

struct PlanBounds {
  std::string bound_by;  // "run creates", "predict models"
  long long max_vms = 0;
  std::function<long long(int scenario_vms)> share;  // run --shard: this shard's VMs of a scenario
  // The lab profile the command models the platform with (predict, capacity: --lab and --set applied), and
  // how messages name it ("lab tolly-2024 with --set"). Null: the plan's own lab when its endpoint is
  // embedded; on a real platform the hosts are not known here (`check` weighs them).
  const sim::model::LabSpec* lab = nullptr;
  std::string lab_label;
};

// The hosts' memory on `lab` for `plan`'s kind and golden image (the vCenter hosts or the Kubernetes nodes);
// nullopt when the kind has no lab front.
std::optional<plan::HostMemory> lab_host_memory(const plan::StormPlan& plan, const sim::model::LabSpec& lab,
                                                const std::string& label);

// The plan's size diagnostics under `bounds`. A plan whose embedded lab does not load gets that diagnostic,
// at platform.lab.
std::vector<plan::Diagnostic> plan_size_diagnostics(const plan::StormPlan& plan, const PlanBounds& bounds);

// A MigrationPlan's size diagnostics: the desktops its vms.fromStorm clones against `max_vms` (migrate
// creates them); none for a plan that migrates existing VMs.
std::vector<plan::Diagnostic> migration_size_diagnostics(const std::string& path,
                                                         const migrate::MigrationPlan& plan,
                                                         long long max_vms);

}  // namespace bootstorm::cli
