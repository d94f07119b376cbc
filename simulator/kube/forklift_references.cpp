// What Forklift objects refer to, resolved against the stored objects and the lab's vCenter inventory, and
// the DNS-1123 names Forklift gives target VMs.
#include "simulator/kube/detail/forklift_references.hpp"

#include <fmt/format.h>

#include <cctype>

#include "simulator/kube/api_objects.hpp"

namespace bootstorm::sim::kube::forklift {

std::string ref_string(const json& ref) {
  std::string out;
  std::string type = ref.value("type", "");
  if (!type.empty()) out = "(" + type + ")";
  return fmt::format("{} id:{} name:'{}' ", out, ref.value("id", ""), ref.value("name", ""));
}

std::string dns1123_name(const std::string& name) {
  std::string out;
  for (char ch : name) {
    unsigned char c = static_cast<unsigned char>(std::tolower(static_cast<unsigned char>(ch)));
    out.push_back(std::isalnum(c) ? static_cast<char>(c) : '-');
  }
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "vm" : out;
}

ProviderPair validate_providers(const ClusterState& cluster, const json& object,
                                std::vector<Condition>& conditions) {
  ProviderPair out;
  const std::string own_ns = object["metadata"].value("namespace", "");
  auto check = [&](const char* which, const char* prefix, const char* label) -> ObjectPtr {
    const json& ref = field(object, {"spec", "provider", which});
    std::string name = string_field(ref, {"name"});
    std::string ns = string_field(ref, {"namespace"});
    if (ns.empty()) ns = own_ns;
    Condition invalid{std::string(prefix) + "ProviderNotValid", "NotSet", "Critical",
                      fmt::format("The {} provider is not valid.", label)};
    if (name.empty()) {
      conditions.push_back(invalid);
      return nullptr;
    }
    auto provider = cluster.get(Kind::forklift_providers, ns, name);
    if (!provider) {
      invalid.reason = "NotFound";
      conditions.push_back(invalid);
      return nullptr;
    }
    if (!condition_true(provider->object, "Ready")) {
      conditions.push_back({std::string(prefix) + "ProviderNotReady", "", "Critical",
                            fmt::format("The {} provider does not have the Ready condition.", label)});
    }
    return provider;
  };
  out.source = check("source", "Source", "source");
  out.destination = check("destination", "Destination", "destination");
  if (out.destination && string_field(out.destination->object, {"spec", "type"}) != "openshift") {
    conditions.push_back({"DestinationProviderNotValid", "TypeNotValid", "Critical",
                          "The destination provider is not valid."});
  }
  return out;
}

ObjectPtr map_of(const ClusterState& cluster, const json& plan, const char* which, Kind kind) {
  std::string name = string_field(plan, {"spec", "map", which, "name"});
  std::string ns = string_field(plan, {"spec", "map", which, "namespace"});
  if (ns.empty()) ns = plan["metadata"].value("namespace", "");
  return name.empty() ? nullptr : cluster.get(kind, ns, name);
}

const model::Vm* find_source_vm(const model::Lab& lab, const json& ref) {
  std::string id = ref.value("id", "");
  std::string name = ref.value("name", "");
  const model::Vm* vm = nullptr;
  if (!id.empty()) {
    vm = lab.find_vm(id);
    if (vm && (!vm->namespace_.empty() || (!name.empty() && vm->name != name))) vm = nullptr;
  } else if (!name.empty()) {
    vm = lab.find_vm_by_name(name, "");
  }
  return vm;
}

}  // namespace bootstorm::sim::kube::forklift
