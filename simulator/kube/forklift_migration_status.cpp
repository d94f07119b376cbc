// The status a Forklift migration writes: Plan status.migration (vms[] with each step's pipeline entry and
// the history) and Migration status.vms[] as forklift-controller words them, and the runs' step times as
// ground truth.
#include <string>
#include <vector>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/forklift_migration_runner.hpp"

namespace bootstorm::sim::kube::forklift {

json MigrationRunner::step_json(const VmRun& vm, Step step) const {
  const StepRun& s = vm.steps[step];
  std::string phase = !s.started ? "Pending" : (s.completed && s.error.empty() ? "Completed" : "Running");
  if (vm.result == "Canceled" && s.started && s.completed && s.error.empty() && s.completed_units < s.total) {
    phase = "Running";  // interrupted: Forklift leaves the step as it was
  }
  auto total = static_cast<long long>(s.total);
  auto done = static_cast<long long>(s.completed_units);
  json out = {{"name", kStepNames[step]},
              {"description", kStepDescriptions[step]},
              {"phase", phase},
              {"progress", {{"completed", done}, {"total", total}}}};
  if (s.started) out["started"] = format_time(*s.started);
  if (s.completed) out["completed"] = format_time(*s.completed);
  if (!s.error.empty()) out["error"] = {{"phase", "Running"}, {"reasons", {s.error}}};
  if (step == kDiskTransfer) {
    out["annotations"] = {{"unit", "MB"}};
    json task = {{"name", backing_file(vm)},
                 {"phase", phase},
                 {"progress", {{"completed", done}, {"total", total}}},
                 {"annotations", {{"unit", "MB"}}}};
    if (s.started) task["started"] = format_time(*s.started);
    if (s.completed) task["completed"] = format_time(*s.completed);
    if (!s.error.empty()) task["error"] = {{"phase", "Running"}, {"reasons", {s.error}}};
    out["tasks"] = json::array({task});
  }
  return out;
}

json MigrationRunner::vm_json(const VmRun& vm) const {
  json pipeline = json::array();
  for (std::size_t i = 0; i < kStepCount; ++i) pipeline.push_back(step_json(vm, static_cast<Step>(i)));
  json out = {{"id", vm.source_id},
              {"name", vm.source_name},
              {"phase", vm.itinerary},
              {"pipeline", pipeline},
              {"restorePowerState", vm.restore_on ? "On" : "Off"}};
  if (vm.target_name != vm.source_name) out["newName"] = vm.target_name;
  const std::string target_name = vm.ref.value("targetName", "");
  if (!target_name.empty()) out["targetName"] = target_name;
  if (vm.started) out["started"] = format_time(*vm.started);
  if (vm.completed) out["completed"] = format_time(*vm.completed);
  std::string when = vm.completed ? format_time(*vm.completed) : "";
  if (vm.result == "Failed") {
    std::vector<std::string> reasons;
    for (const auto& s : vm.steps) {
      if (!s.error.empty()) reasons.push_back(s.error);
    }
    out["error"] = {{"phase", vm.error_phase}, {"reasons", reasons}};
    out["conditions"] = json::array({{{"type", "Failed"},
                                      {"status", "True"},
                                      {"category", "Advisory"},
                                      {"message", "The VM migration has FAILED."},
                                      {"durable", true},
                                      {"lastTransitionTime", when}}});
  } else if (vm.result == "Succeeded") {
    out["conditions"] = json::array({{{"type", "Succeeded"},
                                      {"status", "True"},
                                      {"category", "Advisory"},
                                      {"message", "The VM migration has SUCCEEDED."},
                                      {"durable", true},
                                      {"lastTransitionTime", when}}});
  } else if (vm.result == "Canceled") {
    out["conditions"] = json::array({{{"type", "Canceled"},
                                      {"status", "True"},
                                      {"category", "Advisory"},
                                      {"reason", "UserRequested"},
                                      {"message", "The migration has been canceled."},
                                      {"durable", true},
                                      {"lastTransitionTime", when}}});
  }
  return out;
}

void MigrationRunner::publish(Run& run) {
  json vms = json::array();
  for (const auto& vm : run.vms) vms.push_back(vm_json(vm));
  std::string started = format_time(run.started.value_or(cluster_.now()));
  if (!run.plan_gone) {
    cluster_.modify(Kind::forklift_plans, run.plan_ns, run.plan_name, [&](json& o) {
      if (o["metadata"].value("uid", "") != run.plan_uid) return;
      json& migration = o["status"]["migration"];
      migration["started"] = started;
      if (run.completed) {
        migration["completed"] = format_time(*run.completed);
      } else {
        migration.erase("completed");
      }
      migration["vms"] = vms;
      json history = json::array({run.history});
      migration["history"] = history;
    });
  }
  if (!run.migration_gone) {
    cluster_.modify(Kind::forklift_migrations, run.ns, run.name, [&](json& o) {
      if (o["metadata"].value("uid", "") != run.uid) return;
      json& status = o["status"];
      status["started"] = started;
      if (run.completed) status["completed"] = format_time(*run.completed);
      status["vms"] = vms;
    });
  }
}

json MigrationRunner::truth() const {
  json out = json::array();
  for (const auto& [key, run] : runs_) {
    json vms = json::array();
    for (const auto& vm : run.vms) {
      json steps = json::array();
      for (std::size_t i = 0; i < kStepCount; ++i) {
        const StepRun& s = vm.steps[i];
        if (!s.started) continue;
        json step = {{"name", kStepNames[i]}, {"started", *s.started}};
        if (s.completed) step["completed"] = *s.completed;
        if (!s.error.empty()) step["error"] = s.error;
        if (i == kDiskTransfer) step["mb"] = s.completed_units;
        steps.push_back(std::move(step));
      }
      json entry = {{"name", vm.source_name},
                    {"id", vm.source_id},
                    {"targetName", vm.target_name},
                    {"targetNamespace", run.target_ns},
                    {"steps", steps}};
      if (!vm.node.empty()) entry["node"] = vm.node;
      if (vm.started) entry["started"] = *vm.started;
      if (vm.completed) entry["completed"] = *vm.completed;
      if (!vm.result.empty()) entry["result"] = vm.result;
      vms.push_back(std::move(entry));
    }
    json entry = {{"migration", key}, {"plan", ObjectStore::key(run.plan_ns, run.plan_name)}, {"vms", vms}};
    if (run.started) entry["started"] = *run.started;
    if (run.completed) entry["completed"] = *run.completed;
    if (!run.result.empty()) entry["result"] = run.result;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace bootstorm::sim::kube::forklift
