#include "simulator/kube/resource_types.hpp"

#include <functional>
#include <map>
#include <set>

namespace bootstorm::sim::kube {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kMetaFields = {"metadata.name", "metadata.namespace"};

// The item path of a served type and the query parameters its PATCH takes.
std::string item_path(const ResourceType& type) {
  return type.path_prefix() + (type.namespaced ? "/namespaces/{namespace}/" : "/") + type.plural + "/{name}";
}
constexpr const char* kPatchQueryParameters[] = {"dryRun", "fieldManager", "fieldValidation", "force"};

std::vector<std::string> with_meta(std::vector<std::string> extra) {
  extra.insert(extra.begin(), kMetaFields.begin(), kMetaFields.end());
  return extra;
}

// The kinds the front serves, by API group; build_types() fills the table indexed by Kind.
using SetType = std::function<void(Kind, ResourceType)>;

// The core API (v1): namespaces, nodes, events, PVCs, secrets.
void add_core_types(const SetType& set) {
  set(Kind::namespaces, {"",
                         "v1",
                         "namespaces",
                         "namespace",
                         "Namespace",
                         false,
                         {"ns"},
                         {},
                         {"metadata.name", "status.phase"},
                         true});
  set(Kind::nodes,
      {"", "v1", "nodes", "node", "Node", false, {"no"}, {}, {"metadata.name", "spec.unschedulable"}, true});
  set(Kind::events,
      {"",
       "v1",
       "events",
       "event",
       "Event",
       true,
       {"ev"},
       {},
       with_meta({"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                  "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                  "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}),
       false});
  set(Kind::persistent_volume_claims, {"",
                                       "v1",
                                       "persistentvolumeclaims",
                                       "persistentvolumeclaim",
                                       "PersistentVolumeClaim",
                                       true,
                                       {"pvc"},
                                       {},
                                       kMetaFields,
                                       true});
  set(Kind::secrets, {"", "v1", "secrets", "secret", "Secret", true, {}, {}, with_meta({"type"}), false});
}

// KubeVirt (kubevirt.io): VirtualMachine, VirtualMachineInstance and the KubeVirt CR.
void add_kubevirt_types(const SetType& set) {
  set(Kind::virtual_machines, {"kubevirt.io",
                               "v1",
                               "virtualmachines",
                               "virtualmachine",
                               "VirtualMachine",
                               true,
                               {"vm", "vms"},
                               {"all"},
                               kMetaFields,
                               true});
  set(Kind::virtual_machine_instances, {"kubevirt.io",
                                        "v1",
                                        "virtualmachineinstances",
                                        "virtualmachineinstance",
                                        "VirtualMachineInstance",
                                        true,
                                        {"vmi", "vmis"},
                                        {"all"},
                                        kMetaFields,
                                        true});
  set(Kind::kube_virts, {"kubevirt.io",
                         "v1",
                         "kubevirts",
                         "kubevirt",
                         "KubeVirt",
                         true,
                         {"kv", "kvs"},
                         {"all"},
                         kMetaFields,
                         true});
}

// CDI (cdi.kubevirt.io): DataVolume, DataSource, StorageProfile and the CDI CR.
void add_cdi_types(const SetType& set) {
  set(Kind::data_volumes, {"cdi.kubevirt.io",
                           "v1beta1",
                           "datavolumes",
                           "datavolume",
                           "DataVolume",
                           true,
                           {"dv", "dvs"},
                           {"all"},
                           kMetaFields,
                           true});
  set(Kind::data_sources, {"cdi.kubevirt.io",
                           "v1beta1",
                           "datasources",
                           "datasource",
                           "DataSource",
                           true,
                           {"das"},
                           {"all"},
                           kMetaFields,
                           true});
  set(Kind::storage_profiles, {"cdi.kubevirt.io",
                               "v1beta1",
                               "storageprofiles",
                               "storageprofile",
                               "StorageProfile",
                               false,
                               {},
                               {},
                               kMetaFields,
                               true});
  set(Kind::cdis,
      {"cdi.kubevirt.io", "v1beta1", "cdis", "cdi", "CDI", false, {"cdi", "cdis"}, {}, kMetaFields, true});
}

// Forklift (forklift.konveyor.io): providers, maps, plans and migrations.
void add_forklift_types(const SetType& set) {
  set(Kind::forklift_providers, {"forklift.konveyor.io",
                                 "v1beta1",
                                 "providers",
                                 "provider",
                                 "Provider",
                                 true,
                                 {},
                                 {},
                                 kMetaFields,
                                 true});
  set(Kind::forklift_network_maps, {"forklift.konveyor.io",
                                    "v1beta1",
                                    "networkmaps",
                                    "networkmap",
                                    "NetworkMap",
                                    true,
                                    {},
                                    {},
                                    kMetaFields,
                                    true});
  set(Kind::forklift_storage_maps, {"forklift.konveyor.io",
                                    "v1beta1",
                                    "storagemaps",
                                    "storagemap",
                                    "StorageMap",
                                    true,
                                    {},
                                    {},
                                    kMetaFields,
                                    true});
  set(Kind::forklift_plans,
      {"forklift.konveyor.io", "v1beta1", "plans", "plan", "Plan", true, {}, {}, kMetaFields, true});
  set(Kind::forklift_migrations, {"forklift.konveyor.io",
                                  "v1beta1",
                                  "migrations",
                                  "migration",
                                  "Migration",
                                  true,
                                  {},
                                  {},
                                  kMetaFields,
                                  true});
}

// The cluster around them: storage classes and snapshot classes, API Priority and Fairness, OpenShift's
// Route.
void add_cluster_types(const SetType& set) {
  set(Kind::storage_classes, {"storage.k8s.io",
                              "v1",
                              "storageclasses",
                              "storageclass",
                              "StorageClass",
                              false,
                              {"sc"},
                              {},
                              kMetaFields,
                              false});
  set(Kind::volume_snapshot_classes, {"snapshot.storage.k8s.io",
                                      "v1",
                                      "volumesnapshotclasses",
                                      "volumesnapshotclass",
                                      "VolumeSnapshotClass",
                                      false,
                                      {"vsclass", "vsclasses"},
                                      {},
                                      kMetaFields,
                                      false});
  set(Kind::flow_schemas, {"flowcontrol.apiserver.k8s.io",
                           "v1",
                           "flowschemas",
                           "flowschema",
                           "FlowSchema",
                           false,
                           {},
                           {},
                           kMetaFields,
                           true});
  set(Kind::priority_level_configurations, {"flowcontrol.apiserver.k8s.io",
                                            "v1",
                                            "prioritylevelconfigurations",
                                            "prioritylevelconfiguration",
                                            "PriorityLevelConfiguration",
                                            false,
                                            {},
                                            {},
                                            kMetaFields,
                                            true});
  set(Kind::routes,
      {"route.openshift.io", "v1", "routes", "route", "Route", true, {}, {}, kMetaFields, true});
}

std::vector<ResourceType> build_types() {
  std::vector<ResourceType> types(static_cast<std::size_t>(Kind::count_));
  const SetType set = [&](Kind kind, ResourceType type) {
    types[static_cast<std::size_t>(kind)] = std::move(type);
  };
  add_core_types(set);
  add_kubevirt_types(set);
  add_cdi_types(set);
  add_forklift_types(set);
  add_cluster_types(set);
  return types;
}

// Served group versions in discovery order (core first), with their preferred version.
std::vector<std::pair<std::string, std::string>> group_versions() {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& type : resource_types()) {
    if (type.group.empty()) continue;
    if (seen.insert({type.group, type.version}).second) out.emplace_back(type.group, type.version);
  }
  out.emplace_back(kSubresourcesGroup, "v1");
  return out;
}

json group_entry(const std::string& group, const std::string& version) {
  json gv = {{"groupVersion", group + "/" + version}, {"version", version}};
  return {{"name", group}, {"versions", json::array({gv})}, {"preferredVersion", gv}};
}

const std::vector<std::string> kCrudVerbs = {"create", "delete", "get", "list", "patch", "update", "watch"};

json subresource_entry(const std::string& name, const std::string& kind,
                       const std::vector<std::string>& verbs) {
  return {{"name", name}, {"singularName", ""}, {"namespaced", true}, {"kind", kind}, {"verbs", verbs}};
}

}  // namespace

const std::vector<ResourceType>& resource_types() {
  static const std::vector<ResourceType> types = build_types();
  return types;
}

const ResourceType* find_resource_type(const std::string& group, const std::string& version,
                                       const std::string& plural) {
  for (const auto& type : resource_types()) {
    if (type.group == group && type.version == version && type.plural == plural) return &type;
  }
  return nullptr;
}

json version_info() {
  return {{"major", "1"},
          {"minor", "31"},
          {"gitVersion", kServerVersion},
          {"gitCommit", "bootstorm-lab"},
          {"gitTreeState", "clean"},
          {"buildDate", "2026-01-01T00:00:00Z"},
          {"goVersion", "go1.22.0"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

json api_versions(const std::string& server_address) {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs",
           json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}})}};
}

