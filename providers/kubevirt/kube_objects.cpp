// Object building and response decoding for the KubeVirt provider (see kube_objects.hpp).
#include "providers/kubevirt/kube_objects.hpp"

#include <optional>
#include <string_view>

#include "protocol/http/types.hpp"

namespace bootstorm::kubevirt {
using nlohmann::json;

std::string label_slug(std::string_view name) {
  std::string out;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      out += static_cast<char>(std::tolower(c));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

std::string run_selector_query(const std::string& run_id) {
  return http::url_encode(std::string(kRunLabel) + "=" + run_id);
}

std::string datavolume_name(const std::string& vm_name) {
  return vm_name + "-" + kRootDiskName;
}

std::string cloud_init_user_data(const VmBuild& build) {
  std::string out = "#cloud-config\n";
  out += "hostname: " + build.name + "\n";
  if (!build.beacon_url.empty()) {
    // The guest's bootstorm beacon agent (deploy/guest/linux) reads this file and calls the URL when the
    // desktop is up; the same shape as deploy/guest/linux/cloud-init.yaml.
    out += "write_files:\n";
    out += "  - path: /etc/bootstorm/beacon.env\n";
    out += "    permissions: \"0600\"\n";
    out += "    content: |\n";
    out += "      BOOTSTORM_BEACON_URL=" + build.beacon_url + "\n";
    out += "      BOOTSTORM_BEACON_TOKEN=" + build.beacon_token + "\n";
    out += "      BOOTSTORM_VM_NAME=" + build.name + "\n";
    out += "runcmd:\n";
    out += "  - [systemctl, start, --no-block, bootstorm-beacon.service]\n";
  }
  return out;
}

json build_virtual_machine(const VmBuild& b) {
  const std::string slug = label_slug(b.scenario);
  json labels = {
      {kRunLabel, b.run_id}, {kScenarioLabel, slug}, {"app.kubernetes.io/managed-by", "bootstorm"}};
  json dv_spec = {{"storage", json::object()}};
  if (!b.datasource_name.empty()) {
    dv_spec["sourceRef"] = {{"kind", "DataSource"}, {"name", b.datasource_name}};
    if (!b.datasource_namespace.empty()) dv_spec["sourceRef"]["namespace"] = b.datasource_namespace;
  } else {
    std::string ns = b.namespace_, name = b.pvc;
    if (auto slash = b.pvc.find('/'); slash != std::string::npos) {
      ns = b.pvc.substr(0, slash);
      name = b.pvc.substr(slash + 1);
    }
    dv_spec["source"] = {{"pvc", {{"namespace", ns}, {"name", name}}}};
  }
  json dv_annotations = json::object();
  if (!b.clone_strategy.empty() && b.clone_strategy != "auto") {
    dv_annotations["bootstorm.io/requested-clone-strategy"] = b.clone_strategy;
  }
  json dv_metadata = {{"name", datavolume_name(b.name)}, {"labels", labels}};
  if (!dv_annotations.empty()) dv_metadata["annotations"] = dv_annotations;

  json disks = json::array({{{"name", kRootDiskName}, {"bootOrder", 1}, {"disk", {{"bus", "virtio"}}}},
                            {{"name", kCloudInitDiskName}, {"disk", {{"bus", "virtio"}}}}});
  json volumes = json::array(
      {{{"name", kRootDiskName}, {"dataVolume", {{"name", datavolume_name(b.name)}}}},
       {{"name", kCloudInitDiskName}, {"cloudInitNoCloud", {{"userData", cloud_init_user_data(b)}}}}});
  json template_spec = {
      {"domain",
       {{"cpu", {{"cores", b.cpu_cores}}},
        {"resources", {{"requests", {{"memory", b.memory}}}}},
        {"devices",
         {{"disks", disks},
          {"interfaces", json::array({{{"name", "default"}, {"masquerade", json::object()}}})}}}}},
      {"networks", json::array({{{"name", "default"}, {"pod", json::object()}}})},
      {"volumes", volumes},
  };
  if (!b.host.empty()) template_spec["nodeSelector"] = {{kHostnameLabel, b.host}};
  json vm = {
      {"apiVersion", "kubevirt.io/v1"},
      {"kind", "VirtualMachine"},
      {"metadata",
       {{"name", b.name},
        {"namespace", b.namespace_},
        {"labels", labels},
        {"annotations", {{kScenarioNameAnnotation, b.scenario}}}}},
      {"spec",
       {{"runStrategy", "Halted"},
        {"dataVolumeTemplates", json::array({{{"metadata", dv_metadata}, {"spec", dv_spec}}})},
        {"template", {{"metadata", {{"labels", labels}}}, {"spec", template_spec}}}}},
  };
  return vm;
}

json build_namespace(const std::string& name, const std::string& run_id) {
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata",
           {{"name", name},
            {"labels", {{"app.kubernetes.io/managed-by", "bootstorm"}}},
            {"annotations", {{"bootstorm.io/created-by-run", run_id}}}}}};
}

