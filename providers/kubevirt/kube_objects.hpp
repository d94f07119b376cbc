#pragma once
// The Kubernetes / KubeVirt / CDI objects bootstorm sends, built with nlohmann_json to the published schemas
// (kubevirt.io/v1 VirtualMachine, cdi.kubevirt.io/v1beta1 DataVolume templates, StartOptions, StopOptions,
// DeleteOptions), the API paths, and the decoding of what comes back (Status errors, watch events).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::kubevirt {

inline constexpr const char* kRunLabel = "bootstorm.io/run";
inline constexpr const char* kScenarioLabel = "bootstorm.io/scenario";
inline constexpr const char* kScenarioNameAnnotation = "bootstorm.io/scenario-name";
inline constexpr const char* kHostnameLabel = "kubernetes.io/hostname";
inline constexpr const char* kRootDiskName = "rootdisk";
inline constexpr const char* kCloudInitDiskName = "cloudinitdisk";

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

// A Kubernetes Status error body decoded into an Error that names `what` (e.g. "creating VirtualMachine x").
Error status_error(int http_status, std::string_view body, const std::string& what);

// One line of a watch stream.
struct WatchEvent {
  enum class Type { added, modified, deleted, bookmark, error };
  Type type = Type::added;
  nlohmann::json object;
  int error_code = 0;  // ERROR events: Status.code (410 = Gone)
  std::string error_message;
  std::string resource_version() const;  // object's metadata.resourceVersion
};
// What decode_watch_line keeps of the event's object. `milestone_fields` keeps only what the observers read
// (VMI milestones, DataVolume phases): kind, apiVersion, metadata {name, namespace, uid, resourceVersion} and
// status {phase, nodeName, phaseTransitionTimestamps, conditions, interfaces, progress}. Everything else is
// skipped by a scanner without being parsed, which makes a VMI line several times cheaper to decode
// (bench/kubevirt: watch_decode_bench). ERROR events, and any line the scanner does not follow (escaped keys,
// odd nesting), go through the full parser (which keeps every field), so the fields listed are the same
// whichever path decoded the line.
enum class WatchDecode { full, milestone_fields };
Expected<WatchEvent> decode_watch_line(std::string_view line, WatchDecode mode = WatchDecode::full);
// The watch line with only what `milestone_fields` keeps, as text: a scan and copies, no parsing. A 10,000-VM
// storm's VMI lines waiting for the provider's loop took 147 MB as they came (a VMI line is ~3 KB); compacted
// they take a fraction, and decoding them later is cheaper. decode_watch_line(*compact, milestone_fields)
// equals decode_watch_line(line, milestone_fields). nullopt: the scanner cannot follow the line (escaped
// keys, odd nesting) or it is an ERROR event — keep the line as it is.
std::optional<std::string> compact_watch_line(std::string_view line);

// A list response (VirtualMachineInstanceList, DataVolumeList): its resourceVersion and its items. With
// `milestone_fields` the items keep only the fields decode_watch_line keeps, and a 10,000-object list is not
// held as a full DOM (a full parse of 4,000 DataVolumes, plus a copy of its items, peaked at 26 MB).
struct ObjectList {
  std::string resource_version;
  std::vector<nlohmann::json> items;
};
Expected<ObjectList> decode_list(std::string_view body, WatchDecode mode = WatchDecode::full);

// DataVolume progress as wait_startable sees it.
struct DataVolumeState {
  std::string phase;
  bool succeeded = false;
  bool failed = false;
  std::string detail;  // conditions and progress, verbatim
};
DataVolumeState datavolume_state(const nlohmann::json& dv);

}  // namespace bootstorm::kubevirt
