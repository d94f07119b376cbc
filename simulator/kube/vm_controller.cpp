// virt-controller's VirtualMachine controller against the lab model: run strategies, DataVolume templates,
// the VirtualMachineInstance's creation (placement, the client rate limiter's pacing, power-on) and graceful
// stop, and the VirtualMachine's printable status and Ready condition.
#include "simulator/kube/detail/vm_controller.hpp"

#include <algorithm>
#include <vector>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/api_conventions.hpp"
#include "simulator/kube/detail/cdi_controller.hpp"
#include "simulator/kube/detail/seed_objects.hpp"

namespace bootstorm::sim::kube {

using json = nlohmann::json;

std::string run_strategy_of(const json& vm) {
  const json& strategy = field(vm, {"spec", "runStrategy"});
  if (strategy.is_string()) return strategy.get<std::string>();
  const json& running = field(vm, {"spec", "running"});
  if (running.is_boolean()) return running.get<bool>() ? "Always" : "Halted";
  return "Halted";
}

VmController::VmController(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher,
                           EventRecorder& events, const Lifetime& lifetime, CdiController& cdi)
    : store_(store), lab_(lab), publisher_(publisher), events_(events), lifetime_(lifetime), cdi_(cdi) {}

void VmController::track(const std::string& ns, const std::string& name, const std::string& model_id) {
  std::string key = ObjectStore::key(ns, name);
  vms_[key] = Runtime{model_id};
  vm_by_model_id_[model_id] = key;
}

void VmController::release(const std::string& ns, const std::string& name) {
  auto it = vms_.find(ObjectStore::key(ns, name));
  if (it == vms_.end()) return;
  vm_by_model_id_.erase(it->second.model_id);
  (void)lab_.delete_vm(it->second.model_id);
  vms_.erase(it);
}

bool VmController::tracks(const std::string& ns, const std::string& name) const {
  return vms_.count(ObjectStore::key(ns, name)) != 0;
}

std::optional<std::string> VmController::model_id(const std::string& ns, const std::string& name) const {
  auto it = vms_.find(ObjectStore::key(ns, name));
  if (it == vms_.end()) return std::nullopt;
  return it->second.model_id;
}

std::optional<std::pair<std::string, std::string>> VmController::vm_of(const std::string& model_id) const {
  auto it = vm_by_model_id_.find(model_id);
  if (it == vm_by_model_id_.end()) return std::nullopt;
  return split_key(it->second);
}

void VmController::request_start(const std::string& ns, const std::string& name) {
  auto it = vms_.find(ObjectStore::key(ns, name));
  if (it == vms_.end()) return;
  it->second.start_requested = true;
  reconcile(ns, name);
}

void VmController::request_stop(const std::string& ns, const std::string& name) {
  auto it = vms_.find(ObjectStore::key(ns, name));
  if (it == vms_.end()) return;
  it->second.stop_requested = true;
  reconcile(ns, name);
}

void VmController::request_restart(const std::string& ns, const std::string& name, bool running) {
  auto it = vms_.find(ObjectStore::key(ns, name));
  if (it == vms_.end()) return;
  it->second.start_requested = true;
  if (running) it->second.stop_requested = true;
  reconcile(ns, name);
}

void VmController::power_off_deleted_vmi(const std::string& ns, const std::string& name) {
  auto it = vms_.find(ObjectStore::key(ns, name));
  if (it == vms_.end()) return;
  const model::Vm* vm = lab_.find_vm(it->second.model_id);
  if (!vm || vm->power == model::PowerState::powered_off || it->second.stopping) return;
  it->second.stopping = true;
  auto started = lab_.power_off(it->second.model_id, lifetime_.guard([this, ns, name](Expected<void>) {
    auto found = vms_.find(ObjectStore::key(ns, name));
    if (found == vms_.end()) return;
    found->second.stopping = false;
    reconcile(ns, name);
  }));
  if (!started) it->second.stopping = false;
}

void VmController::reconcile(const std::string& ns, const std::string& name) {
  auto vm = store_.get(Kind::virtual_machines, ns, name);
  if (!vm) return;
  auto rt_it = vms_.find(ObjectStore::key(ns, name));
  if (rt_it == vms_.end()) return;
  Runtime& rt = rt_it->second;
  if (vm->object["metadata"].contains("deletionTimestamp")) return;

  // DataVolumes of the templates (re-created if someone deleted them).
  const json& templates = field(vm->object, {"spec", "dataVolumeTemplates"});
  if (templates.is_array()) {
    for (const auto& t : templates) {
      std::string dv_name = string_field(t, {"metadata", "name"});
      if (dv_name.empty() || store_.get(Kind::data_volumes, ns, dv_name)) continue;
      json labels = field(t, {"metadata", "labels"});
      json annotations = field(t, {"metadata", "annotations"});
      json meta = {{"name", dv_name},
                   {"namespace", ns},
                   {"ownerReferences", json::array({owner_reference(vm->object)})}};
      if (labels.is_object()) meta["labels"] = labels;
      if (annotations.is_object()) meta["annotations"] = annotations;
      json dv = {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
                 {"kind", "DataVolume"},
                 {"metadata", meta},
                 {"spec", field(t, {"spec"})}};
      auto stored = publisher_.insert(Kind::data_volumes, std::move(dv));
      events_.record(vm->object, "Normal", "SuccessfulDataVolumeCreate", "Created DataVolume " + dv_name,
                     "virtualmachine-controller");
      cdi_.start(ns, dv_name);
    }
  }
  auto vmi = store_.get(Kind::virtual_machine_instances, ns, name);
  std::string phase = vmi ? string_field(vmi->object, {"status", "phase"}) : "";
  bool final = vmi && final_phase(phase);
  if (rt.stopping) {
    update_status(ns, name);
    return;
  }
  // Volumes must be populated before the VMI is created.
  bool volumes_ready = true;
  const json& volumes = field(vm->object, {"spec", "template", "spec", "volumes"});
  if (volumes.is_array()) {
    for (const auto& volume : volumes) {
      std::string dv_name = string_field(volume, {"dataVolume", "name"});
      if (!dv_name.empty()) {
        auto dv = store_.get(Kind::data_volumes, ns, dv_name);
        if (!dv || string_field(dv->object, {"status", "phase"}) != "Succeeded") volumes_ready = false;
      }
      std::string claim = string_field(volume, {"persistentVolumeClaim", "claimName"});
      if (!claim.empty() && !store_.get(Kind::persistent_volume_claims, ns, claim)) volumes_ready = false;
    }
  }

  std::string strategy = run_strategy_of(vm->object);
  bool create = false, stop = false, remove_final = false;
  if (strategy == "Always") {
    create = !vmi || final;
    remove_final = final;
  } else if (strategy == "RerunOnFailure") {
    if (rt.start_requested) {
      create = !vmi || final;
      remove_final = final;
    } else if (!vmi) {
      create = true;
    } else if (phase == "Failed") {
      create = remove_final = true;
    }
  } else if (strategy == "Once") {
    create = !vmi && !rt.once_started;
  } else if (strategy == "Manual") {
    if (rt.start_requested) {
      create = !vmi || final;
      remove_final = final;
    }
  } else {  // Halted (and WaitAsReceiver, which the lab does not migrate into)
    stop = vmi && !final;
    remove_final = final;
  }
  if (rt.stop_requested) {
    rt.stop_requested = false;
    create = false;
    remove_final = false;
    stop = vmi && !final;
  }
  if (create && !volumes_ready) create = false;  // reconciled again when the DataVolumes finish
  if (remove_final) delete_vmi_object(ns, name);
  if (create) {
    rt.start_requested = false;
    create_vmi(ns, name);
  } else if (stop) {
    stop_vmi(ns, name);
  }
  update_status(ns, name);
}

void VmController::delete_vmi_object(const std::string& ns, const std::string& name) {
  auto vmi = store_.get(Kind::virtual_machine_instances, ns, name);
  if (!vmi) return;
  publisher_.remove(Kind::virtual_machine_instances, ns, name);
  if (auto vm = store_.get(Kind::virtual_machines, ns, name)) {
    events_.record(vm->object, "Normal", "SuccessfulDelete",
                   "Stopped the virtual machine by deleting the virtual machine instance " +
                       vmi->object["metadata"].value("uid", ""),
                   "virtualmachine-controller");
  }
}

double VmController::launch_wait_s() {
  // The CR as it stands: virt-controller reloads its rate limiter when the CR changes.
  kubevirt_limits::TokenBucketLimit limit = kubevirt_limits::kVirtControllerDefault;
  if (auto cr = store_.get(Kind::kube_virts, kKubeVirtNamespace, kKubeVirtName)) {
    limit = kubevirt_limits::limit_of(cr->object, kubevirt_limits::kController, limit).limit;
  }
  using Clock = async::TokenBucket::Clock;
  const auto now = Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(publisher_.now())));
  if (!launch_bucket_ || !(launch_limit_ == limit)) {
    launch_bucket_.emplace(limit.qps, limit.burst, now);
    launch_limit_ = limit;
  }
  Clock::duration wait = Clock::duration::zero();
  for (int write = 0; write < kubevirt_limits::kVirtControllerWritesPerLaunch; ++write) {
    wait = launch_bucket_->reserve(now);
  }
  return std::chrono::duration<double>(wait).count();
}

