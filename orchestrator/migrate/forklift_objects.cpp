// Forklift object builders and status decoding (see forklift_objects.hpp).
#include "orchestrator/migrate/forklift_objects.hpp"

#include "common/base64.hpp"
#include "protocol/http/types.hpp"

namespace bootstorm::migrate {
using nlohmann::json;

namespace {

json metadata(const std::string& name, const std::string& ns, const std::string& run_id) {
  return json{{"name", name}, {"namespace", ns}, {"labels", {{kRunLabel, run_id}}}};
}

json ref(const Ref& r) {
  return json{{"name", r.name}, {"namespace", r.namespace_}};
}

std::string str(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

long long integer(const json& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return 0;
  return it->is_number_float() ? static_cast<long long>(it->get<double>()) : it->get<long long>();
}

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.is_object()) return out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& s : *it)
    if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

void read_error(const json& j, std::string& phase, std::vector<std::string>& reasons) {
  if (!j.is_object()) return;
  auto it = j.find("error");
  if (it == j.end() || !it->is_object()) return;
  phase = str(*it, "phase");
  reasons = strings(*it, "reasons");
}

}  // namespace

std::string object_name(const std::string& run_id, std::string_view what) {
  return "bs-" + run_id + "-" + std::string(what);
}

std::string vsphere_sdk_url(const std::string& vcenter_url) {
  auto url = http::parse_url(vcenter_url);
  if (!url) return vcenter_url;
  bool default_port =
      (url->scheme == "https" && url->port == 443) || (url->scheme == "http" && url->port == 80);
  std::string host = url->host.find(':') != std::string::npos ? "[" + url->host + "]" : url->host;
  return url->scheme + "://" + host + (default_port ? "" : ":" + std::to_string(url->port)) + "/sdk";
}

json build_secret(const SecretBuild& b) {
  json data = {{"user", base64_encode(b.user)}, {"password", base64_encode(b.password)}};
  if (!b.ca_pem.empty()) data["cacert"] = base64_encode(b.ca_pem);
  data["insecureSkipVerify"] = base64_encode(b.insecure_skip_verify ? "true" : "false");
  if (!b.url.empty()) data["url"] = base64_encode(b.url);
  json md = metadata(b.name, b.namespace_, b.run_id);
  // The labels MTV's UI puts on provider secrets; Forklift lists secrets by them.
  md["labels"]["createdForProviderType"] = "vsphere";
  md["labels"]["createdForResourceType"] = "providers";
  return json{{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", md}, {"type", "Opaque"}, {"data", data}};
}

json build_provider(const ProviderBuild& b) {
  json spec = {{"type", b.type}, {"url", b.url}};
  if (!b.secret_name.empty()) {
    spec["secret"] = {{"name", b.secret_name}, {"namespace", b.secret_namespace}};
  } else {
    spec["secret"] = json::object();  // required by the CRD; the host provider uses the cluster itself
  }
  if (b.type == "vsphere") spec["settings"] = {{"sdkEndpoint", "vcenter"}};
  return json{{"apiVersion", kForkliftGroupVersion},
              {"kind", "Provider"},
              {"metadata", metadata(b.name, b.namespace_, b.run_id)},
              {"spec", spec}};
}

json build_network_map(const std::string& name, const std::string& ns, const std::string& run_id,
                       const Ref& source, const Ref& destination, const std::vector<NetworkMapping>& map) {
  json items = json::array();
  for (const auto& m : map) {
    json src = json::object();
    // vSphere managed object ids look like "network-12" / "dvportgroup-34"; anything else is a name.
    if (m.source.rfind("network-", 0) == 0 || m.source.rfind("dvportgroup-", 0) == 0) {
      src["id"] = m.source;
    } else {
      src["name"] = m.source;
    }
    json dst = {{"type", m.type}};
    if (m.type == "multus") {
      dst["name"] = m.name;
      if (!m.namespace_.empty()) dst["namespace"] = m.namespace_;
    }
    items.push_back({{"source", src}, {"destination", dst}});
  }
  return json{
      {"apiVersion", kForkliftGroupVersion},
      {"kind", "NetworkMap"},
      {"metadata", metadata(name, ns, run_id)},
      {"spec", {{"provider", {{"source", ref(source)}, {"destination", ref(destination)}}}, {"map", items}}}};
}

json build_storage_map(const std::string& name, const std::string& ns, const std::string& run_id,
                       const Ref& source, const Ref& destination, const std::vector<StorageMapping>& map) {
  json items = json::array();
  for (const auto& m : map) {
    json src = json::object();
    if (m.source.rfind("datastore-", 0) == 0) {
      src["id"] = m.source;
    } else {
      src["name"] = m.source;
    }
    json dst = {{"storageClass", m.storage_class}};
    if (!m.access_mode.empty()) dst["accessMode"] = m.access_mode;
    if (!m.volume_mode.empty()) dst["volumeMode"] = m.volume_mode;
    items.push_back({{"source", src}, {"destination", dst}});
  }
  return json{
      {"apiVersion", kForkliftGroupVersion},
      {"kind", "StorageMap"},
      {"metadata", metadata(name, ns, run_id)},
      {"spec", {{"provider", {{"source", ref(source)}, {"destination", ref(destination)}}}, {"map", items}}}};
}

json build_plan(const PlanBuild& b) {
  json vms = json::array();
  for (const auto& n : b.vm_names) vms.push_back({{"name", n}});
  json spec = {{"provider", {{"source", ref(b.source)}, {"destination", ref(b.destination)}}},
               {"map", {{"network", ref(b.network_map)}, {"storage", ref(b.storage_map)}}},
               {"targetNamespace", b.target_namespace},
               {"type", b.warm ? "warm" : "cold"},
               {"warm", b.warm},
               {"targetPowerState", "off"},
               {"targetLabels", {{kRunLabel, b.run_id}}},
               {"vms", vms}};
  if (!b.description.empty()) spec["description"] = b.description;
  return json{{"apiVersion", kForkliftGroupVersion},
              {"kind", "Plan"},
              {"metadata", metadata(b.name, b.namespace_, b.run_id)},
              {"spec", spec}};
}

json build_migration(const std::string& name, const std::string& ns, const std::string& run_id,
                     const Ref& plan) {
  return json{{"apiVersion", kForkliftGroupVersion},
              {"kind", "Migration"},
              {"metadata", metadata(name, ns, run_id)},
              {"spec", {{"plan", ref(plan)}}}};
}

std::string forklift_collection(const std::string& ns, std::string_view plural) {
  return "/apis/forklift.konveyor.io/v1beta1/namespaces/" + ns + "/" + std::string(plural);
}
std::string forklift_object(const std::string& ns, std::string_view plural, const std::string& name) {
  return forklift_collection(ns, plural) + "/" + name;
}
std::string secrets_path(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/secrets";
}
std::string namespace_path(const std::string& name) {
  return "/api/v1/namespaces/" + name;
}
std::string vms_path(const std::string& ns) {
  return "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachines";
}
std::string vm_path(const std::string& ns, const std::string& name) {
  return vms_path(ns) + "/" + name;
}

std::string Condition::to_string() const {
  std::string out = type + "=" + status;
  if (!category.empty()) out += " [" + category + "]";
  if (!reason.empty()) out += " " + reason;
  if (!message.empty()) out += ": " + message;
  if (!items.empty()) {
    out += " (";
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
    out += ")";
  }
  if (!suggestion.empty()) out += " — " + suggestion;
  return out;
}

std::vector<Condition> conditions_of(const json& object) {
  std::vector<Condition> out;
  if (!object.is_object()) return out;
  auto status = object.find("status");
  if (status == object.end() || !status->is_object()) return out;
  auto conds = status->find("conditions");
  if (conds == status->end() || !conds->is_array()) return out;
  for (const auto& c : *conds) {
    if (!c.is_object()) continue;
    Condition k;
    k.type = str(c, "type");
    k.status = str(c, "status");
    k.category = str(c, "category");
    k.reason = str(c, "reason");
    k.message = str(c, "message");
    k.suggestion = str(c, "suggestion");
    k.items = strings(c, "items");
    k.last_transition_time = str(c, "lastTransitionTime");
    out.push_back(std::move(k));
  }
  return out;
}

const Condition* find_condition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const auto& c : conditions)
    if (c.type == type) return &c;
  return nullptr;
}

