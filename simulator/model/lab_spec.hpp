#pragma once
// A lab profile (simulator/labs/*.yaml) as data: the datacenter, hosts, datastores, nodes, golden images, the
// platforms' settings and the faults, loaded strictly (lab_spec.cpp) and changed at run time through
// /_lab/faults (faults_json.cpp). The runtime objects are lab_state.hpp; the model that runs them is lab.hpp.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "common/kubevirt_rate_limits.hpp"

namespace bootstorm::sim::model {

// ---------------------------------------------------------------------------------------------------------
// Lab profile (simulator/labs/*.yaml). Loaded strictly: unknown keys and wrong types are errors naming
// file:line:col.

struct DatacenterSpec {
  std::string name = "Datacenter";
};

struct ClusterSpec {
  std::string name;
};

struct HostSpec {
  std::string name;                   // "r740-01"
  std::string cluster;                // empty: standalone host in the datacenter
  std::string inventory = "vcenter";  // "vcenter": listed by the vCenter front; "kube": only backs kube nodes
  int cores = 32;                     // physical cores
  double core_speed = 1.0;            // per-core throughput relative to the reference core the profiles use
  double link_mbps = 1600;            // HBA link, MB/s (16GFC ~ 1,600; 64GFC ~ 6,400)
  double bus_mbps = 16000;            // host I/O bus (PCIe generation / lanes), MB/s
  double memory_gb = 768;
  double io_latency_ms = 0.2;  // per-I/O host path latency (HBA, PCIe, CPU/memory, storage stack)
  std::string cpu_model = "simulated lab CPU";       // what vCenter shows as summary.hardware.cpuModel
  std::string esxi = "VMware ESXi 8.0.2 build-lab";  // summary.config.product.fullName
  std::vector<std::string> datastores;               // mounted datastores; empty: all
  bool maintenance = false;  // in maintenance mode: /sdk says so (runtime.inMaintenanceMode)
};

struct DatastoreSpec {
  std::string name;
  double mbps = 8000;        // array bandwidth, MB/s
  double iops = 1'000'000;   // array IOPS
  double latency_ms = 0.15;  // array service latency per I/O
  double capacity_gb = 100'000;
};

// A Kubernetes node, backed by a host of the lab (its CPU, link and bus are the node's).
struct NodeSpec {
  std::string name;  // "worker-0"
  std::string host;  // "r7615-01"
  std::map<std::string, std::string> labels;
};

// One phase of a guest boot. Durations are uncontended: mb / (capped I/O rate) and cpu_core_s / (vCPUs x
// core speed), overlapped, plus fixed_s.
struct PhaseSpec {
  std::string name;       // firmware, os_load, services, agent_start, logon
  double mb_read = 0;     // MB read from the datastore
  double cpu_core_s = 0;  // reference-core-seconds
  double fixed_s = 0;     // wall time that no resource shortens (timeouts, waits)
  double jitter = 0;      // relative stddev of a per-VM multiplier on mb/cpu/fixed (seeded, clamped >= 0.2)
};

struct GuestProfile {
  std::string name;                       // "win10-vdi"
  std::string guest_os = "WINDOWS_9_64";  // vCenter guest OS identifier
  int cpu_count = 2;
  int memory_mb = 4096;
  double disk_gb = 40;  // provisioned disk; a full clone copies disk_used_gb
  double disk_used_gb = 20;
  std::vector<PhaseSpec> phases;
  std::string agent_phase =
      "agent_start";                    // end of this phase = guest_agent (Tools RUNNING / AgentConnected)
  double ip_delay_s = 0.5;              // ip_assigned = guest_agent + ip_delay_s
  std::string port_phase = "services";  // end of this phase (+ port_delay_s) = port_open
  double port_delay_s = 0;
  double io_size_kb = 19;      // average I/O size (KB) of the boot's reads
  double outstanding_ios = 2;  // guest queue depth during boot
  double power_on_s = 0.5;     // power-on request -> POWERED_ON (vCenter)
  double power_off_s = 0.2;
  double linked_delta_mb = 64;    // data written by a linked clone (delta disk)
  double instant_clone_mb = 256;  // data moved by an instant clone (memory state + delta)
  double instant_resume_s = 1.0;  // instant clone: powered on -> Tools running
  double clone_overhead_s = 1.0;  // fixed task overhead of any clone
};

// A powered-off VM the provider clones from (vSphere).
struct GoldenVmSpec {
  std::string name;  // "win10-golden"
  std::string host;
  std::string datastore;
  std::string profile;
  std::string folder;  // empty: the datacenter's default VM folder
  // VMware Tools installed in the image ("tools: false": not): without them its clones boot, but never report
  // guest_agent or an IP, and the /sdk front says guestToolsNotInstalled.
  bool tools = true;
};

// A golden CDI DataSource + PVC (Kubernetes).
struct GoldenImageSpec {
  std::string name;        // "win10-golden"
  std::string namespace_;  // "openshift-virtualization-os-images"
  std::string profile;
  std::string datastore;      // backing storage; empty: KubeSpec::datastore
  std::string storage_class;  // empty: KubeSpec::storage_class
};

struct KubeSpec {
  std::vector<NodeSpec> nodes;
  std::string datastore;  // where PVCs live
  std::string storage_class = "ocs-storagecluster-ceph-rbd";
  double schedule_delay_s = 0.05;  // start -> VMI Scheduled
  double launcher_start_s = 2.0;   // Scheduled -> VMI Running (virt-launcher pod, qemu start)
  std::string token;               // bearer token accepted by the kube front
  std::string server_version = "v1.27.6";
  std::string kubevirt_version = "v1.1.1";  // virt-api's /apis/subresources.kubevirt.io/v1/version
  std::string cdi_version = "v1.58.1";      // the CDI CR's status.observedVersion
  // What the token's user may not do, as RBAC attributes "verb group resource[/subresource]" (group "core"
  // for the core API), e.g. "update subresources.kubevirt.io virtualmachines/start": such a request is
  // answered 403 Forbidden, and SelfSubjectAccessReview says it is not allowed.
  std::vector<std::string> deny;
  // virt-controller's client rate limiter, written into the lab's KubeVirt CR
  // (spec.configuration.controllerConfiguration). Unset: the CR configures none and KubeVirt's default
  // applies. The lab's virt-controller paces the writes of every VMI launch by the CR, as it stands when the
  // launch is asked (simulator/README.md, "The KubeVirt CR and virt-controller's rate limiter").
  std::optional<kubevirt_limits::TokenBucketLimit> virt_controller;
  // The storage classes' CSI driver, and how CDI clones into them (their StorageProfiles' cloneStrategy:
  // csi-clone | snapshot | copy). A snapshot clone needs a VolumeSnapshotClass for the driver
  // (`snapshot_class`, "" for none): without one CDI falls back to a host-assisted copy, as it does for a
  // source in a storage class of another driver.
  std::string provisioner = "openshift-storage.rbd.csi.ceph.com";
  std::string clone_strategy = "csi-clone";
  std::string snapshot_class;
};

// A Forklift migration step that fails for one VM (kube front's Forklift controller; see README "Forklift").
struct MigrationStepFailure {
  std::string vm;      // source VM name or id
  std::string step;    // Initialize, DiskTransfer, ImageConversion, VirtualMachineCreation
  std::string reason;  // reported verbatim in the step's error.reasons
};

// Front-level and guest-level faults. Read by the fronts on every request; changed from the lab YAML
// (`faults:`) and at run time with `POST /_lab/faults` (JSON, same keys, partial update; see README).
struct Faults {
  // Guest faults, drawn per VM at power-on from the seeded RNG (reproducible), or by VM name.
  double never_boot_rate = 0;          // powers on, but the guest never gets past firmware
  double agent_never_starts_rate = 0;  // boots, but Tools / guest agent never run (no guest_agent, ip)
  std::vector<std::string> never_boot_vms;
  std::vector<std::string> agent_never_starts_vms;
  // Clone faults.
  double clone_failure_rate = 0;
  std::vector<std::string> clone_failure_hosts;  // every clone placed on these hosts fails
  // Front faults.
  double error_rate = 0;  // fraction of API requests answered with `error_status`
  int error_status = 503;
  double latency_ms = 0;          // added to every API response
  double latency_jitter_ms = 0;   // uniform extra latency in [0, jitter]
  double watch_drop_after_s = 0;  // kube: close watch streams abruptly after this long (0: never)
  bool expire_sessions = false;   // vCenter: invalidate every session now (one-shot, then cleared)
  // vCenter /sdk: every PropertyCollector forgets its versions now (one-shot, then cleared): a wait from a
  // version it had given, or one waiting then, answers InvalidCollectorVersion.
  bool forget_collector_versions = false;
  double force_gone_rate = 0;      // kube: fraction of watches answered 410 Gone (expired rv)
  std::vector<std::string> paths;  // when non-empty, front faults apply only to these path prefixes
  std::vector<MigrationStepFailure> migration_failures;  // "migrationFailures": Forklift step failures
};

// vCenter access control: a role is a set of privileges; a permission gives a user a role on an inventory
// object and, with `propagate`, on everything below it. See simulator/README.md, "Users and privileges".
struct VcenterRole {
  std::string name;
  std::vector<std::string> privileges;  // e.g. VirtualMachine.Interact.PowerOn
};

struct VcenterPermission {
  std::string entity;  // an inventory object's name or id; "/" is the root folder
  std::string role;    // a role of VcenterSpec::roles, or Admin, ReadOnly, NoAccess
  bool propagate = true;
};

struct VcenterUser {
  std::string name;
  std::string password;
  std::vector<VcenterPermission> permissions;
};

struct VcenterSpec {
  // The administrator: every privilege on every object.
  std::string username = "administrator@vsphere.local";
  std::string password;
  std::vector<VcenterRole> roles;
  std::vector<VcenterUser> users;  // more users, with only the privileges their permissions give
  double session_idle_timeout_s = 1800;
  int max_sessions_per_user = 550;
  int max_concurrent_operations = 640;
  int host_cost_units = 16;
  int clone_cost = 4;  // full/linked/instant clone cost on the destination host
  int power_cost = 1;
  int list_limit = 4000;     // GET /api/vcenter/vm answers 500 UNABLE_TO_ALLOCATE_RESOURCE beyond this
  bool legacy_rest = false;  // true: a vCenter before 7.0U2, only the legacy /rest paths (no /api)
  // What `POST /api/vcenter/vm?action=clone` costs in this lab: "full" copies the disk; "linked" models an
  // array that offloads clones (VAAI fast clone / vVols): only a delta is written. The API is the same.
  std::string clone_kind = "full";
  // vim25 methods the /sdk front answers MethodNotFound, as a vCenter without them (or a proxy that filters
  // them) does: e.g. HasPrivilegeOnEntities, to see what a run does when it cannot ask for privileges.
  std::vector<std::string> unserved_methods;
};

// How the lab's monitoring samples its storage counters (see simulator/README.md, "Storage telemetry").
struct TelemetrySpec {
  // Prometheus's scrape interval for the kubevirt_vmi_storage_* counters, in whole milliseconds.
  double scrape_interval_s = 15;
  // vCenter's real-time statistics interval (PerfProviderSummary.refreshRate), in whole seconds. A real
  // vCenter's is 20 s; a lab for quick tests may shorten it.
  double vcenter_interval_s = 20;
};

struct LabSpec {
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  DatacenterSpec datacenter;
  std::vector<ClusterSpec> clusters;
  std::vector<std::string> folders;         // VM folders besides the default "vm" folder
  std::vector<std::string> resource_pools;  // besides each cluster's root "Resources" pool
  std::vector<HostSpec> hosts;
  std::vector<DatastoreSpec> datastores;
  std::vector<GuestProfile> profiles;
  std::vector<GoldenVmSpec> golden_vms;
  std::vector<GoldenImageSpec> golden_images;
  KubeSpec kube;
  VcenterSpec vcenter;
  TelemetrySpec telemetry;
  Faults faults;
};

// Parses and validates a lab profile (YAML text). `source` names the file in error messages.
Expected<LabSpec> parse_lab_spec(std::string_view yaml_text, const std::string& source);
// Loads a lab profile: a path to a .yaml file, or a name looked up as <labs dir>/<name>.yaml in the first of
// labs_directories() that has it; not found, the error says where it looked and which labs exist.
Expected<LabSpec> load_lab_spec(const std::string& name_or_path);
// Where lab profiles are looked up, in order: $BOOTSTORM_LABS_DIR alone when set; else
// <the executable's directory>/../share/bootstorm/labs (an installed bootstorm), then
// <BOOTSTORM_SOURCE_DIR>/simulator/labs (a development build; the path is compiled in).
std::vector<std::string> labs_directories();

// Faults <-> JSON (the body of POST /_lab/faults and GET /_lab/faults). Partial update: only keys present
// change. Unknown keys and wrong types are errors (ErrorKind::invalid_input).
Expected<void> patch_faults_json(Faults& faults, std::string_view json_text);
std::string faults_to_json(const Faults& faults);
// The `migrationFailures` value alone (a JSON array of {vm, step, reason}); used by the lab YAML loader.
Expected<void> parse_migration_failures_json(std::string_view json_text,
                                             std::vector<MigrationStepFailure>& out);

}  // namespace bootstorm::sim::model
