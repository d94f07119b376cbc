// The Forklift migration runner: starts a Migration, runs each VM's cold-migration pipeline as
// pkg/controller/plan/migration.go does, honours `spec.cancel`, deletions and injected step failures. Data
// moves as flows of the lab model, so transfer times come from the source datastore and host link, the
// destination node's link and the destination datastore, shared with everything else running in the lab.
#include "simulator/kube/detail/forklift_migration_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/forklift_conditions.hpp"
#include "simulator/kube/detail/forklift_references.hpp"

namespace bootstorm::sim::kube::forklift {
namespace {

// Kubernetes object reference as Forklift records it in status.migration.history.
json history_ref(const json& object) {
  const json& meta = object["metadata"];
  return {{"name", meta.value("name", "")},
          {"namespace", meta.value("namespace", "")},
          {"uid", meta.value("uid", "")},
          {"generation", meta.value("generation", 1)}};
}

}  // namespace

MigrationRunner::MigrationRunner(ClusterState& cluster, std::function<void()> on_run_finished)
    : cluster_(cluster), lab_(cluster.lab()), on_run_finished_(std::move(on_run_finished)) {}

void MigrationRunner::reconcile_migration(const ObjectPtr& migration) {
  const json& o = migration->object;
  std::string ns = o["metadata"].value("namespace", "");
  std::string name = o["metadata"].value("name", "");
  std::string key = ObjectStore::key(ns, name);
  auto run_it = runs_.find(key);
  if (run_it != runs_.end()) {
    if (run_it->second.uid == o["metadata"].value("uid", "")) {
      apply_cancel(run_it->second, o);
      return;
    }
    runs_.erase(run_it);  // the name was reused by a new Migration
  }
  if (!field(o, {"status", "completed"}).is_null()) return;
  std::vector<Condition> conditions;
  std::string plan_name = string_field(o, {"spec", "plan", "name"});
  std::string plan_ns = string_field(o, {"spec", "plan", "namespace"});
  if (plan_ns.empty()) plan_ns = ns;
  ObjectPtr plan = plan_name.empty() ? nullptr : cluster_.get(Kind::forklift_plans, plan_ns, plan_name);
  if (!plan) {
    conditions.push_back(
        {"PlanNotValid", plan_name.empty() ? "NotSet" : "NotFound", "Critical", "The `plan` is not valid."});
  } else if (!condition_true(plan->object, "Ready")) {
    conditions.push_back(
        {"PlanNotReady", "NotFound", "Critical", "The `plan` does not have Ready condition."});
  } else if (condition_true(plan->object, "Executing")) {
    conditions.push_back(
        {"PlanNotReady", "Executing", "Critical", "The plan is executing another migration."});
  }
  if (any_blocker(conditions)) {
    write_conditions(cluster_, Kind::forklift_migrations, migration, conditions);
    return;
  }
  start_run(migration, plan);
}

void MigrationRunner::migration_deleted(const std::string& ns, const std::string& name) {
  auto it = runs_.find(ObjectStore::key(ns, name));
  if (it != runs_.end() && !it->second.finished) {
    it->second.migration_gone = true;
    stop_run(it->second);
  }
}

void MigrationRunner::plan_deleted(const std::string& ns, const std::string& name) {
  for (auto& [key, run] : runs_) {
    if (run.plan_ns == ns && run.plan_name == name && !run.finished) {
      run.plan_gone = true;
      stop_run(run);
    }
  }
}

void MigrationRunner::shutdown() {
  alive_ = false;
  for (auto& [key, run] : runs_) {
    for (auto& vm : run.vms) stop_work(vm);
  }
}

void MigrationRunner::start_run(const ObjectPtr& migration, const ObjectPtr& plan) {
  const json& m = migration->object;
  const json& p = plan->object;
  Run run;
  run.ns = m["metadata"].value("namespace", "");
  run.name = m["metadata"].value("name", "");
  run.uid = m["metadata"].value("uid", "");
  run.plan_ns = p["metadata"].value("namespace", "");
  run.plan_name = p["metadata"].value("name", "");
  run.plan_uid = p["metadata"].value("uid", "");
  run.plan = p;
  run.target_ns = string_field(p, {"spec", "targetNamespace"});
  run.started = cluster_.now();
  run.storage_class = lab_.spec().kube.storage_class;
  run.network_type = "pod";
  if (auto storage_map = map_of(cluster_, p, "storage", Kind::forklift_storage_maps)) {
    const json& entries = field(storage_map->object, {"spec", "map"});
    if (entries.is_array() && !entries.empty()) {
      run.storage_class = string_field(entries[0], {"destination", "storageClass"});
    }
  }
  if (auto network_map = map_of(cluster_, p, "network", Kind::forklift_network_maps)) {
    const json& entries = field(network_map->object, {"spec", "map"});
    if (entries.is_array() && !entries.empty()) {
      run.network_type = string_field(entries[0], {"destination", "type"});
      std::string nad_ns = string_field(entries[0], {"destination", "namespace"});
      std::string nad = string_field(entries[0], {"destination", "name"});
      run.network_name = nad_ns.empty() ? nad : nad_ns + "/" + nad;
    }
  }
  ProviderPair providers;
  std::vector<Condition> ignored;
  providers = validate_providers(cluster_, p, ignored);
  if (providers.source) {
    run.provider_url = string_field(providers.source->object, {"spec", "url"});
    run.secret_name = string_field(providers.source->object, {"spec", "secret", "name"});
  }
  json history = {{"conditions", json::array()},
                  {"migration", history_ref(m)},
                  {"plan", history_ref(p)},
                  {"provider", json::object()},
                  {"map", json::object()}};
  json empty_ref = {{"name", ""}, {"namespace", ""}, {"uid", ""}, {"generation", 0}};
  history["provider"]["source"] = providers.source ? history_ref(providers.source->object) : empty_ref;
  history["provider"]["destination"] =
      providers.destination ? history_ref(providers.destination->object) : empty_ref;
  auto network_map = map_of(cluster_, p, "network", Kind::forklift_network_maps);
  auto storage_map = map_of(cluster_, p, "storage", Kind::forklift_storage_maps);
  history["map"]["network"] = network_map ? history_ref(network_map->object) : empty_ref;
  history["map"]["storage"] = storage_map ? history_ref(storage_map->object) : empty_ref;
  run.history = history;

  const json& vms = field(p, {"spec", "vms"});
  std::string target_power = string_field(p, {"spec", "targetPowerState"});
  for (const auto& ref : vms.is_array() ? vms : json::array()) {
    const model::Vm* source = find_source_vm(lab_, ref);
    if (!source) continue;  // validation guarantees existence; a VM deleted since is skipped
    VmRun vm;
    vm.ref = ref;
    vm.source_id = source->id;
    vm.source_name = source->name;
    vm.target_name = ref.value("targetName", "");
    if (vm.target_name.empty()) vm.target_name = dns1123_name(source->name);
    vm.profile = source->profile;
    vm.source_host_id = source->host_id;
    vm.source_datastore_id = source->datastore_id;
    if (const auto* ds = lab_.find_datastore(source->datastore_id)) vm.source_datastore_name = ds->spec.name;
    const model::GuestProfile* profile = lab_.find_profile(source->profile);
    vm.disk_gb = profile ? profile->disk_gb : 0;
    vm.steps[kDiskTransfer].total = std::ceil((profile ? profile->disk_used_gb : 0) * 1000);
    std::string power = ref.value("targetPowerState", target_power);
    vm.restore_on = power == "on" ||
                    ((power.empty() || power == "auto") && source->power == model::PowerState::powered_on);
    run.vms.push_back(std::move(vm));
  }
  std::string key = ObjectStore::key(run.ns, run.name);
  auto [it, inserted] = runs_.insert_or_assign(key, std::move(run));
  Run& stored = it->second;
  for (std::size_t i = 0; i < stored.vms.size(); ++i) queue_.emplace_back(key, i);
  // The plan now executes this migration.
  std::string now = format_time(cluster_.now());
  cluster_.modify(Kind::forklift_plans, stored.plan_ns, stored.plan_name, [&](json& o) {
    json& status = o["status"];
    json kept = json::array();
    for (const auto& c : status.value("conditions", json::array())) {
      if (!execution_condition(c.value("type", ""))) kept.push_back(c);
    }
    kept.push_back({{"type", "Executing"},
                    {"status", "True"},
                    {"category", "Advisory"},
                    {"message", "The plan is EXECUTING."},
                    {"lastTransitionTime", now},
                    {"durable", true}});
    status["conditions"] = kept;
  });
  std::vector<Condition> conditions = {{"Ready", "", "Required", "The migration is ready."},
                                       {"Running", "", "Required", "The migration is RUNNING."}};
  if (auto migration_now = cluster_.get(Kind::forklift_migrations, stored.ns, stored.name)) {
    write_conditions(cluster_, Kind::forklift_migrations, migration_now, conditions);
  }
  publish(stored);
  pump();
  if (stored.vms.empty()) finish_run(stored);
}

void MigrationRunner::pump() {
  const std::size_t limit = std::max<std::size_t>(1, cluster_.options().forklift_max_vm_inflight);
  while (inflight_ < limit && !queue_.empty()) {
    auto [key, index] = queue_.front();
    queue_.pop_front();
    auto it = runs_.find(key);
    if (it == runs_.end() || index >= it->second.vms.size()) continue;
    VmRun& vm = it->second.vms[index];
    if (!vm.queued || vm.done) continue;
    vm.queued = false;
    vm.active = true;
    ++inflight_;
    begin_step(it->second, index, kInitialize);
  }
}

std::optional<std::string> MigrationRunner::injected_failure(const VmRun& vm, Step step) const {
  for (const auto& failure : lab_.faults().migration_failures) {
    if ((failure.vm == vm.source_name || failure.vm == vm.source_id) && failure.step == kStepNames[step]) {
      return failure.reason;
    }
  }
  return std::nullopt;
}

std::function<void()> MigrationRunner::guarded(const std::string& key, const std::string& uid,
                                               std::size_t index, Step step,
                                               std::function<void(Run&, std::size_t)> fn) {
  std::weak_ptr<MigrationRunner> weak = shared_from_this();
  return [weak, key, uid, index, step, fn = std::move(fn)] {
    auto self = weak.lock();
    if (!self || !self->alive_) return;
    auto it = self->runs_.find(key);
    if (it == self->runs_.end() || it->second.uid != uid || index >= it->second.vms.size()) return;
    VmRun& vm = it->second.vms[index];
    if (vm.done || vm.step != step) return;
    fn(it->second, index);
  };
}

void MigrationRunner::begin_step(Run& run, std::size_t index, Step step) {
  VmRun& vm = run.vms[index];
  std::string key = ObjectStore::key(run.ns, run.name);
  double now = cluster_.now();
  vm.step = step;
  vm.itinerary = kStepItinerary[step];
  if (!vm.started) vm.started = now;
  vm.steps[step].started = now;
  auto failure = injected_failure(vm, step);
  auto then_fail_or = [this, key, uid = run.uid, index, step,
                       failure](std::function<void(Run&, std::size_t)> next) {
    return guarded(key, uid, index, step, [this, step, failure, next](Run& r, std::size_t i) {
      if (failure) {
        fail_step(r, i, step, *failure);
      } else {
        next(r, i);
      }
    });
  };
  switch (step) {
    case kInitialize: {
      // Cold migration: the source is powered off first (its power state is restored on the target).
      const model::Vm* source = lab_.find_vm(vm.source_id);
      auto next = then_fail_or([this](Run& r, std::size_t i) { complete_step(r, i, kInitialize); });
      double delay = lab_.spec().kube.schedule_delay_s;
      if (source && source->power == model::PowerState::powered_on) {
        std::weak_ptr<MigrationRunner> weak = shared_from_this();
        auto off = lab_.power_off(vm.source_id, [weak, next, delay](Expected<void>) {
          auto self = weak.lock();
          if (self && self->alive_) self->lab_.schedule(delay, next);
        });
        if (off) break;
      }
      vm.timer = lab_.schedule(delay, next);
      break;
    }
    case kDiskTransfer: {
      create_volume(run, vm);
      publish(run);
      const model::Node* node = lab_.find_node(vm.node);
      const model::Datastore* target_ds = lab_.find_datastore(lab_.spec().kube.datastore);
      model::Lab::DataFlowRequest request;
      request.host_ids = {vm.source_host_id};
      if (node) request.host_ids.push_back(node->host_id);
      request.datastore_ids = {vm.source_datastore_id};
      if (target_ds) request.datastore_ids.push_back(target_ds->id);
      // An injected transfer failure surfaces half-way through the copy, as a broken VDDK read would.
      request.mb = vm.steps[kDiskTransfer].total * (failure ? 0.5 : 1.0);
      vm.flow_mb = request.mb;
      vm.flow_scale = 1;
      auto done = then_fail_or([this](Run& r, std::size_t i) { complete_step(r, i, kDiskTransfer); });
      auto flow = lab_.start_data_flow(request, [done](Expected<void>) { done(); });
      if (!flow) {
        fail_step(run, index, step, flow.error().message);
        return;
      }
      vm.flow = *flow;
      ensure_ticker();
      break;
    }
    case kImageConversion: {
      // virt-v2v: the conversion pod starts, then reads the guest's OS files from the new volume.
      const model::GuestProfile* profile = lab_.find_profile(vm.profile);
      double os_mb = 0;
      if (profile) {
        for (const auto& phase : profile->phases) os_mb += phase.mb_read;
      }
      auto done = then_fail_or([this](Run& r, std::size_t i) { complete_step(r, i, kImageConversion); });
      auto convert = guarded(key, run.uid, index, step, [this, os_mb, done](Run& r, std::size_t i) {
        VmRun& v = r.vms[i];
        const model::Node* node = lab_.find_node(v.node);
        const model::Datastore* target_ds = lab_.find_datastore(lab_.spec().kube.datastore);
        model::Lab::DataFlowRequest request;
        if (node) request.host_ids.push_back(node->host_id);
        if (target_ds) request.datastore_ids.push_back(target_ds->id);
        request.mb = os_mb;
        if (request.host_ids.empty() && request.datastore_ids.empty()) {
          done();
          return;
        }
        auto flow = lab_.start_data_flow(request, [done](Expected<void>) { done(); });
        if (!flow) {
          fail_step(r, i, kImageConversion, flow.error().message);
          return;
        }
        v.flow = *flow;
        v.flow_mb = 0;  // no MB progress on this step
      });
      vm.timer = lab_.schedule(lab_.spec().kube.launcher_start_s, convert);
      break;
    }
    case kVirtualMachineCreation: {
      auto create = then_fail_or([this](Run& r, std::size_t i) {
        std::string error = create_target_vm(r, r.vms[i]);
        if (!error.empty()) {
          fail_step(r, i, kVirtualMachineCreation, error);
        } else {
          complete_step(r, i, kVirtualMachineCreation);
        }
      });
      vm.timer = lab_.schedule(lab_.spec().kube.schedule_delay_s, create);
      break;
    }
    default:
      break;
  }
  publish(run);
}

void MigrationRunner::complete_step(Run& run, std::size_t index, Step step) {
  VmRun& vm = run.vms[index];
  if (vm.flow) lab_.cancel_data_flow(vm.flow);  // already complete: forgets it
  vm.flow = 0;
  vm.timer = 0;
  StepRun& s = vm.steps[step];
  s.completed = cluster_.now();
  s.completed_units = s.total;
  if (step == kDiskTransfer) finish_volume(run, vm, true, "");
  if (step + 1 < kStepCount) {
    begin_step(run, index, static_cast<Step>(step + 1));
    return;
  }
  finish_vm(run, index, "Succeeded");
}

void MigrationRunner::fail_step(Run& run, std::size_t index, Step step, const std::string& reason) {
  VmRun& vm = run.vms[index];
  if (vm.flow) {
    update_progress(vm);
    lab_.cancel_data_flow(vm.flow);
  }
  vm.flow = 0;
  vm.timer = 0;
  StepRun& s = vm.steps[step];
  s.completed = cluster_.now();
  s.error = reason;
  vm.error_phase = kStepItinerary[step];
  if (step == kDiskTransfer) finish_volume(run, vm, false, reason);
  finish_vm(run, index, "Failed");
}

void MigrationRunner::finish_vm(Run& run, std::size_t index, const std::string& result) {
  VmRun& vm = run.vms[index];
  vm.done = true;
  vm.result = result;
  vm.itinerary = "Completed";
  vm.completed = cluster_.now();
  if (vm.active) {
    vm.active = false;
    --inflight_;
  }
  vm.queued = false;
  publish(run);
  if (std::all_of(run.vms.begin(), run.vms.end(), [](const VmRun& v) { return v.done; })) finish_run(run);
  pump();
}

void MigrationRunner::stop_work(VmRun& vm) {
  if (vm.flow) lab_.cancel_data_flow(vm.flow);
  if (vm.timer) lab_.cancel_scheduled(vm.timer);
  vm.flow = 0;
  vm.timer = 0;
}

void MigrationRunner::cancel_vm(Run& run, std::size_t index) {
  VmRun& vm = run.vms[index];
  if (vm.done) return;
  if (vm.flow) update_progress(vm);
  stop_work(vm);
  if (vm.active && vm.steps[vm.step].started && !vm.steps[vm.step].completed) {
    vm.steps[vm.step].completed = cluster_.now();
  }
  if (vm.active && vm.step == kDiskTransfer) finish_volume(run, vm, false, "canceled");
  finish_vm(run, index, "Canceled");
}

void MigrationRunner::apply_cancel(Run& run, const json& migration) {
  const json& cancel = field(migration, {"spec", "cancel"});
  if (!cancel.is_array() || run.finished) return;
  for (const auto& ref : cancel) {
    std::string id = ref.value("id", "");
    std::string name = ref.value("name", "");
    for (std::size_t i = 0; i < run.vms.size(); ++i) {
      const VmRun& vm = run.vms[i];
      if ((!id.empty() && id == vm.source_id) || (id.empty() && !name.empty() && name == vm.source_name)) {
        cancel_vm(run, i);
      }
    }
  }
}

void MigrationRunner::stop_run(Run& run) {
  for (std::size_t i = 0; i < run.vms.size(); ++i) cancel_vm(run, i);
  if (!run.finished) finish_run(run);
}

void MigrationRunner::finish_run(Run& run) {
  if (run.finished) return;
  run.finished = true;
  run.completed = cluster_.now();
  int failed = 0, succeeded = 0;
  for (const auto& vm : run.vms) {
    failed += vm.result == "Failed";
    succeeded += vm.result == "Succeeded";
  }
  run.result = failed > 0 ? "Failed" : succeeded > 0 ? "Succeeded" : "Canceled";
  std::string plan_message = run.result == "Failed"      ? "The plan execution has FAILED."
                             : run.result == "Succeeded" ? "The plan execution has SUCCEEDED."
                                                         : "The plan execution has been CANCELED.";
  std::string migration_message = run.result == "Failed"      ? "The migration has FAILED."
                                  : run.result == "Succeeded" ? "The migration has SUCCEEDED."
                                                              : "The migration has been CANCELED.";
  std::string now = format_time(cluster_.now());
  json plan_condition = {{"type", run.result},      {"status", "True"},          {"category", "Advisory"},
                         {"message", plan_message}, {"lastTransitionTime", now}, {"durable", true}};
  run.history["conditions"] = json::array({plan_condition});
  publish(run);
  if (!run.plan_gone) {
    cluster_.modify(Kind::forklift_plans, run.plan_ns, run.plan_name, [&](json& o) {
      json& status = o["status"];
      json kept = json::array();
      for (const auto& c : status.value("conditions", json::array())) {
        if (!execution_condition(c.value("type", ""))) kept.push_back(c);
      }
      kept.push_back(plan_condition);
      status["conditions"] = kept;
    });
  }
  if (!run.migration_gone) {
    if (auto migration = cluster_.get(Kind::forklift_migrations, run.ns, run.name)) {
      std::vector<Condition> conditions = {{"Ready", "", "Required", "The migration is ready."},
                                           {run.result, "", "Required", migration_message, {}, true}};
      write_conditions(cluster_, Kind::forklift_migrations, migration, conditions);
    }
  }
  on_run_finished_();
}

void MigrationRunner::update_progress(VmRun& vm) {
  if (!vm.flow || vm.step != kDiskTransfer) return;
  double moved = lab_.data_flow_done_mb(vm.flow);
  StepRun& s = vm.steps[kDiskTransfer];
  s.completed_units = std::min(s.total, std::floor(moved * vm.flow_scale));
}

void MigrationRunner::ensure_ticker() {
  if (ticker_) return;
  ticker_ = true;
  std::weak_ptr<MigrationRunner> weak = shared_from_this();
  lab_.schedule(cluster_.options().progress_interval_s, [weak] {
    auto self = weak.lock();
    if (self && self->alive_) self->tick();
  });
}

void MigrationRunner::tick() {
  ticker_ = false;
  bool any = false;
  for (auto& [key, run] : runs_) {
    bool changed = false;
    for (auto& vm : run.vms) {
      if (vm.done || vm.step != kDiskTransfer || !vm.flow) continue;
      double before = vm.steps[kDiskTransfer].completed_units;
      update_progress(vm);
      any = true;
      if (vm.steps[kDiskTransfer].completed_units != before) {
        changed = true;
        StepRun& s = vm.steps[kDiskTransfer];
        double percent = s.total > 0 ? 100.0 * s.completed_units / s.total : 0;
        cluster_.modify(Kind::data_volumes, run.target_ns, vm.volume_name,
                        [&](json& o) { o["status"]["progress"] = fmt::format("{:.2f}%", percent); });
      }
    }
    if (changed) publish(run);
  }
  if (any) ensure_ticker();
}

}  // namespace bootstorm::sim::kube::forklift
