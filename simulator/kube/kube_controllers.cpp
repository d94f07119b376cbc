// The controllers behind the Kubernetes front, playing virt-controller, virt-handler and CDI against the lab
// model: VirtualMachine run strategies and the start/stop/restart subresources, VirtualMachineInstance phases
// driven by the model's boot milestones, DataVolume clones driven by the model's volume-clone flows,
// namespace termination, and the seed objects (namespaces, nodes, golden PVCs and DataSources).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "simulator/kube/forklift_controller.hpp"
#include "simulator/kube/kube_front_impl.hpp"

namespace bootstorm::sim::kube {
namespace {

constexpr const char* kGoldenAnnotation = "sim.bootstorm.io/golden-image";
constexpr const char* kProfileAnnotation = "sim.bootstorm.io/profile";

std::string key_of(const std::string& ns, const std::string& name) {
  return ObjectStore::key(ns, name);
}

std::pair<std::string, std::string> split_key(const std::string& key) {
  auto slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

int phase_rank(const std::string& phase) {
  static const char* const kOrder[] = {"",        "Pending",   "Scheduling", "Scheduled",
                                       "Running", "Succeeded", "Failed"};
  for (int i = 0; i < 7; ++i) {
    if (phase == kOrder[i]) return i;
  }
  return 0;
}

bool final_phase(const std::string& phase) {
  return phase == "Succeeded" || phase == "Failed";
}

json owner_reference(const json& owner) {
  return {{"apiVersion", owner.value("apiVersion", "")},
          {"kind", owner.value("kind", "")},
          {"name", owner["metadata"].value("name", "")},
          {"uid", owner["metadata"].value("uid", "")},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

bool owned_by(const json& object, const json& owner) {
  const json& refs = field(object, {"metadata", "ownerReferences"});
  if (!refs.is_array()) return false;
  std::string uid = owner["metadata"].value("uid", "");
  return std::any_of(refs.begin(), refs.end(), [&](const json& ref) { return ref.value("uid", "") == uid; });
}

// Sets a condition, keeping lastTransitionTime when its status does not change.
void set_condition(json& status, const std::string& type, bool value, const std::string& reason,
                   const std::string& message, const std::string& time, bool with_probe_time = true,
                   bool heartbeat = false) {
  if (!status.contains("conditions") || !status["conditions"].is_array())
    status["conditions"] = json::array();
  json& conditions = status["conditions"];
  std::string value_text = value ? "True" : "False";
  for (auto& condition : conditions) {
    if (condition.value("type", "") != type) continue;
    if (condition.value("status", "") != value_text) condition["lastTransitionTime"] = time;
    condition["status"] = value_text;
    condition["reason"] = reason;
    condition["message"] = message;
    if (heartbeat) condition["lastHeartbeatTime"] = time;
    return;
  }
  json condition = {{"type", type}, {"status", value_text}, {"lastTransitionTime", time}};
  if (with_probe_time) condition["lastProbeTime"] = nullptr;
  if (heartbeat) condition["lastHeartbeatTime"] = time;
  if (!reason.empty()) condition["reason"] = reason;
  if (!message.empty()) condition["message"] = message;
  conditions.push_back(std::move(condition));
}

bool condition_true(const json& object, const std::string& type) {
  const json& conditions = field(object, {"status", "conditions"});
  if (!conditions.is_array()) return false;
  return std::any_of(conditions.begin(), conditions.end(), [&](const json& c) {
    return c.value("type", "") == type && c.value("status", "") == "True";
  });
}

const std::vector<std::string> kVolumeSources = {
    "containerDisk",   "ephemeral",        "persistentVolumeClaim",
    "dataVolume",      "cloudInitNoCloud", "cloudInitConfigDrive",
    "emptyDisk",       "hostDisk",         "configMap",
    "secret",          "serviceAccount",   "downwardAPI",
    "downwardMetrics", "sysprep",          "memoryDump"};

const std::vector<std::string> kRunStrategies = {"Always",         "Halted", "Manual",
                                                 "RerunOnFailure", "Once",   "WaitAsReceiver"};

// spec.running and spec.runStrategy of a VirtualMachine's `spec` (an object), as the webhook checks them.
std::optional<ApiError> check_run_strategy(const ResourceType& type, const std::string& name,
                                           const json& spec) {
  if (spec.contains("running") && spec.contains("runStrategy") && !spec["running"].is_null() &&
      !spec["runStrategy"].is_null()) {
    return invalid(
        type, name, "spec.running",
        "Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please use "
        "RunStrategy instead");
  }
  if (spec.contains("runStrategy")) {
    const json& strategy = spec["runStrategy"];
    if (!strategy.is_string() || std::find(kRunStrategies.begin(), kRunStrategies.end(),
                                           strategy.get<std::string>()) == kRunStrategies.end()) {
      return invalid(type, name, "spec.runStrategy",
                     "Invalid value: " + strategy.dump() + ": Invalid RunStrategy");
    }
  }
  return std::nullopt;
}

// Which model milestone makes condition Ready true: the readiness probe decides (none: the domain running).
model::Milestone ready_milestone(const json& vmi_spec) {
  const json& probe = field(vmi_spec, {"readinessProbe"});
  if (!probe.is_object()) return model::Milestone::running;
  if (probe.contains("tcpSocket") || probe.contains("httpGet")) return model::Milestone::port_open;
  return model::Milestone::guest_agent;
}

json guest_os_info(const std::string& guest_os) {
  std::string upper = guest_os;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  if (upper.find("WINDOWS") != std::string::npos) {
    bool server = upper.find("SERVER") != std::string::npos;
    return {{"id", "mswindows"},
            {"kernelRelease", server ? "20348" : "19045"},
            {"kernelVersion", "10.0"},
            {"machine", "x86_64"},
            {"name", server ? "Microsoft Windows Server" : "Microsoft Windows"},
            {"prettyName", server ? "Windows Server 2022 Datacenter" : "Windows 10 Enterprise"},
            {"version", server ? "2022" : "10"},
            {"versionId", server ? "2022" : "10"}};
  }
  return {{"id", "rhel"},
          {"kernelRelease", "5.14.0-427.13.1.el9_4.x86_64"},
          {"kernelVersion", "#1 SMP PREEMPT_DYNAMIC"},
          {"machine", "x86_64"},
          {"name", "Red Hat Enterprise Linux"},
          {"prettyName", "Red Hat Enterprise Linux 9.4 (Plow)"},
          {"version", "9.4 (Plow)"},
          {"versionId", "9.4"}};
}

std::string format_progress(double percent) {
  return fmt::format("{:.2f}%", percent);
}

}  // namespace

std::string run_strategy_of(const json& vm) {
  const json& strategy = field(vm, {"spec", "runStrategy"});
  if (strategy.is_string()) return strategy.get<std::string>();
  const json& running = field(vm, {"spec", "running"});
  if (running.is_boolean()) return running.get<bool>() ? "Always" : "Halted";
  return "Halted";
}

// ---------------------------------------------------------------------------------------------------------
// Seed objects

void KubeFront::Impl::seed_objects() {
  std::string ts = format_time(now());
  auto add_namespace = [&](const std::string& name) {
    if (store.get(Kind::namespaces, "", name)) return;
    insert(Kind::namespaces,
           {{"apiVersion", "v1"},
            {"kind", "Namespace"},
            {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/metadata.name", name}}}}},
            {"spec", {{"finalizers", {"kubernetes"}}}},
            {"status", {{"phase", "Active"}}}});
  };
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) add_namespace(name);
  for (const auto& image : lab.golden_images()) add_namespace(image.spec.namespace_);

  int index = 0;
  for (const auto& node : lab.nodes()) {
    const model::Host* host = lab.find_host(node.host_id);
    int cores = host ? host->spec.cores : 32;
    double memory_gb = host ? host->spec.memory_gb : 256;
    json labels = {{"kubernetes.io/hostname", node.spec.name},
                   {"kubernetes.io/os", "linux"},
                   {"kubernetes.io/arch", "amd64"},
                   {"beta.kubernetes.io/os", "linux"},
                   {"beta.kubernetes.io/arch", "amd64"},
                   {"node-role.kubernetes.io/worker", ""},
                   {"kubevirt.io/schedulable", "true"}};
    for (const auto& [k, v] : node.spec.labels) labels[k] = v;
    std::string memory = fmt::format("{}Ki", static_cast<long long>(memory_gb * 1024 * 1024));
    json capacity = {{"cpu", std::to_string(cores * 2)},
                     {"memory", memory},
                     {"pods", "250"},
                     {"ephemeral-storage", "467039428Ki"},
                     {"devices.kubevirt.io/kvm", "1k"},
                     {"devices.kubevirt.io/tun", "1k"},
                     {"devices.kubevirt.io/vhost-net", "1k"}};
    json conditions = json::array();
    for (const auto& [type, reason, message] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
             {"DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
             {"PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
             {"Ready", "KubeletReady", "kubelet is posting ready status"}}) {
      conditions.push_back({{"type", type},
                            {"status", type == "Ready" ? "True" : "False"},
                            {"reason", reason},
                            {"message", message},
                            {"lastHeartbeatTime", ts},
                            {"lastTransitionTime", ts}});
    }
    insert(Kind::nodes,
           {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata",
             {{"name", node.spec.name},
              {"labels", labels},
              {"annotations", {{"sim.bootstorm.io/host", host ? host->spec.name : node.spec.host}}}}},
            {"spec", {{"podCIDR", fmt::format("10.128.{}.0/23", index * 2)}}},
            {"status",
             {{"capacity", capacity},
              {"allocatable", capacity},
              {"conditions", conditions},
              {"addresses",
               json::array({{{"type", "InternalIP"}, {"address", fmt::format("192.168.10.{}", 10 + index)}},
                            {{"type", "Hostname"}, {"address", node.spec.name}}})},
              {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
              {"nodeInfo",
               {{"machineID", fmt::format("{:032x}", 0xb005700000ULL + static_cast<unsigned>(index))},
                {"systemUUID", new_uid()},
                {"bootID", new_uid()},
                {"kernelVersion", "5.14.0-427.13.1.el9_4.x86_64"},
                {"osImage", "Red Hat Enterprise Linux CoreOS 416.94"},
                {"containerRuntimeVersion", "cri-o://1.29.4"},
                {"kubeletVersion", lab.spec().kube.server_version},
                {"kubeProxyVersion", lab.spec().kube.server_version},
                {"operatingSystem", "linux"},
                {"architecture", "amd64"}}}}}});
    ++index;
  }

  for (const auto& image : lab.golden_images()) {
    const model::GuestProfile* profile = lab.find_profile(image.spec.profile);
    std::string size =
        fmt::format("{}Gi", static_cast<long long>(std::ceil(profile ? profile->disk_gb : 40)));
    std::string storage_class =
        image.spec.storage_class.empty() ? lab.spec().kube.storage_class : image.spec.storage_class;
    const std::string& ns = image.spec.namespace_;
    const std::string& name = image.spec.name;
    json labels = {{"app.kubernetes.io/part-of", "bootstorm-lab"}};
    insert(Kind::persistent_volume_claims,
           {{"apiVersion", "v1"},
            {"kind", "PersistentVolumeClaim"},
            {"metadata",
             {{"name", name},
              {"namespace", ns},
              {"labels", labels},
              {"annotations",
               {{kGoldenAnnotation, ns + "/" + name}, {"pv.kubernetes.io/bind-completed", "yes"}}}}},
            {"spec",
             {{"accessModes", {"ReadWriteMany"}},
              {"resources", {{"requests", {{"storage", size}}}}},
              {"storageClassName", storage_class},
              {"volumeMode", "Block"},
              {"volumeName", "pvc-" + new_uid()}}},
            {"status",
             {{"phase", "Bound"}, {"accessModes", {"ReadWriteMany"}}, {"capacity", {{"storage", size}}}}}});
    json source = {{"pvc", {{"name", name}, {"namespace", ns}}}};
    json status = {{"source", source}};
    set_condition(status, "Ready", true, "Ready", "", ts, false, true);
    insert(Kind::data_sources, {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
                                {"kind", "DataSource"},
                                {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
                                {"spec", {{"source", source}}},
                                {"status", status}});
  }
}

// ---------------------------------------------------------------------------------------------------------
// Admission

std::optional<ApiError> KubeFront::Impl::admit_create(Kind kind, json& object) {
  const ResourceType& type = resource_type(kind);
  std::string name = object["metadata"].value("name", "");
  std::string ns = object["metadata"].value("namespace", "");
  if (kind == Kind::namespaces) {
    if (auto error = check_dns_name(type, name, DnsRule::label)) return error;
    object["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
    object["spec"] = {{"finalizers", {"kubernetes"}}};
    object["status"] = {{"phase", "Active"}};
    return std::nullopt;
  }
  if (kind == Kind::virtual_machine_instances) {
    return status_error(
        422, "Invalid",
        "VirtualMachineInstance.kubevirt.io \"" + name +
            "\" is invalid: the lab creates "
            "VirtualMachineInstances only for VirtualMachines; create a VirtualMachine instead",
        {{"name", name}, {"group", "kubevirt.io"}, {"kind", "VirtualMachineInstance"}});
  }
  if (kind == Kind::data_volumes) {
    const json& spec = field(object, {"spec"});
    if (!spec.is_object() || (!spec.contains("source") && !spec.contains("sourceRef"))) {
      return invalid(type, name, "spec", "Invalid value: Data volume should have either Source or SourceRef");
    }
    if (!spec.contains("pvc") && !spec.contains("storage")) {
      return invalid(type, name, "spec", "Invalid value: Missing Data volume PVC or Storage");
    }
    return std::nullopt;
  }
  if (kind != Kind::virtual_machines) return std::nullopt;

  // VirtualMachine: the validating webhook's essential checks.
  const json& spec = field(object, {"spec"});
  if (!spec.is_object()) return invalid(type, name, "spec", "Required value");
  const json& template_spec = field(spec, {"template", "spec"});
  if (!template_spec.is_object()) return invalid(type, name, "spec.template", "Required value");
  if (!field(template_spec, {"domain", "devices"}).is_object()) {
    return invalid(type, name, "spec.template.spec.domain.devices", "Required value");
  }
  if (auto error = check_run_strategy(type, name, spec)) return error;
  std::set<std::string> volume_names;
  const json& volumes = field(template_spec, {"volumes"});
  if (volumes.is_array()) {
    for (std::size_t i = 0; i < volumes.size(); ++i) {
      const json& volume = volumes[i];
      std::string path = fmt::format("spec.template.spec.volumes[{}]", i);
      if (!volume.is_object() || volume.value("name", "").empty())
        return invalid(type, name, path + ".name", "Required value");
      int sources = 0;
      for (const auto& source : kVolumeSources) sources += volume.contains(source) ? 1 : 0;
      if (sources != 1) {
        return invalid(type, name, path,
                       sources == 0 ? "must have exactly one source type, got none"
                                    : "must have exactly one source type, got several");
      }
      if (volume.contains("containerDisk") && string_field(volume, {"containerDisk", "image"}).empty()) {
        return invalid(type, name, path + ".containerDisk.image", "Required value");
      }
      volume_names.insert(volume["name"].get<std::string>());
    }
  }
  const json& disks = field(template_spec, {"domain", "devices", "disks"});
  if (disks.is_array()) {
    for (std::size_t i = 0; i < disks.size(); ++i) {
      std::string disk = disks[i].value("name", "");
      if (!volume_names.count(disk)) {
        return invalid(type, name, fmt::format("spec.template.spec.domain.devices.disks[{}].name", i),
                       "Invalid value: \"" + disk + "\": spec.template.spec.domain.devices.disks[" +
                           std::to_string(i) + "].name '" + disk + "' not found.");
      }
    }
  }
  const json& templates = field(spec, {"dataVolumeTemplates"});
  if (templates.is_array()) {
    for (std::size_t i = 0; i < templates.size(); ++i) {
      std::string path = fmt::format("spec.dataVolumeTemplates[{}]", i);
      if (string_field(templates[i], {"metadata", "name"}).empty()) {
        return invalid(type, name, path + ".metadata.name", "Required value");
      }
      const json& dv_spec = field(templates[i], {"spec"});
      if (!dv_spec.is_object() || (!dv_spec.contains("source") && !dv_spec.contains("sourceRef"))) {
        return invalid(type, name, path + ".spec",
                       "Invalid value: Data volume should have either Source or SourceRef");
      }
    }
  }

  // The lab VM behind it: its guest profile comes from the golden image the disks are cloned from.
  std::string profile = string_field(object, {"metadata", "annotations", kProfileAnnotation});
  if (profile.empty() && templates.is_array()) {
    for (const auto& t : templates) {
      std::string ds_name = string_field(t, {"spec", "sourceRef", "name"});
      std::string ds_ns = string_field(t, {"spec", "sourceRef", "namespace"});
      std::string pvc_name = string_field(t, {"spec", "source", "pvc", "name"});
      std::string pvc_ns = string_field(t, {"spec", "source", "pvc", "namespace"});
      if (!ds_name.empty()) {
        if (auto ds = store.get(Kind::data_sources, ds_ns.empty() ? ns : ds_ns, ds_name)) {
          pvc_name = string_field(ds->object, {"spec", "source", "pvc", "name"});
          pvc_ns = string_field(ds->object, {"spec", "source", "pvc", "namespace"});
        }
      }
      if (const auto* image = lab.find_golden_image(pvc_ns, pvc_name)) {
        profile = image->spec.profile;
        break;
      }
    }
  }
  if (profile.empty() && !lab.golden_images().empty()) profile = lab.golden_images().front().spec.profile;
  if (profile.empty() && !lab.spec().profiles.empty()) profile = lab.spec().profiles.front().name;
  model::Lab::CreateVmSpec vm_spec;
  vm_spec.name = name;
  vm_spec.namespace_ = ns;
  vm_spec.profile = profile;
  vm_spec.created_by_front = "kube";
  const json& cpu = field(template_spec, {"domain", "cpu"});
  if (cpu.is_object()) {
    int count = cpu.value("cores", 1) * cpu.value("sockets", 1) * cpu.value("threads", 1);
    if (count > 0) vm_spec.cpu_count = count;
  }
  std::string memory = string_field(template_spec, {"domain", "memory", "guest"});
  if (memory.empty()) memory = string_field(template_spec, {"domain", "resources", "requests", "memory"});
  if (auto bytes = parse_quantity(memory); bytes && *bytes > 0) {
    vm_spec.memory_mb = static_cast<int>(*bytes / 1048576.0);
  }
  const json& labels = field(object, {"metadata", "labels"});
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      if (v.is_string()) vm_spec.labels[k] = v.get<std::string>();
    }
  }
  // The simulated guest agent's configuration (simulator/README.md "Beacon"): the BOOTSTORM_* lines of the
  // cloud-init user data (the shape of deploy/guest/linux/cloud-init.yaml) become the guestinfo keys that the
  // lab server's beacon hook reads.
  if (volumes.is_array()) {
    static const std::pair<std::string_view, std::string_view> kBeaconLines[] = {
        {"BOOTSTORM_BEACON_URL=", model::kBeaconUrlKey},
        {"BOOTSTORM_BEACON_TOKEN=", model::kBeaconTokenKey},
        {"BOOTSTORM_VM_NAME=", model::kBeaconVmKey}};
    for (const auto& volume : volumes) {
      std::string user_data = string_field(volume, {"cloudInitNoCloud", "userData"});
      if (user_data.empty()) user_data = string_field(volume, {"cloudInitConfigDrive", "userData"});
      std::size_t pos = 0;
      while (pos < user_data.size()) {
        std::size_t end = user_data.find('\n', pos);
        if (end == std::string::npos) end = user_data.size();
        std::string_view line(user_data.data() + pos, end - pos);
        pos = end + 1;
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
        for (const auto& [prefix, key] : kBeaconLines) {
          if (line.starts_with(prefix)) vm_spec.guestinfo[std::string(key)] = line.substr(prefix.size());
        }
      }
    }
  }
  auto created = lab.create_vm(std::move(vm_spec));
  if (!created) {
    return status_error(500, "InternalError", "Internal error occurred: " + created.error().what());
  }
  std::string key = key_of(ns, name);
  vms[key] = VmRuntime{*created};
  vm_by_model_id[*created] = key;
  return std::nullopt;
}

std::optional<ApiError> KubeFront::Impl::admit_update(Kind kind, const json& /*old_object*/, json& object) {
  if (kind != Kind::virtual_machines) return std::nullopt;
  const ResourceType& type = resource_type(kind);
  std::string name = object["metadata"].value("name", "");
  const json& spec = field(object, {"spec"});
  if (!spec.is_object()) return std::nullopt;
  return check_run_strategy(type, name, spec);
}

void KubeFront::Impl::after_create(Kind kind, const ObjectPtr& object) {
  std::string ns = object->object["metadata"].value("namespace", "");
  std::string name = object->object["metadata"].value("name", "");
  if (forklift) forklift->on_object_changed(kind, ns, name);
  if (kind == Kind::virtual_machines) {
    reconcile_vm(ns, name);
  } else if (kind == Kind::data_volumes) {
    start_data_volume(ns, name);
  }
}

void KubeFront::Impl::after_update(Kind kind, const ObjectPtr& before, const ObjectPtr& after) {
  (void)before;
  if (forklift) {
    forklift->on_object_changed(kind, after->object["metadata"].value("namespace", ""),
                                after->object["metadata"].value("name", ""));
  }
  if (kind == Kind::virtual_machines) {
    reconcile_vm(after->object["metadata"].value("namespace", ""),
                 after->object["metadata"].value("name", ""));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Deletion

ApiResult KubeFront::Impl::delete_object(Kind kind, const std::string& ns, const std::string& name,
                                         Propagation propagation) {
  auto current = store.get(kind, ns, name);
  if (!current) return not_found(resource_type(kind), name);
  std::string key = key_of(ns, name);
  switch (kind) {
    case Kind::virtual_machines: {
      auto it = vms.find(key);
      if (store.get(Kind::virtual_machine_instances, ns, name)) {
        store.remove(Kind::virtual_machine_instances, ns, name);
        emit_event(current->object, "Normal", "SuccessfulDelete",
                   "Stopped the virtual machine by deleting the virtual machine instance " +
                       std::string(current->object["metadata"].value("uid", "")),
                   "virtualmachine-controller");
      }
      if (it != vms.end()) {
        vm_by_model_id.erase(it->second.model_id);
        (void)lab.delete_vm(it->second.model_id);
        vms.erase(it);
      }
      for (const auto& dv : store.list(Kind::data_volumes, ns).items) {
        if (!owned_by(dv->object, current->object)) continue;
        std::string dv_name = dv->object["metadata"].value("name", "");
        if (propagation == Propagation::orphan) {
          // The garbage collector removes the owner's reference and leaves the dependents.
          const std::string owner_uid = current->object["metadata"].value("uid", "");
          auto drop_owner = [&](json& object) {
            json& refs = object["metadata"]["ownerReferences"];
            if (!refs.is_array()) return;
            json kept = json::array();
            for (const auto& ref : refs)
              if (ref.value("uid", "") != owner_uid) kept.push_back(ref);
            if (kept.empty()) {
              object["metadata"].erase("ownerReferences");
            } else {
              refs = std::move(kept);
            }
          };
          modify(Kind::data_volumes, ns, dv_name, drop_owner);
          modify(Kind::persistent_volume_claims, ns, dv_name, drop_owner);
          continue;
        }
        clones.erase(key_of(ns, dv_name));
        store.remove(Kind::data_volumes, ns, dv_name);
        store.remove(Kind::persistent_volume_claims, ns, dv_name);
      }
      return store.remove(kind, ns, name);
    }
    case Kind::virtual_machine_instances: {
      auto it = vms.find(key);
      if (it != vms.end()) {
        const model::Vm* vm = lab.find_vm(it->second.model_id);
        if (vm && vm->power != model::PowerState::powered_off && !it->second.stopping) {
          it->second.stopping = true;
          std::weak_ptr<Impl> weak = shared_from_this();
          auto started = lab.power_off(it->second.model_id, [weak, ns, name](Expected<void>) {
            auto self = weak.lock();
            if (!self || !self->alive) return;
            auto found = self->vms.find(key_of(ns, name));
            if (found == self->vms.end()) return;
            found->second.stopping = false;
            self->reconcile_vm(ns, name);
          });
          if (!started) it->second.stopping = false;
        }
      }
      auto removed = store.remove(kind, ns, name);
      if (it != vms.end()) reconcile_vm(ns, name);
      return removed;
    }
    case Kind::data_volumes: {
      clones.erase(key);
      store.remove(Kind::persistent_volume_claims, ns, name);
      return store.remove(kind, ns, name);
    }
    case Kind::namespaces: {
      terminate_namespace(name);
      return store.get(kind, ns, name);
    }
    default: {
      if (kind == Kind::events) {
        auto it = std::find(event_order.begin(), event_order.end(), std::make_pair(ns, name));
        if (it != event_order.end()) event_order.erase(it);
      }
      auto removed = store.remove(kind, ns, name);
      if (forklift) forklift->on_object_deleted(kind, ns, name);
      return removed;
    }
  }
}

void KubeFront::Impl::terminate_namespace(const std::string& name) {
  std::string ts = format_time(now());
  modify(Kind::namespaces, "", name, [&](json& ns) {
    if (!ns["metadata"].contains("deletionTimestamp")) ns["metadata"]["deletionTimestamp"] = ts;
    ns["status"]["phase"] = "Terminating";
  });
  std::weak_ptr<Impl> weak = shared_from_this();
  // The namespace controller empties the namespace shortly after, then removes it.
  lab.schedule(0.2, [weak, name] {
    auto self = weak.lock();
    if (!self || !self->alive) return;
    for (Kind kind : {Kind::virtual_machines, Kind::virtual_machine_instances, Kind::data_volumes}) {
      for (const auto& object : self->store.list(kind, name).items) {
        (void)self->delete_object(kind, name, object->object["metadata"].value("name", ""));
      }
    }
    for (std::size_t i = 0; i < resource_types().size(); ++i) {
      Kind kind = static_cast<Kind>(i);
      if (!resource_types()[i].namespaced) continue;
      for (const auto& object : self->store.list(kind, name).items) {
        (void)self->delete_object(kind, name, object->object["metadata"].value("name", ""));
      }
    }
    self->store.remove(Kind::namespaces, "", name);
  });
}

// ---------------------------------------------------------------------------------------------------------
// VirtualMachine controller

void KubeFront::Impl::reconcile_vm(const std::string& ns, const std::string& name) {
  auto vm = store.get(Kind::virtual_machines, ns, name);
  if (!vm) return;
  auto rt_it = vms.find(key_of(ns, name));
  if (rt_it == vms.end()) return;
  VmRuntime& rt = rt_it->second;
  if (vm->object["metadata"].contains("deletionTimestamp")) return;

  // DataVolumes of the templates (re-created if someone deleted them).
  const json& templates = field(vm->object, {"spec", "dataVolumeTemplates"});
  if (templates.is_array()) {
    for (const auto& t : templates) {
      std::string dv_name = string_field(t, {"metadata", "name"});
      if (dv_name.empty() || store.get(Kind::data_volumes, ns, dv_name)) continue;
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
      auto stored = insert(Kind::data_volumes, std::move(dv));
      emit_event(vm->object, "Normal", "SuccessfulDataVolumeCreate", "Created DataVolume " + dv_name,
                 "virtualmachine-controller");
      start_data_volume(ns, dv_name);
    }
  }
  auto vmi = store.get(Kind::virtual_machine_instances, ns, name);
  std::string phase = vmi ? string_field(vmi->object, {"status", "phase"}) : "";
  bool final = vmi && final_phase(phase);
  if (rt.stopping) {
    update_vm_status(ns, name);
    return;
  }
  // Volumes must be populated before the VMI is created.
  bool volumes_ready = true;
  const json& volumes = field(vm->object, {"spec", "template", "spec", "volumes"});
  if (volumes.is_array()) {
    for (const auto& volume : volumes) {
      std::string dv_name = string_field(volume, {"dataVolume", "name"});
      if (!dv_name.empty()) {
        auto dv = store.get(Kind::data_volumes, ns, dv_name);
        if (!dv || string_field(dv->object, {"status", "phase"}) != "Succeeded") volumes_ready = false;
      }
      std::string claim = string_field(volume, {"persistentVolumeClaim", "claimName"});
      if (!claim.empty() && !store.get(Kind::persistent_volume_claims, ns, claim)) volumes_ready = false;
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
  update_vm_status(ns, name);
}

void KubeFront::Impl::delete_vmi_object(const std::string& ns, const std::string& name) {
  auto vmi = store.get(Kind::virtual_machine_instances, ns, name);
  if (!vmi) return;
  store.remove(Kind::virtual_machine_instances, ns, name);
  if (auto vm = store.get(Kind::virtual_machines, ns, name)) {
    emit_event(vm->object, "Normal", "SuccessfulDelete",
               "Stopped the virtual machine by deleting the virtual machine instance " +
                   vmi->object["metadata"].value("uid", ""),
               "virtualmachine-controller");
  }
}

void KubeFront::Impl::create_vmi(const std::string& ns, const std::string& name) {
  auto vm = store.get(Kind::virtual_machines, ns, name);
  auto rt_it = vms.find(key_of(ns, name));
  if (!vm || rt_it == vms.end()) return;
  VmRuntime& rt = rt_it->second;
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
  if (!spec["domain"].contains("firmware")) spec["domain"]["firmware"] = {{"uuid", new_uid()}};
  if (!spec["domain"].contains("machine")) spec["domain"]["machine"] = {{"type", "q35"}};
  const model::Vm* model_vm = lab.find_vm(model_id);
  int cpus = model_vm ? model_vm->cpu_count : 1;
  std::string ts = format_time(now());
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
  auto stored = insert(Kind::virtual_machine_instances, std::move(vmi));
  rt.once_started = true;
  emit_event(vm->object, "Normal", "SuccessfulCreate",
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
      for (const auto& node : lab.nodes()) {
        auto node_object = store.get(Kind::nodes, "", node.spec.name);
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
  std::weak_ptr<Impl> weak = shared_from_this();
  auto started = lab.power_on(
      model_id, [](Expected<void>) {}, power);
  std::string now_ts = format_time(now());
  // Scheduling starts whether or not a node can take the VM.
  auto schedule = [&](json& st) {
    if (st.value("phase", "") == "Pending") {
      st["phase"] = "Scheduling";
      st["phaseTransitionTimestamps"].push_back(
          {{"phase", "Scheduling"}, {"phaseTransitionTimestamp", now_ts}});
    }
  };
  if (!started) {
    std::string message = started.error().message;
    modify(Kind::virtual_machine_instances, ns, name, [&](json& object) {
      json& st = object["status"];
      schedule(st);
      set_condition(st, "PodScheduled", false, "Unschedulable", message, now_ts);
    });
    emit_event(stored->object, "Warning", "FailedScheduling", message, "default-scheduler");
    return;
  }
  modify(Kind::virtual_machine_instances, ns, name, [&](json& object) { schedule(object["status"]); });
  emit_event(stored->object, "Normal", "SuccessfulCreate",
             "Created virtual machine pod virt-launcher-" + name, "virtualmachine-controller");
}

void KubeFront::Impl::stop_vmi(const std::string& ns, const std::string& name) {
  auto rt_it = vms.find(key_of(ns, name));
  if (rt_it == vms.end()) return;
  VmRuntime& rt = rt_it->second;
  auto vmi = store.get(Kind::virtual_machine_instances, ns, name);
  if (!vmi || rt.stopping) return;
  rt.stopping = true;
  emit_event(vmi->object, "Normal", "ShuttingDown", "Signaled Graceful Shutdown", "virt-handler",
             string_field(vmi->object, {"status", "nodeName"}));
  std::weak_ptr<Impl> weak = shared_from_this();
  auto finish = [weak, ns, name] {
    auto self = weak.lock();
    if (!self || !self->alive) return;
    auto it = self->vms.find(key_of(ns, name));
    if (it != self->vms.end()) it->second.stopping = false;
    std::string ts = format_time(self->now());
    auto updated = self->modify(Kind::virtual_machine_instances, ns, name, [&](json& object) {
      json& st = object["status"];
      if (final_phase(st.value("phase", ""))) return;
      st["phase"] = "Succeeded";
      st["phaseTransitionTimestamps"].push_back({{"phase", "Succeeded"}, {"phaseTransitionTimestamp", ts}});
      set_condition(st, "Ready", false, "PodTerminating", "", ts);
    });
    if (updated) {
      self->emit_event(updated->object, "Normal", "Stopped", "The VirtualMachineInstance was shut down.",
                       "virt-handler", string_field(updated->object, {"status", "nodeName"}));
    }
    self->reconcile_vm(ns, name);
  };
  auto stopping = lab.power_off(rt.model_id, [finish](Expected<void>) { finish(); });
  if (!stopping) finish();  // never powered on (unschedulable) or already off
}

void KubeFront::Impl::update_vm_status(const std::string& ns, const std::string& name) {
  auto vm = store.get(Kind::virtual_machines, ns, name);
  if (!vm) return;
  auto rt_it = vms.find(key_of(ns, name));
  bool stopping = rt_it != vms.end() && rt_it->second.stopping;
  auto vmi = store.get(Kind::virtual_machine_instances, ns, name);
  std::string phase = vmi ? string_field(vmi->object, {"status", "phase"}) : "";
  bool dv_failed = false, dv_pending = false;
  const json& volumes = field(vm->object, {"spec", "template", "spec", "volumes"});
  if (volumes.is_array()) {
    for (const auto& volume : volumes) {
      std::string dv_name = string_field(volume, {"dataVolume", "name"});
      if (dv_name.empty()) continue;
      auto dv = store.get(Kind::data_volumes, ns, dv_name);
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
  std::string ts = format_time(now());
  modify(Kind::virtual_machines, ns, name, [&](json& object) {
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

// ---------------------------------------------------------------------------------------------------------
// VirtualMachineInstance milestones from the model (virt-handler)

void KubeFront::Impl::on_lab_event(const model::VmEvent& event) {
  if (event.type == model::VmEvent::Type::deleted || !event.milestone) return;
  auto it = vm_by_model_id.find(event.vm.id);
  if (it == vm_by_model_id.end()) return;
  auto [ns, name] = split_key(it->second);
  auto vmi = store.get(Kind::virtual_machine_instances, ns, name);
  if (!vmi) return;
  const model::Vm& vm = event.vm;
  model::Milestone milestone = *event.milestone;
  double at = vm.milestone(milestone).value_or(now());
  std::string ts = format_time(at);
  model::Milestone ready_at = ready_milestone(vmi->object["spec"]);
  // port_open and beacon change the VMI only when they make it Ready: skip the copy-and-compare otherwise.
  if (milestone == model::Milestone::beacon ||
      (milestone == model::Milestone::port_open && ready_at != milestone)) {
    return;
  }

  auto advance_phase = [&](json& status, const std::string& phase) {
    std::string current = status.value("phase", "");
    if (final_phase(current) || phase_rank(phase) <= phase_rank(current)) return;
    status["phase"] = phase;
    status["phaseTransitionTimestamps"].push_back({{"phase", phase}, {"phaseTransitionTimestamp", ts}});
  };
  std::string started_event;
  auto updated = modify(Kind::virtual_machine_instances, ns, name, [&](json& object) {
    json& status = object["status"];
    if (final_phase(status.value("phase", ""))) return;
    switch (milestone) {
      case model::Milestone::scheduled: {
        advance_phase(status, "Scheduled");
        status["nodeName"] = vm.node;
        object["metadata"]["labels"]["kubevirt.io/nodeName"] = vm.node;
        status["activePods"] = {{object["metadata"].value("uid", ""), vm.node}};
        set_condition(status, "PodScheduled", true, "", "", ts);
        break;
      }
      case model::Milestone::running: {
        if (status.value("phase", "") != "Running") started_event = "Started";
        advance_phase(status, "Running");
        if (!vm.node.empty()) status["nodeName"] = vm.node;
        json interfaces = json::array();
        const json& declared = field(object, {"spec", "domain", "devices", "interfaces"});
        std::vector<std::string> names;
        if (declared.is_array()) {
          for (const auto& i : declared) names.push_back(i.value("name", "default"));
        }
        if (names.empty()) names.push_back("default");
        for (std::size_t i = 0; i < names.size(); ++i) {
          std::string mac = fmt::format("02:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", (rng() & 0xFF),
                                        (rng() & 0xFF), (rng() & 0xFF), (rng() & 0xFF), i);
          interfaces.push_back({{"name", names[i]},
                                {"mac", mac},
                                {"infoSource", "domain"},
                                {"queueCount", 1},
                                {"linkState", "up"},
                                {"podInterfaceName", i == 0 ? "eth0" : fmt::format("net{}", i)}});
        }
        status["interfaces"] = interfaces;
        status["migrationMethod"] = "BlockMigration";
        status["migrationTransport"] = "Unix";
        status["volumeStatus"] = json::array();
        const json& vols = field(object, {"spec", "volumes"});
        if (vols.is_array()) {
          for (const auto& volume : vols) {
            json entry = {{"name", volume.value("name", "")}, {"target", ""}};
            if (volume.contains("dataVolume") || volume.contains("persistentVolumeClaim")) {
              std::string claim = volume.contains("dataVolume")
                                      ? string_field(volume, {"dataVolume", "name"})
                                      : string_field(volume, {"persistentVolumeClaim", "claimName"});
              entry["persistentVolumeClaimInfo"] = {
                  {"claimName", claim}, {"accessModes", {"ReadWriteMany"}}, {"volumeMode", "Block"}};
            }
            status["volumeStatus"].push_back(std::move(entry));
          }
        }
        set_condition(status, "LiveMigratable", true, "", "", ts);
        if (ready_at == model::Milestone::running) set_condition(status, "Ready", true, "", "", ts);
        break;
      }
      case model::Milestone::guest_agent: {
        set_condition(status, "AgentConnected", true, "", "", ts);
        status["guestOSInfo"] = guest_os_info(vm.guest_os);
        if (status.contains("interfaces") && status["interfaces"].is_array()) {
          for (std::size_t i = 0; i < status["interfaces"].size(); ++i) {
            status["interfaces"][i]["infoSource"] = "domain, guest-agent";
            status["interfaces"][i]["interfaceName"] = fmt::format("eth{}", i);
          }
        }
        if (ready_at == model::Milestone::guest_agent) set_condition(status, "Ready", true, "", "", ts);
        break;
      }
      case model::Milestone::ip_assigned: {
        if (!status.contains("interfaces") || !status["interfaces"].is_array() ||
            status["interfaces"].empty()) {
          status["interfaces"] = json::array({{{"name", "default"}, {"infoSource", "domain, guest-agent"}}});
        }
        status["interfaces"][0]["ipAddress"] = vm.ip;
        status["interfaces"][0]["ipAddresses"] = {vm.ip};
        break;
      }
      case model::Milestone::port_open: {
        if (ready_at == model::Milestone::port_open) set_condition(status, "Ready", true, "", "", ts);
        break;
      }
      case model::Milestone::beacon:
        break;
    }
  });
  if (updated && updated != vmi) {
    // This version carries the milestone: the watch that first writes it stamps the truth's "delivered".
    if (undelivered.size() >= kMaxUndelivered) undelivered.clear();  // nobody watches: do not grow forever
    undelivered.emplace(updated->resource_version, std::make_pair(vm.id, milestone));
  }
  if (updated && !started_event.empty()) {
    emit_event(updated->object, "Normal", "Started", "VirtualMachineInstance started.", "virt-handler",
               vm.node);
  }
  update_vm_status(ns, name);
}

// ---------------------------------------------------------------------------------------------------------
// start / stop / restart subresources (virt-api)

http::ServerResponse KubeFront::Impl::subresource_action(const Route& route,
                                                         const http::ServerRequest& request) {
  const std::string& ns = route.ns;
  const std::string& name = route.name;
  const std::string& action = route.subresource;
  json body = json::object();
  if (!request.body.empty()) {
    body = json::parse(request.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      return error_response(bad_request("Can not unmarshal Request body to struct, error: invalid JSON"));
    }
  }
  bool dry_run = body.contains("dryRun") && body["dryRun"].is_array() && !body["dryRun"].empty();
  auto vm = store.get(Kind::virtual_machines, ns, name);
  if (!vm) {
    return error_response(
        status_error(404, "NotFound", "virtualmachine.kubevirt.io \"" + name + "\" not found",
                     {{"name", name}, {"group", "kubevirt.io"}, {"kind", "virtualmachine"}}));
  }
  auto rt_it = vms.find(key_of(ns, name));
  if (rt_it == vms.end()) return error_response(server_fault(500));
  VmRuntime& rt = rt_it->second;
  auto vmi = store.get(Kind::virtual_machine_instances, ns, name);
  std::string phase = vmi ? string_field(vmi->object, {"status", "phase"}) : "";
  bool final = final_phase(phase);
  std::string strategy = run_strategy_of(vm->object);
  bool uses_running = field(vm->object, {"spec", "runStrategy"}).is_null() &&
                      field(vm->object, {"spec", "running"}).is_boolean();

  // Patches spec.runStrategy (or the deprecated spec.running) like virt-api's getRunningPatch.
  auto set_running = [&](bool running) {
    auto before = store.get(Kind::virtual_machines, ns, name);
    auto after = modify(Kind::virtual_machines, ns, name, [&](json& object) {
      if (uses_running) {
        object["spec"]["running"] = running;
      } else {
        object["spec"]["runStrategy"] = running ? "Always" : "Halted";
      }
      object["metadata"]["generation"] = object["metadata"].value("generation", 1) + 1;
    });
    if (after) after_update(Kind::virtual_machines, before, after);
  };

  if (action == "start") {
    if (vmi && !final && phase != "Unknown" && !phase.empty()) {
      return error_response(kubevirt_conflict("virtualmachine", name, "VM is already running"));
    }
    if (strategy == "Always" || strategy == "Once") {
      return error_response(
          kubevirt_conflict("virtualmachine", name, strategy + " does not support manual start requests"));
    }
    if (strategy == "RerunOnFailure" && vmi && phase == "Failed") {
      return error_response(kubevirt_conflict(
          "virtualmachine", name, "RerunOnFailure does not support starting VM from failed state"));
    }
    if (!dry_run) {
      if (strategy == "Halted") {
        set_running(true);
      } else {
        rt.start_requested = true;
        reconcile_vm(ns, name);
      }
    }
  } else if (action == "stop") {
    bool has_vmi = vmi != nullptr;
    std::optional<long long> grace;
    if (body.contains("gracePeriod") && body["gracePeriod"].is_number_integer())
      grace = body["gracePeriod"].get<long long>();
    if (strategy == "Halted") {
      if (!has_vmi || final)
        return error_response(kubevirt_conflict("virtualmachine", name, "VM is not running"));
      const json& old_grace = field(vmi->object, {"spec", "terminationGracePeriodSeconds"});
      if (!grace || (old_grace.is_number_integer() && *grace >= old_grace.get<long long>())) {
        return error_response(kubevirt_conflict(
            "virtualmachine", name, "Halted only supports manual stop requests with a shorter graceperiod"));
      }
      if (!dry_run) {
        rt.stop_requested = true;
        reconcile_vm(ns, name);
      }
    } else if (strategy == "RerunOnFailure" || strategy == "Manual") {
      if (!has_vmi || final)
        return error_response(kubevirt_conflict("virtualmachine", name, "VM is not running"));
      if (!dry_run) {
        rt.stop_requested = true;
        reconcile_vm(ns, name);
      }
    } else if (!dry_run) {
      set_running(false);
    }
  } else {  // restart
    if (strategy == "Halted" || strategy == "Once") {
      return error_response(kubevirt_conflict(
          "virtualmachine", name, "RunStategy " + strategy + " does not support manual restart requests"));
    }
    if (!vmi) return error_response(kubevirt_conflict("virtualmachine", name, "VM is not running: Halted"));
    if (!dry_run) {
      rt.start_requested = true;
      if (!final) rt.stop_requested = true;
      reconcile_vm(ns, name);
    }
  }
  http::ServerResponse response;
  response.status = 202;
  return response;
}

// ---------------------------------------------------------------------------------------------------------
// DataVolume controller (CDI)

void KubeFront::Impl::start_data_volume(const std::string& ns, const std::string& name) {
  auto dv = store.get(Kind::data_volumes, ns, name);
  if (!dv) return;
  const json& spec = field(dv->object, {"spec"});
  std::string ts = format_time(now());
  auto set_dv = [&](const std::string& phase, const std::string& progress,
                    const std::function<void(json&)>& more) {
    return modify(Kind::data_volumes, ns, name, [&](json& object) {
      json& status = object["status"];
      if (!status.is_object()) status = json::object();
      status["phase"] = phase;
      status["progress"] = progress;
      status["claimName"] = name;
      if (!status.contains("restartCount")) status["restartCount"] = 0;
      if (more) more(status);
    });
  };
  auto owner_vm = [&]() -> std::string {
    const json& refs = field(dv->object, {"metadata", "ownerReferences"});
    if (refs.is_array()) {
      for (const auto& ref : refs) {
        if (ref.value("kind", "") == "VirtualMachine") return ref.value("name", "");
      }
    }
    return {};
  };

  // The PVC the DataVolume populates.
  json pvc_spec = field(spec, {"pvc"});
  if (!pvc_spec.is_object()) pvc_spec = field(spec, {"storage"});
  if (!pvc_spec.is_object()) pvc_spec = json::object();
  if (!pvc_spec.contains("storageClassName")) pvc_spec["storageClassName"] = lab.spec().kube.storage_class;
  if (!pvc_spec.contains("accessModes")) pvc_spec["accessModes"] = {"ReadWriteMany"};
  if (!pvc_spec.contains("volumeMode")) pvc_spec["volumeMode"] = "Block";

  // Resolve the clone source: sourceRef DataSource -> PVC, or source.pvc; the PVC leads to a golden image.
  std::string src_ns, src_name, missing;
  bool clone = false;
  if (spec.contains("sourceRef")) {
    std::string ds_ns = string_field(spec, {"sourceRef", "namespace"});
    if (ds_ns.empty()) ds_ns = ns;
    std::string ds_name = string_field(spec, {"sourceRef", "name"});
    auto ds = store.get(Kind::data_sources, ds_ns, ds_name);
    clone = true;
    if (!ds) {
      missing = "DataSource " + ds_ns + "/" + ds_name + " not found";
    } else {
      src_ns = string_field(ds->object, {"spec", "source", "pvc", "namespace"});
      src_name = string_field(ds->object, {"spec", "source", "pvc", "name"});
    }
  } else if (field(spec, {"source", "pvc"}).is_object()) {
    clone = true;
    src_ns = string_field(spec, {"source", "pvc", "namespace"});
    src_name = string_field(spec, {"source", "pvc", "name"});
  }
  const model::GoldenImage* golden = nullptr;
  if (clone && missing.empty()) {
    golden = lab.find_golden_image(src_ns, src_name);
    if (!golden) {
      auto pvc = store.get(Kind::persistent_volume_claims, src_ns, src_name);
      std::string origin =
          pvc ? string_field(pvc->object, {"metadata", "annotations", kGoldenAnnotation}) : "";
      if (!origin.empty()) {
        auto [g_ns, g_name] = split_key(origin);
        golden = lab.find_golden_image(g_ns, g_name);
      }
      if (!golden) missing = "source PVC " + src_ns + "/" + src_name + " not found";
    }
  }
  json pvc_annotations = json::object();
  if (golden) pvc_annotations[kGoldenAnnotation] = golden->spec.namespace_ + "/" + golden->spec.name;
  json pvc = {
      {"apiVersion", "v1"},
      {"kind", "PersistentVolumeClaim"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"annotations", pvc_annotations},
        {"labels", {{"app", "containerized-data-importer"}, {"app.kubernetes.io/component", "storage"}}},
        {"ownerReferences", json::array({owner_reference(dv->object)})}}},
      {"spec", pvc_spec},
      {"status", {{"phase", "Pending"}}}};
  if (!store.get(Kind::persistent_volume_claims, ns, name))
    insert(Kind::persistent_volume_claims, std::move(pvc));

  if (clone && !missing.empty()) {
    set_dv("Pending", "N/A", [&](json& status) {
      set_condition(status, "Bound", false, "Pending", "PVC " + name + " Pending", ts, false, true);
      set_condition(status, "Ready", false, "CloneWithoutSource", missing, ts, false, true);
      set_condition(status, "Running", false, "CloneWithoutSource", missing, ts, false, true);
    });
    emit_event(dv->object, "Warning", "CloneWithoutSource", missing, "datavolume-controller");
    return;
  }
  auto bind_pvc = [&] {
    modify(Kind::persistent_volume_claims, ns, name, [&](json& object) {
      object["status"]["phase"] = "Bound";
      object["status"]["accessModes"] = object["spec"].value("accessModes", json::array({"ReadWriteMany"}));
      std::string size = string_field(object, {"spec", "resources", "requests", "storage"});
      if (!size.empty()) object["status"]["capacity"] = {{"storage", size}};
      object["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes";
    });
  };
  auto succeed = [&](const std::string& reason) {
    bind_pvc();
    set_dv("Succeeded", "100.0%", [&](json& status) {
      set_condition(status, "Bound", true, "Bound", "PVC " + name + " Bound", ts, false, true);
      set_condition(status, "Ready", true, "", "", ts, false, true);
      set_condition(status, "Running", false, reason, "", ts, false, true);
    });
  };
  if (!clone) {
    // blank, or an import (http, registry, s3, ...): the lab has no import network, so the volume is
    // populated at once; DataVolume-based imports are not what a boot storm measures.
    succeed("Completed");
    std::string owner = owner_vm();
    if (!owner.empty()) reconcile_vm(ns, owner);
    return;
  }

  model::VolumeCloneRequest request;
  std::string in_progress = "CloneInProgress";
  if (options.clone_strategy == "copy") {
    request.kind = model::CloneKind::cdi_copy;
  } else if (options.clone_strategy == "snapshot") {
    request.kind = model::CloneKind::cdi_snapshot;
    in_progress = "SnapshotForSmartCloneInProgress";
  } else {
    request.kind = model::CloneKind::cdi_csi_clone;
    in_progress = "CSICloneInProgress";
  }
  request.source_image = golden->spec.name;
  request.source_image_namespace = golden->spec.namespace_;
  set_dv("CloneScheduled", "N/A", [&](json& status) {
    set_condition(status, "Bound", false, "Pending", "PVC " + name + " Pending", ts, false, true);
    set_condition(status, "Ready", false, "CloneScheduled", "", ts, false, true);
    set_condition(status, "Running", false, "CloneScheduled", "", ts, false, true);
  });
  emit_event(dv->object, "Normal", "CloneScheduled",
             "Cloning from " + src_ns + "/" + src_name + " into " + ns + "/" + name + " scheduled",
             "datavolume-controller");
  std::weak_ptr<Impl> weak = shared_from_this();
  auto op = lab.clone_volume(request, [weak, ns, name](Expected<void> result) {
    auto self = weak.lock();
    if (self && self->alive) self->finish_clone(ns, name, result);
  });
  if (!op) {
    finish_clone(ns, name, op.error());
    return;
  }
  bind_pvc();
  set_dv(in_progress, format_progress(0), [&](json& status) {
    set_condition(status, "Bound", true, "Bound", "PVC " + name + " Bound", ts, false, true);
    set_condition(status, "Running", true, "Pod is running", "", ts, false, true);
  });
  emit_event(dv->object, "Normal", in_progress,
             "Cloning from " + src_ns + "/" + src_name + " into " + ns + "/" + name + " in progress",
             "datavolume-controller");
  const model::GuestProfile* profile = lab.find_profile(golden->spec.profile);
  CloneRuntime runtime;
  runtime.datastore_id = golden->datastore_id;
  runtime.size_mb = (profile ? profile->disk_used_gb : 20) * 1024;
  runtime.in_progress_phase = in_progress;
  // A clone whose flow already finished (zero-size) must not get a progress entry.
  if (auto current = store.get(Kind::data_volumes, ns, name);
      current && string_field(current->object, {"status", "phase"}) == in_progress) {
    clones[key_of(ns, name)] = runtime;
  }
  if (!progress_ticker && !clones.empty()) {
    progress_ticker = true;
    lab.schedule(options.progress_interval_s, [weak] {
      if (auto self = weak.lock(); self && self->alive) self->progress_tick();
    });
  }
}

void KubeFront::Impl::finish_clone(const std::string& ns, const std::string& name,
                                   const Expected<void>& result) {
  clones.erase(key_of(ns, name));
  auto dv = store.get(Kind::data_volumes, ns, name);
  if (!dv) return;
  std::string ts = format_time(now());
  std::string source = "the source";
  if (result) {
    modify(Kind::data_volumes, ns, name, [&](json& object) {
      json& status = object["status"];
      status["phase"] = "Succeeded";
      status["progress"] = "100.0%";
      set_condition(status, "Bound", true, "Bound", "PVC " + name + " Bound", ts, false, true);
      set_condition(status, "Ready", true, "", "", ts, false, true);
      set_condition(status, "Running", false, "Completed", "", ts, false, true);
    });
    emit_event(dv->object, "Normal", "CloneSucceeded", "Successfully cloned into " + ns + "/" + name,
               "datavolume-controller");
  } else {
    std::string message = result.error().message;
    modify(Kind::data_volumes, ns, name, [&](json& object) {
      json& status = object["status"];
      status["phase"] = "Failed";
      set_condition(status, "Ready", false, "Error", message, ts, false, true);
      set_condition(status, "Running", false, "Error", message, ts, false, true);
    });
    emit_event(dv->object, "Warning", "CloneFailed", message, "datavolume-controller");
  }
  const json& refs = field(dv->object, {"metadata", "ownerReferences"});
  if (refs.is_array()) {
    for (const auto& ref : refs) {
      if (ref.value("kind", "") == "VirtualMachine") reconcile_vm(ns, ref.value("name", ""));
    }
  }
}

void KubeFront::Impl::progress_tick() {
  if (clones.empty()) {
    progress_ticker = false;
    return;
  }
  // The model exposes each datastore's current throughput; a clone's share is estimated as an equal part of
  // it (boot reads on the same datastore make this an upper bound, so progress stays below 100 % until the
  // model reports the flow complete).
  std::map<std::string, int> per_datastore;
  for (const auto& [key, clone] : clones) ++per_datastore[clone.datastore_id];
  for (auto& [key, clone] : clones) {
    double rate = lab.datastore_rate(clone.datastore_id) / std::max(1, per_datastore[clone.datastore_id]);
    clone.done_mb += rate * options.progress_interval_s;
    double percent = clone.size_mb > 0 ? std::min(99.99, 100.0 * clone.done_mb / clone.size_mb) : 0.0;
    auto [ns, name] = split_key(key);
    modify(Kind::data_volumes, ns, name,
           [&](json& object) { object["status"]["progress"] = format_progress(percent); });
  }
  std::weak_ptr<Impl> weak = shared_from_this();
  lab.schedule(options.progress_interval_s, [weak] {
    if (auto self = weak.lock(); self && self->alive) self->progress_tick();
  });
}

}  // namespace bootstorm::sim::kube