void VmController::create_vmi(const std::string& ns, const std::string& name) {
  auto vm = store_.get(Kind::virtual_machines, ns, name);
  auto rt_it = vms_.find(ObjectStore::key(ns, name));
  if (!vm || rt_it == vms_.end()) return;
  Runtime& rt = rt_it->second;
  std::string model_id = rt.model_id;
  const json& tmpl = field(vm->object, {"spec", "template"});
  json spec = field(tmpl, {"spec"});
  json labels = field(tmpl, {"metadata", "labels"});
  if (!labels.is_object()) labels = json::object();
  labels["kubevirt.io/vm"] = name;
  labels["vm.kubevirt.io/name"] = name;
  json annotations = field(tmpl, {"metadata", "annotations"});
  if (!annotations.is_object()) annotations = json::object();
  annotations["kubevirt.io/vm-generation"] = std::to_string(vm->object["metadata"].value("generation", 1));
  annotations["kubevirt.io/latest-observed-api-version"] = "v1";
  annotations["kubevirt.io/storage-observed-api-version"] = "v1";
  if (!spec["domain"].contains("firmware")) spec["domain"]["firmware"] = {{"uuid", publisher_.new_uid()}};
  if (!spec["domain"].contains("machine")) spec["domain"]["machine"] = {{"type", "q35"}};
  const model::Vm* model_vm = lab_.find_vm(model_id);
  int cpus = model_vm ? model_vm->cpu_count : 1;
  std::string ts = format_time(publisher_.now());
  json status = {
      {"phase", "Pending"},
      {"phaseTransitionTimestamps", json::array({{{"phase", "Pending"}, {"phaseTransitionTimestamp", ts}}})},
      {"guestOSInfo", json::object()},
      {"qosClass", "Burstable"},
      {"currentCPUTopology", {{"cores", cpus}, {"sockets", 1}, {"threads", 1}}},
      {"launcherContainerImageVersion",
       "registry.redhat.io/container-native-virtualization/virt-launcher-rhel9:v4.16"}};
  json vmi = {
      {"apiVersion", "kubevirt.io/v1"},
      {"kind", "VirtualMachineInstance"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"labels", labels},
        {"annotations", annotations},
        {"ownerReferences", json::array({owner_reference(vm->object)})},
        {"finalizers", {"kubevirt.io/virtualMachineControllerFinalize", "foregroundDeleteVirtualMachine"}}}},
      {"spec", spec},
      {"status", status}};
  auto stored = publisher_.insert(Kind::virtual_machine_instances, std::move(vmi));
  rt.once_started = true;
  events_.record(vm->object, "Normal", "SuccessfulCreate",
                 "Started the virtual machine by creating the new virtual machine instance " + name,
                 "virtualmachine-controller");

  // Placement: nodeSelector kubernetes.io/hostname, else the only node matching the selector.
  model::PowerOnOptions power;
  const json& selector = field(spec, {"nodeSelector"});
  if (selector.is_object() && !selector.empty()) {
    std::string hostname = string_field(selector, {"kubernetes.io/hostname"});
    if (!hostname.empty()) {
      power.node = hostname;
    } else {
      std::vector<std::string> matching;
      for (const auto& node : lab_.nodes()) {
        auto node_object = store_.get(Kind::nodes, "", node.spec.name);
        if (!node_object) continue;
        const json& node_labels = node_object->object["metadata"]["labels"];
        bool all = true;
        for (const auto& [k, v] : selector.items()) {
          if (!node_labels.contains(k) || node_labels[k] != v) all = false;
        }
        if (all) matching.push_back(node.spec.name);
      }
      if (matching.size() == 1) power.node = matching.front();
    }
  }
  // The launch's writes (this VMI, its virt-launcher pod, their status) wait for the rate limiter; the lab VM
  // is started now and reaches the scheduler when they are through.
  power.control_plane_wait_s = launch_wait_s();
  auto started = lab_.power_on(
      model_id, [](Expected<void>) {}, power);
  std::string now_ts = format_time(publisher_.now());
  // Scheduling starts once the pod is written, whether or not a node can take the VM.
  auto schedule = [&](json& st) {
    if (st.value("phase", "") == "Pending") enter_phase(st, "Scheduling", now_ts);
  };
  if (started && power.control_plane_wait_s > 0) {
    const std::string uid = stored->object["metadata"].value("uid", "");
    lab_.schedule(power.control_plane_wait_s, lifetime_.guard([this, ns, name, uid] {
      auto vmi_now = store_.get(Kind::virtual_machine_instances, ns, name);
      if (!vmi_now || vmi_now->object["metadata"].value("uid", "") != uid) return;
      const std::string ts = format_time(publisher_.now());
      publisher_.modify(Kind::virtual_machine_instances, ns, name, [&](json& object) {
        json& st = object["status"];
        if (st.value("phase", "") == "Pending") enter_phase(st, "Scheduling", ts);
      });
      events_.record(vmi_now->object, "Normal", "SuccessfulCreate",
                     "Created virtual machine pod virt-launcher-" + name, "virtualmachine-controller");
    }));
    return;
  }
  if (!started) {
    std::string message = started.error().message;
    publisher_.modify(Kind::virtual_machine_instances, ns, name, [&](json& object) {
      json& st = object["status"];
      schedule(st);
      set_condition(st, "PodScheduled", false, "Unschedulable", message, now_ts);
    });
    events_.record(stored->object, "Warning", "FailedScheduling", message, "default-scheduler");
    return;
  }
  publisher_.modify(Kind::virtual_machine_instances, ns, name,
                    [&](json& object) { schedule(object["status"]); });
  events_.record(stored->object, "Normal", "SuccessfulCreate",
                 "Created virtual machine pod virt-launcher-" + name, "virtualmachine-controller");
}