Readiness readiness_of(const json& object) {
  Readiness r;
  r.all = conditions_of(object);
  const Condition* ready = find_condition(r.all, "Ready");
  r.ready = ready != nullptr && ready->status == "True";
  for (const auto& c : r.all) {
    if (c.status == "True" && (c.category == "Critical" || c.category == "Error")) {
      r.blocked = true;
      r.blocking.push_back(c);
    }
  }
  if (r.blocked) r.ready = false;
  return r;
}

std::vector<VmStatus> vm_statuses(const json& object) {
  std::vector<VmStatus> out;
  if (!object.is_object()) return out;
  auto status = object.find("status");
  if (status == object.end() || !status->is_object()) return out;
  const json* vms = nullptr;
  if (auto m = status->find("migration"); m != status->end() && m->is_object()) {
    if (auto v = m->find("vms"); v != m->end() && v->is_array()) vms = &*v;
  }
  if (vms == nullptr) {
    if (auto v = status->find("vms"); v != status->end() && v->is_array()) vms = &*v;
  }
  if (vms == nullptr) return out;
  for (const auto& v : *vms) {
    if (!v.is_object()) continue;
    VmStatus s;
    s.id = str(v, "id");
    s.name = str(v, "name");
    s.target_name = str(v, "newName");
    if (s.target_name.empty()) s.target_name = str(v, "targetName");
    s.phase = str(v, "phase");
    s.started = str(v, "started");
    s.completed = str(v, "completed");
    read_error(v, s.error_phase, s.error_reasons);
    if (auto p = v.find("pipeline"); p != v.end() && p->is_array()) {
      for (const auto& st : *p) {
        if (!st.is_object()) continue;
        StepStatus step;
        step.name = str(st, "name");
        step.description = str(st, "description");
        step.phase = str(st, "phase");
        step.started = str(st, "started");
        step.completed = str(st, "completed");
        if (auto pr = st.find("progress"); pr != st.end() && pr->is_object()) {
          step.progress_completed = integer(*pr, "completed");
          step.progress_total = integer(*pr, "total");
        }
        if (auto an = st.find("annotations"); an != st.end() && an->is_object()) step.unit = str(*an, "unit");
        read_error(st, step.error_phase, step.error_reasons);
        s.pipeline.push_back(std::move(step));
      }
    }
    json fake = {{"status", {{"conditions", v.value("conditions", json::array())}}}};
    auto conds = conditions_of(fake);
    if (auto c = find_condition(conds, "Succeeded"); c && c->status == "True") s.succeeded = true;
    if (auto c = find_condition(conds, "Failed"); c && c->status == "True") s.failed = true;
    if (auto c = find_condition(conds, "Canceled"); c && c->status == "True") s.canceled = true;
    if (!s.error_phase.empty() || !s.error_reasons.empty()) s.failed = true;
    if (s.failed) s.succeeded = false;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace bootstorm::migrate
