#pragma once
// The resource types the simulated Kubernetes API serves (core v1, storage.k8s.io/v1 StorageClass,
// snapshot.storage.k8s.io/v1 VolumeSnapshotClass, kubevirt.io/v1 with the KubeVirt CR,
// cdi.kubevirt.io/v1beta1 with StorageProfile, forklift.konveyor.io/v1beta1, flowcontrol.apiserver.k8s.io/v1)
// and the discovery documents derived from them: /api, /api/v1, /apis, /apis/<group>,
// /apis/<group>/<version>, and a minimal /openapi/v3 that tells kubectl the server validates fields itself
// (so `kubectl apply` does not need a full schema).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bootstorm::sim::kube {

struct ResourceType {
  std::string group;    // "" for the core group
  std::string version;  // "v1", "v1beta1"
  std::string plural;   // "virtualmachines"
  std::string singular;
  std::string kind;  // "VirtualMachine"
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<std::string> field_selectors;  // supported fieldSelector paths
  bool status_subresource = true;

  std::string group_version() const { return group.empty() ? version : group + "/" + version; }
  std::string api_version() const { return group_version(); }
  std::string list_kind() const { return kind + "List"; }
  // "/api/v1" or "/apis/<group>/<version>"
  std::string path_prefix() const {
    return group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  }
};

// Index into resource_types() of each served type (stable order).
enum class Kind : std::size_t {
  namespaces,
  nodes,
  events,
  persistent_volume_claims,
  secrets,
  virtual_machines,
  virtual_machine_instances,
  data_volumes,
  data_sources,
  forklift_providers,
  forklift_network_maps,
  forklift_storage_maps,
  forklift_plans,
  forklift_migrations,
  kube_virts,        // kubevirt.io/v1 KubeVirt: the installation's CR (versions, component configuration)
  storage_classes,   // storage.k8s.io/v1 StorageClass
  storage_profiles,  // cdi.kubevirt.io/v1beta1 StorageProfile: how CDI clones into a storage class
  volume_snapshot_classes,  // snapshot.storage.k8s.io/v1 VolumeSnapshotClass: what CDI's snapshot clones need
  cdis,                     // cdi.kubevirt.io/v1beta1 CDI: the installation's CR (its version)
  // flowcontrol.apiserver.k8s.io/v1 API Priority and Fairness: the objects whose UIDs every answer names
  // (X-Kubernetes-PF-FlowSchema-UID, X-Kubernetes-PF-PriorityLevel-UID).
  flow_schemas,
  priority_level_configurations,
  routes,  // route.openshift.io/v1 Route: where OpenShift exposes a service (the monitoring stack's query
           // API)
  count_
};

const std::vector<ResourceType>& resource_types();
inline const ResourceType& resource_type(Kind kind) {
  return resource_types()[static_cast<std::size_t>(kind)];
}
// nullptr when the group/version/plural is not served.
const ResourceType* find_resource_type(const std::string& group, const std::string& version,
                                       const std::string& plural);

constexpr const char* kSubresourcesGroup = "subresources.kubevirt.io";
// Where the lab's KubeVirt CR (and virt-api) lives: upstream's install (OpenShift's is
// openshift-cnv/kubevirt-kubevirt-hyperconverged).
inline constexpr const char* kKubeVirtNamespace = "kubevirt";
inline constexpr const char* kKubeVirtName = "kubevirt";
constexpr const char* kServerVersion = "v1.31.4";

nlohmann::json version_info();
nlohmann::json api_versions(const std::string& server_address);  // GET /api
nlohmann::json api_group_list();                                 // GET /apis
// GET /apis/<group>; null when not served.
nlohmann::json api_group(const std::string& group);
// GET /api/v1 or /apis/<group>/<version>; null when not served.
nlohmann::json api_resource_list(const std::string& group, const std::string& version);
// GET /openapi/v2: every served type's PATCH operation with its group/version/kind and the dryRun query
// parameter, no schemas (kubectl up to 1.25 checks server-side dry-run support there; with no definitions it
// leaves validation to the server). JSON, and the protobuf encoding of gnostic's openapi_v2.Document that
// client-go asks for.
nlohmann::json openapi_v2();
std::string openapi_v2_protobuf();
nlohmann::json openapi_v3_root();  // GET /openapi/v3
// GET /openapi/v3/api/v1 or /openapi/v3/apis/<group>/<version>; null when not served.
nlohmann::json openapi_v3_group_version(const std::string& group, const std::string& version);

}  // namespace bootstorm::sim::kube