json api_group_list() {
  json groups = json::array();
  for (const auto& [group, version] : group_versions()) groups.push_back(group_entry(group, version));
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

json api_group(const std::string& group) {
  for (const auto& [g, version] : group_versions()) {
    if (g == group) {
      json out = group_entry(g, version);
      out["kind"] = "APIGroup";
      out["apiVersion"] = "v1";
      return out;
    }
  }
  return nullptr;
}

json api_resource_list(const std::string& group, const std::string& version) {
  json resources = json::array();
  if (group == kSubresourcesGroup) {
    if (version != "v1") return nullptr;
    for (const char* action : {"start", "stop", "restart"}) {
      resources.push_back(
          subresource_entry(std::string("virtualmachines/") + action, "VirtualMachine", {"put"}));
    }
  } else {
    for (const auto& type : resource_types()) {
      if (type.group != group || type.version != version) continue;
      json entry = {{"name", type.plural},
                    {"singularName", type.singular},
                    {"namespaced", type.namespaced},
                    {"kind", type.kind},
                    {"verbs", kCrudVerbs}};
      if (!type.short_names.empty()) entry["shortNames"] = type.short_names;
      if (!type.categories.empty()) entry["categories"] = type.categories;
      resources.push_back(std::move(entry));
      if (type.status_subresource) {
        resources.push_back({{"name", type.plural + "/status"},
                             {"singularName", ""},
                             {"namespaced", type.namespaced},
                             {"kind", type.kind},
                             {"verbs", {"get", "patch", "update"}}});
      }
    }
    if (resources.empty()) return nullptr;
  }
  std::string gv = group.empty() ? version : group + "/" + version;
  return {{"kind", "APIResourceList"}, {"apiVersion", "v1"}, {"groupVersion", gv}, {"resources", resources}};
}

json openapi_v3_root() {
  json paths = json::object();
  std::set<std::string> seen;
  for (const auto& type : resource_types()) {
    std::string key = type.group.empty() ? "api/" + type.version : "apis/" + type.group + "/" + type.version;
    if (!seen.insert(key).second) continue;
    paths[key] = {{"serverRelativeURL", "/openapi/v3/" + key + "?hash=" + std::string(kServerVersion)}};
  }
  return {{"paths", paths}};
}

json openapi_v3_group_version(const std::string& group, const std::string& version) {
  // kubectl only looks for a PATCH operation tagged with the object's group/version/kind that accepts the
  // `fieldValidation` query parameter: then it leaves validation to the server instead of downloading the
  // full schema. Each served kind gets that operation.
  json paths = json::object();
  for (const auto& type : resource_types()) {
    if (type.group != group || type.version != version) continue;
    std::string path = item_path(type);
    json params = json::array();
    for (const char* name : kPatchQueryParameters) {
      params.push_back(
          {{"name", name}, {"in", "query"}, {"schema", {{"type", "string"}, {"uniqueItems", true}}}});
    }
    json gvk = {{"group", type.group}, {"version", type.version}, {"kind", type.kind}};
    paths[path] = {{"patch",
                    {{"operationId", "patch" + type.kind},
                     {"parameters", params},
                     {"responses", {{"200", {{"description", "OK"}}}}},
                     {"x-kubernetes-action", "patch"},
                     {"x-kubernetes-group-version-kind", gvk}}}};
  }
  if (paths.empty()) return nullptr;
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", kServerVersion}}},
          {"paths", paths},
          {"components", json::object()}};
}

