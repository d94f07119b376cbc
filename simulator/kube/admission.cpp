// Admission: the checks of KubeVirt's and CDI's validating webhooks and of namespace names, worded as they
// answer, and the lab VM behind each new VirtualMachine (guest profile, CPUs, memory, labels and the
// simulated guest agent's configuration from cloud-init).
#include "simulator/kube/detail/admission.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simulator/kube/detail/api_conventions.hpp"

namespace bootstorm::sim::kube {
namespace {

using json = nlohmann::json;

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

}  // namespace

Admission::Admission(ObjectStore& store, model::Lab& lab, VmController& vms)
    : store_(store), lab_(lab), vms_(vms) {}

namespace {

// A VirtualMachine's volumes, disks and DataVolume templates as KubeVirt's validating webhook checks them.
std::optional<ApiError> check_vm_volumes(const ResourceType& type, const std::string& name, const json& spec,
                                         const json& template_spec) {
  const json& volumes = field(template_spec, {"volumes"});
  std::set<std::string> volume_names;
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

  return std::nullopt;
}

// The simulated guest agent's configuration (simulator/README.md "Beacon"): the BOOTSTORM_* lines of the
// cloud-init user data (the shape of deploy/guest/linux/cloud-init.yaml) become the guestinfo keys that the
// lab server's beacon hook reads.
void read_beacon_settings(const json& volumes, std::map<std::string, std::string>& guestinfo) {
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
          if (line.starts_with(prefix)) guestinfo[std::string(key)] = line.substr(prefix.size());
        }
      }
    }
  }
}

}  // namespace

std::optional<ApiError> Admission::admit_create(Kind kind, json& object) {
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
  if (auto error = check_vm_volumes(type, name, spec, template_spec)) return error;
  const json& volumes = field(template_spec, {"volumes"});
  const json& templates = field(spec, {"dataVolumeTemplates"});
  // The lab VM behind it: its guest profile comes from the golden image the disks are cloned from.
  std::string profile = string_field(object, {"metadata", "annotations", kProfileAnnotation});
  if (profile.empty() && templates.is_array()) {
    for (const auto& t : templates) {
      std::string ds_name = string_field(t, {"spec", "sourceRef", "name"});
      std::string ds_ns = string_field(t, {"spec", "sourceRef", "namespace"});
      std::string pvc_name = string_field(t, {"spec", "source", "pvc", "name"});
      std::string pvc_ns = string_field(t, {"spec", "source", "pvc", "namespace"});
      if (!ds_name.empty()) {
        if (auto ds = store_.get(Kind::data_sources, ds_ns.empty() ? ns : ds_ns, ds_name)) {
          pvc_name = string_field(ds->object, {"spec", "source", "pvc", "name"});
          pvc_ns = string_field(ds->object, {"spec", "source", "pvc", "namespace"});
        }
      }
      if (const auto* image = lab_.find_golden_image(pvc_ns, pvc_name)) {
        profile = image->spec.profile;
        break;
      }
    }
  }
  if (profile.empty() && !lab_.golden_images().empty()) profile = lab_.golden_images().front().spec.profile;
  if (profile.empty() && !lab_.spec().profiles.empty()) profile = lab_.spec().profiles.front().name;
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
  read_beacon_settings(volumes, vm_spec.guestinfo);
  auto created = lab_.create_vm(std::move(vm_spec));
  if (!created) {
    return status_error(500, "InternalError", "Internal error occurred: " + created.error().what());
  }
  vms_.track(ns, name, *created);
  return std::nullopt;
}

std::optional<ApiError> Admission::admit_update(Kind kind, const json& /*old_object*/, json& object) {
  if (kind != Kind::virtual_machines) return std::nullopt;
  const ResourceType& type = resource_type(kind);
  std::string name = object["metadata"].value("name", "");
  const json& spec = field(object, {"spec"});
  if (!spec.is_object()) return std::nullopt;
  return check_run_strategy(type, name, spec);
}

}  // namespace bootstorm::sim::kube