void VmController::stop_vmi(const std::string& ns, const std::string& name) {
  auto rt_it = vms_.find(ObjectStore::key(ns, name));
  if (rt_it == vms_.end()) return;
  Runtime& rt = rt_it->second;
  auto vmi = store_.get(Kind::virtual_machine_instances, ns, name);
  if (!vmi || rt.stopping) return;
  rt.stopping = true;
  events_.record(vmi->object, "Normal", "ShuttingDown", "Signaled Graceful Shutdown", "virt-handler",
                 string_field(vmi->object, {"status", "nodeName"}));
  auto finish = lifetime_.guard([this, ns, name] {
    auto it = vms_.find(ObjectStore::key(ns, name));
    if (it != vms_.end()) it->second.stopping = false;
    std::string ts = format_time(publisher_.now());
    auto updated = publisher_.modify(Kind::virtual_machine_instances, ns, name, [&](json& object) {
      json& st = object["status"];
      if (final_phase(st.value("phase", ""))) return;
      enter_phase(st, "Succeeded", ts);
      set_condition(st, "Ready", false, "PodTerminating", "", ts);
    });
    if (updated) {
      events_.record(updated->object, "Normal", "Stopped", "The VirtualMachineInstance was shut down.",
                     "virt-handler", string_field(updated->object, {"status", "nodeName"}));
    }
    reconcile(ns, name);
  });
  auto stopping = lab_.power_off(rt.model_id, [finish](Expected<void>) { finish(); });
  if (!stopping) finish();  // never powered on (unschedulable) or already off
}