// ------------------------------------------------------------------ OpenAPI v2 (/openapi/v2)

namespace {

// Protocol-buffer wire format, enough for gnostic's openapi_v2.Document: length-delimited fields (strings and
// nested messages) and booleans.
struct ProtoWriter {
  std::string out;
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  void bytes(int field, const std::string& value) {
    varint(static_cast<std::uint64_t>(field) << 3 | 2);
    varint(value.size());
    out += value;
  }
  void boolean(int field, bool value) {
    varint(static_cast<std::uint64_t>(field) << 3);
    varint(value ? 1 : 0);
  }
};

// NamedAny{name = 1, value = Any{yaml = 2}}
std::string named_yaml(const std::string& name, const std::string& yaml) {
  ProtoWriter any, named;
  any.bytes(2, yaml);
  named.bytes(1, name);
  named.bytes(2, any.out);
  return named.out;
}

// The PATCH Operation of `type` in gnostic's encoding: operation_id = 5, consumes = 7, produces = 6,
// parameters = 8 (ParametersItem.parameter = 1 -> Parameter.non_body_parameter = 2 ->
// NonBodyParameter.query_parameter_sub_schema = 3 -> {in = 2, name = 4, type = 6, unique_items = 20}),
// vendor_extension = 13.
std::string patch_operation_proto(const ResourceType& type) {
  ProtoWriter op;
  op.bytes(5, "patch" + type.kind);
  op.bytes(6, "application/json");
  for (const char* media : {"application/json-patch+json", "application/merge-patch+json"})
    op.bytes(7, media);
  if (type.group.empty()) op.bytes(7, "application/strategic-merge-patch+json");
  for (const char* name : kPatchQueryParameters) {
    ProtoWriter query, non_body, parameter, item;
    query.bytes(2, "query");
    query.bytes(4, name);
    query.bytes(6, "string");
    query.boolean(20, true);
    non_body.bytes(3, query.out);
    parameter.bytes(2, non_body.out);
    item.bytes(1, parameter.out);
    op.bytes(8, item.out);
  }
  op.bytes(13, named_yaml("x-kubernetes-action", "patch\n"));
  op.bytes(13,
           named_yaml("x-kubernetes-group-version-kind", "group: \"" + type.group + "\"\nkind: " + type.kind +
                                                             "\nversion: " + type.version + "\n"));
  return op.out;
}

}  // namespace

