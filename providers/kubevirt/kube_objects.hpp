#pragma once
// The Kubernetes / KubeVirt / CDI objects bootstorm sends, built with nlohmann_json to the published schemas
// (kubevirt.io/v1 VirtualMachine, cdi.kubevirt.io/v1beta1 DataVolume templates, StartOptions, StopOptions,
// DeleteOptions), the API paths, and the decoding of what comes back (Status errors, watch events).
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "protocol/kube/status_error.hpp"
#include "protocol/kube/watch_decode.hpp"

namespace bootstorm::kubevirt {

inline constexpr const char* kRunLabel = "bootstorm.io/run";
inline constexpr const char* kScenarioLabel = "bootstorm.io/scenario";
inline constexpr const char* kScenarioNameAnnotation = "bootstorm.io/scenario-name";
inline constexpr const char* kHostnameLabel = "kubernetes.io/hostname";
inline constexpr const char* kRootDiskName = "rootdisk";
inline constexpr const char* kCloudInitDiskName = "cloudinitdisk";

// The member at `path` of `obj`: nullptr when a step is missing or not an object.
const nlohmann::json* json_at(const nlohmann::json& obj, std::initializer_list<const char*> path);
// Its string: "" when absent or not a string.
std::string text_at(const nlohmann::json& obj, std::initializer_list<const char*> path);
// The metadata.labels[key] of an object ("" when absent).
std::string label_of(const nlohmann::json& obj, const char* key);
std::string name_of(const nlohmann::json& obj);

// A label value (<= 63 characters, [a-z0-9]([-a-z0-9_.]*[a-z0-9])?) derived from a free-form name.
std::string label_slug(std::string_view name);

// The run's label selector, URL-encoded for a query string: "bootstorm.io%2Frun%3D<id>".
std::string run_selector_query(const std::string& run_id);

struct VmBuild {
  std::string name;
  std::string namespace_;
  std::string run_id;
  std::string scenario;  // scenario name as in the plan
  std::string host;      // node hostname (kubernetes.io/hostname)
  // Golden image: a DataSource (name + namespace) or a PVC "namespace/name".
  std::string datasource_name;
  std::string datasource_namespace;
  std::string pvc;
  std::string clone_strategy;  // auto | copy | snapshot | csi-clone (recorded; CDI's StorageProfile decides)
  // Guest sizing (the golden image's OS decides what it needs; desktops of the Tolly test had 2 vCPU / 4
  // GiB).
  int cpu_cores = 2;
  std::string memory = "4Gi";
  // Beacon handed to the guest through cloud-init; empty URL = no beacon.
  std::string beacon_url;
  std::string beacon_token;
};

std::string datavolume_name(const std::string& vm_name);

// kubevirt.io/v1 VirtualMachine with runStrategy Halted, one dataVolumeTemplate cloning the golden source,
// labels on the VM, its template and the DataVolume, node pinning and cloud-init.
nlohmann::json build_virtual_machine(const VmBuild& build);
// The cloud-config user data carrying the beacon URL and token.
std::string cloud_init_user_data(const VmBuild& build);
// v1 Namespace labelled with the run that created it.
nlohmann::json build_namespace(const std::string& name, const std::string& run_id);
nlohmann::json start_options();
nlohmann::json stop_options();
nlohmann::json delete_options();  // propagationPolicy Foreground: the VM's DataVolumes and VMI go with it

// Paths.
std::string vms_path(const std::string& ns);  // /apis/kubevirt.io/v1/namespaces/NS/virtualmachines
std::string vm_path(const std::string& ns, const std::string& name);
std::string vm_subresource_path(const std::string& ns, const std::string& name, const std::string& action);
std::string vmis_path(const std::string& ns);
std::string datavolumes_path(const std::string& ns);
std::string datasource_path(const std::string& ns, const std::string& name);

// DataVolume progress as wait_startable sees it.
struct DataVolumeState {
  std::string phase;
  bool succeeded = false;
  bool failed = false;
  std::string detail;  // conditions and progress, verbatim
  // How CDI clones it (annotation cdi.kubevirt.io/cloneType: csi-clone, snapshot, copy), once it chose.
  std::string clone_type;
};
DataVolumeState datavolume_state(const nlohmann::json& dv);

}  // namespace bootstorm::kubevirt