void VmController::update_status(const std::string& ns, const std::string& name) {
  auto vm = store_.get(Kind::virtual_machines, ns, name);
  if (!vm) return;
  auto rt_it = vms_.find(ObjectStore::key(ns, name));
  bool stopping = rt_it != vms_.end() && rt_it->second.stopping;
  auto vmi = store_.get(Kind::virtual_machine_instances, ns, name);
  std::string phase = vmi ? string_field(vmi->object, {"status", "phase"}) : "";
  bool dv_failed = false, dv_pending = false;
  const json& volumes = field(vm->object, {"spec", "template", "spec", "volumes"});
  if (volumes.is_array()) {
    for (const auto& volume : volumes) {
      std::string dv_name = string_field(volume, {"dataVolume", "name"});
      if (dv_name.empty()) continue;
      auto dv = store_.get(Kind::data_volumes, ns, dv_name);
      std::string dv_phase = dv ? string_field(dv->object, {"status", "phase"}) : "";
      if (dv_phase == "Failed") dv_failed = true;
      if (dv_phase != "Succeeded") dv_pending = true;
    }
  }
  bool ready = vmi && phase == "Running" && condition_true(vmi->object, "Ready");
  std::string printable;
  if (dv_failed) {
    printable = "DataVolumeError";
  } else if (stopping) {
    printable = "Stopping";
  } else if (!vmi || final_phase(phase)) {
    printable = dv_pending ? "Provisioning" : "Stopped";
  } else if (phase == "Running") {
    printable = "Running";
  } else {
    const json& conditions = field(vmi->object, {"status", "conditions"});
    bool unschedulable = conditions.is_array() &&
                         std::any_of(conditions.begin(), conditions.end(),
                                     [](const json& c) { return c.value("reason", "") == "Unschedulable"; });
    printable = unschedulable ? "ErrorUnschedulable" : "Starting";
  }
  std::string strategy = run_strategy_of(vm->object);
  auto generation = vm->object["metadata"].value("generation", 1);
  std::string reason = ready ? "" : (vmi ? "PodNotReady" : "VMINotExists");
  std::string message = ready ? "" : (vmi ? "VMI is not ready" : "VMI does not exist");
  // Most calls (every VMI milestone) leave the VM's status as it is: check before copying the object, so that
  // the per-event cost of a storm does not include a deep copy and comparison of every VirtualMachine.
  if (const json& st = field(vm->object, {"status"}); st.is_object()) {
    auto same = [&](const char* key, const json& value) { return st.contains(key) && st[key] == value; };
    bool unchanged =
        same("printableStatus", printable) && same("ready", ready) && same("created", vmi != nullptr) &&
        same("runStrategy", strategy) && same("desiredGeneration", generation) &&
        same("observedGeneration", generation) &&
        !(vmi && vmi->object["status"].contains("interfaces") && st.contains("volumeSnapshotStatuses"));
    if (unchanged) {
      const json& conditions = field(st, {"conditions"});
      unchanged =
          conditions.is_array() && std::any_of(conditions.begin(), conditions.end(), [&](const json& c) {
            return c.value("type", "") == "Ready" && c.value("status", "") == (ready ? "True" : "False") &&
                   c.contains("reason") && c["reason"] == reason && c.contains("message") &&
                   c["message"] == message;
          });
    }
    if (unchanged) return;
  }
  std::string ts = format_time(publisher_.now());
  publisher_.modify(Kind::virtual_machines, ns, name, [&](json& object) {
    json& st = object["status"];
    if (!st.is_object()) st = json::object();
    st["printableStatus"] = printable;
    st["ready"] = ready;
    st["created"] = vmi != nullptr;
    st["runStrategy"] = strategy;
    st["desiredGeneration"] = generation;
    st["observedGeneration"] = generation;
    set_condition(st, "Ready", ready, reason, message, ts);
    if (vmi && vmi->object["status"].contains("interfaces")) {
      st.erase("volumeSnapshotStatuses");
    }
  });
}

}  // namespace bootstorm::sim::kube