json start_options() {
  return {{"apiVersion", "subresources.kubevirt.io/v1"}, {"kind", "StartOptions"}};
}
json stop_options() {
  return {{"apiVersion", "subresources.kubevirt.io/v1"}, {"kind", "StopOptions"}};
}
json delete_options() {
  return {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Foreground"}};
}

std::string vms_path(const std::string& ns) {
  return "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachines";
}
std::string vm_path(const std::string& ns, const std::string& name) {
  return vms_path(ns) + "/" + name;
}
std::string vm_subresource_path(const std::string& ns, const std::string& name, const std::string& action) {
  return "/apis/subresources.kubevirt.io/v1/namespaces/" + ns + "/virtualmachines/" + name + "/" + action;
}
std::string vmis_path(const std::string& ns) {
  return "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachineinstances";
}
std::string datavolumes_path(const std::string& ns) {
  return "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + ns + "/datavolumes";
}
std::string datasource_path(const std::string& ns, const std::string& name) {
  return "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + ns + "/datasources/" + name;
}

DataVolumeState datavolume_state(const json& dv) {
  DataVolumeState st;
  if (const json* type = json_at(dv, {"metadata", "annotations", "cdi.kubevirt.io/cloneType"});
      type && type->is_string())
    st.clone_type = type->get<std::string>();
  const json status = dv.value("status", json::object());
  if (!status.is_object()) return st;
  st.phase = status.value("phase", "");
  st.succeeded = st.phase == "Succeeded";
  st.failed = st.phase == "Failed";
  std::string detail = "phase " + (st.phase.empty() ? std::string("(none)") : st.phase);
  if (std::string progress = status.value("progress", ""); !progress.empty() && progress != "N/A") {
    detail += ", progress " + progress;
  }
  if (auto conds = status.find("conditions"); conds != status.end() && conds->is_array()) {
    for (const auto& c : *conds) {
      if (!c.is_object()) continue;
      std::string reason = c.value("reason", ""), message = c.value("message", "");
      if (reason.empty() && message.empty()) continue;
      detail += "; " + c.value("type", "?") + "=" + c.value("status", "?");
      if (!reason.empty()) detail += " " + reason;
      if (!message.empty()) detail += ": " + message;
    }
  }
  st.detail = detail;
  return st;
}

const json* json_at(const json& obj, std::initializer_list<const char*> path) {
  const json* at = &obj;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::string text_at(const json& obj, std::initializer_list<const char*> path) {
  const json* at = json_at(obj, path);
  return at && at->is_string() ? at->get<std::string>() : std::string();
}

std::string label_of(const json& obj, const char* key) {
  return text_at(obj, {"metadata", "labels", key});
}

std::string name_of(const json& obj) {
  return text_at(obj, {"metadata", "name"});
}

}  // namespace bootstorm::kubevirt