json openapi_v2() {
  json paths = json::object();
  for (const auto& type : resource_types()) {
    json params = json::array();
    for (const char* name : kPatchQueryParameters)
      params.push_back({{"name", name}, {"in", "query"}, {"type", "string"}, {"uniqueItems", true}});
    json consumes = {"application/json-patch+json", "application/merge-patch+json"};
    if (type.group.empty()) consumes.push_back("application/strategic-merge-patch+json");
    paths[item_path(type)] = {{"patch",
                               {{"operationId", "patch" + type.kind},
                                {"consumes", consumes},
                                {"produces", {"application/json"}},
                                {"parameters", params},
                                {"responses", {{"200", {{"description", "OK"}}}}},
                                {"x-kubernetes-action", "patch"},
                                {"x-kubernetes-group-version-kind",
                                 {{"group", type.group}, {"version", type.version}, {"kind", type.kind}}}}}};
  }
  return {{"swagger", "2.0"},
          {"info", {{"title", "Kubernetes"}, {"version", kServerVersion}}},
          {"paths", paths},
          {"definitions", json::object()}};
}

std::string openapi_v2_protobuf() {
  ProtoWriter info, paths, doc;
  info.bytes(1, "Kubernetes");
  info.bytes(2, kServerVersion);
  for (const auto& type : resource_types()) {
    ProtoWriter item, named;
    item.bytes(8, patch_operation_proto(type));  // PathItem.patch = 8
    named.bytes(1, item_path(type));             // NamedPathItem{name = 1, value = 2}
    named.bytes(2, item.out);
    paths.bytes(2, named.out);  // Paths.path = 2
  }
  doc.bytes(1, "2.0");      // Document.swagger = 1
  doc.bytes(2, info.out);   // Document.info = 2
  doc.bytes(8, paths.out);  // Document.paths = 8
  return doc.out;
}

}  // namespace bootstorm::sim::kube
