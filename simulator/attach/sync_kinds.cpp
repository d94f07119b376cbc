// The ownership table of lab attach and the shape of what it writes.
#include "simulator/attach/sync_kinds.hpp"

#include <charconv>

namespace bootstorm::sim::attach {
namespace {

using json = nlohmann::json;

void translate(json& uid_field, const UidMap& uids) {
  if (!uid_field.is_string()) return;
  auto it = uids.find(uid_field.get<std::string>());
  if (it != uids.end()) uid_field = it->second;
}

}  // namespace

Role role_of(Kind kind) {
  switch (kind) {
    case Kind::flow_schemas:
    case Kind::priority_level_configurations:
      return Role::none;
    case Kind::namespaces:
    case Kind::secrets:
    case Kind::storage_classes:
    case Kind::volume_snapshot_classes:
      return Role::mirror;
    case Kind::virtual_machines:
    case Kind::data_volumes:
    case Kind::data_sources:
    case Kind::forklift_providers:
    case Kind::forklift_network_maps:
    case Kind::forklift_storage_maps:
    case Kind::forklift_plans:
    case Kind::forklift_migrations:
    case Kind::kube_virts:
    case Kind::cdis:
    case Kind::storage_profiles:
      return Role::client;
    case Kind::nodes:
    case Kind::events:
    case Kind::persistent_volume_claims:
    case Kind::virtual_machine_instances:
    case Kind::routes:
    case Kind::count_:
      break;
  }
  return Role::controller;
}

bool watched(Kind kind) {
  const Role role = role_of(kind);
  return role == Role::mirror || role == Role::client || kind == Kind::virtual_machine_instances ||
         kind == Kind::persistent_volume_claims;
}

bool server_status_subresource(Kind kind) {
  switch (kind) {
    case Kind::virtual_machine_instances:
    case Kind::events:
    case Kind::secrets:
    case Kind::storage_classes:
    case Kind::volume_snapshot_classes:
    case Kind::flow_schemas:
    case Kind::priority_level_configurations:
      return false;
    default:
      return true;
  }
}

std::string collection_path(Kind kind, const std::string& ns) {
  const kube::ResourceType& type = kube::resource_type(kind);
  std::string path = type.path_prefix();
  if (type.namespaced && !ns.empty()) path += "/namespaces/" + ns;
  return path + "/" + type.plural;
}

std::string object_path(Kind kind, const std::string& ns, const std::string& name) {
  return collection_path(kind, ns) + "/" + name;
}

std::string describe(Kind kind, const std::string& ns, const std::string& name) {
  return kube::resource_type(kind).kind + " " + (ns.empty() ? name : ns + "/" + name);
}

json for_server(Kind kind, const json& object, const UidMap& uids) {
  const kube::ResourceType& type = kube::resource_type(kind);
  json out = object;
  out["apiVersion"] = type.api_version();
  out["kind"] = type.kind;
  json& meta = out["metadata"];
  if (!meta.is_object()) meta = json::object();
  for (const char* field : {"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields",
                            "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}) {
    meta.erase(field);
  }
  if (!type.namespaced) meta.erase("namespace");
  if (meta.contains("ownerReferences") && meta["ownerReferences"].is_array()) {
    for (json& owner : meta["ownerReferences"])
      if (owner.is_object() && owner.contains("uid")) translate(owner["uid"], uids);
  }
  if (out.contains("involvedObject") && out["involvedObject"].is_object()) {
    json& involved = out["involvedObject"];
    if (involved.contains("uid")) translate(involved["uid"], uids);
    involved.erase("resourceVersion");  // the lab's, which means nothing to the server
  }
  return out;
}

json main_part(Kind kind, const json& object, const UidMap& uids) {
  json out = for_server(kind, object, uids);
  if (server_status_subresource(kind)) out.erase("status");
  return out;
}

json status_part(const json& object) {
  auto it = object.find("status");
  return it == object.end() ? json() : *it;
}

std::uint64_t resource_version_of(const json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return 0;
  auto rv = meta->find("resourceVersion");
  if (rv == meta->end() || !rv->is_string()) return 0;
  const std::string& text = rv->get_ref<const std::string&>();
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() ? value : 0;
}

}  // namespace bootstorm::sim::attach
