#pragma once
// The lab model: hosts, links, datastores, Kubernetes nodes, VMs and the physics of a boot storm. Both API
// fronts (vCenter REST in simulator/vcenter, Kubernetes in simulator/kube) share one `Lab` and read and
// mutate it only through this header.
//
// Threading: single-threaded. Every call happens on the lab's executor (real time) or on the test's thread
// (virtual time). Nothing here does I/O; the beacon callback is handed to a hook (the lab server POSTs it).
//
// Time: every instant is unix seconds as a double. In REAL mode the lab follows the steady clock (anchored to
// the wall clock at construction) and drives itself with an asio steady_timer on the executor given in
// LabOptions. In VIRTUAL mode time only moves through advance()/run_until()/run_until_idle(), so a 30 s
// Tolly storm is computed in milliseconds and deterministically.
//
// Physics (see simulator/README.md): a boot is an ordered list of phases, each reading MB from the VM's
// datastore through its host's HBA link and bus, and burning reference-core-seconds of CPU on its host. A
// phase's I/O, CPU and optional fixed wait progress concurrently; the phase ends when all three are done.
// All active flows share the resources they cross by max-min fairness (progressive filling), each
// flow additionally capped: CPU by the VM's vCPUs x the host's per-core speed, I/O by
// outstanding I/Os x I/O size / (host path latency + datastore latency). Shares are recomputed whenever a
// flow starts or ends (batched per instant), so contention emerges from shared resources only.
#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "common/kubevirt_rate_limits.hpp"
#include "simulator/model/boot_limits.hpp"

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

// ---------------------------------------------------------------------------------------------------------
// Runtime objects. IDs follow vCenter's managed object style: "vm-1001", "host-12", "datastore-15",
// "domain-c8" (cluster), "group-v4" (folder), "resgroup-9", "datacenter-2".

enum class PowerState { powered_off, powered_on, suspended };
enum class ToolsState { not_running, running };

// Milestones with true times, names as in DESIGN.md (start_received is "startReceived" in /_lab/truth).
enum class Milestone { scheduled, running, guest_agent, ip_assigned, port_open, beacon };
inline constexpr std::size_t kMilestoneCount = 6;
const char* to_string(Milestone milestone) noexcept;  // "scheduled", "running", "guest_agent", ...
const char* to_string(PowerState state) noexcept;     // "POWERED_OFF", "POWERED_ON", "SUSPENDED"
const char* to_string(ToolsState state) noexcept;     // "NOT_RUNNING", "RUNNING"

// Keys of Vm::guestinfo that the simulated guest agent reads when it reaches `beacon` (the same keys as the
// real agents in deploy/guest read through vmware-rpctool): it then POSTs {"vm", "token", "ip"} to the URL
// (the lab server's beacon hook does the HTTP). Clones inherit guestinfo from their source. The kube front
// fills them from the cloud-init user data (BOOTSTORM_BEACON_URL / _TOKEN / BOOTSTORM_VM_NAME).
inline constexpr std::string_view kBeaconUrlKey = "guestinfo.bootstorm.url";
inline constexpr std::string_view kBeaconTokenKey = "guestinfo.bootstorm.token";
inline constexpr std::string_view kBeaconVmKey =
    "guestinfo.bootstorm.vm";  // name to report; default: VM name

struct Datacenter {
  std::string id, name;
  std::string vm_folder_id, host_folder_id, datastore_folder_id, network_folder_id;
};

struct Cluster {
  std::string id, name;
  std::string resource_pool_id;  // root pool "Resources"
};

struct Folder {
  std::string id, name;
  std::string type;  // vCenter Folder.Type: VIRTUAL_MACHINE, HOST, DATASTORE, NETWORK, DATACENTER
};

struct ResourcePool {
  std::string id, name;
  std::string cluster_id;  // empty for a host's own root pool
};

struct Host {
  std::string id;
  HostSpec spec;
  std::string cluster_id;     // empty: standalone
  double memory_used_mb = 0;  // powered-on VMs and power-ons in flight
  int running_vms = 0;
  std::string connection_state = "CONNECTED";
  std::string power_state = "POWERED_ON";
};

struct Datastore {
  std::string id;
  DatastoreSpec spec;
  double used_gb = 0;
};

struct Node {
  NodeSpec spec;
  std::string host_id;
  int running_vms = 0;
};

struct GoldenImage {
  GoldenImageSpec spec;
  std::string datastore_id;
};

struct Vm {
  std::string id;  // "vm-1001"
  std::string name;
  std::string namespace_;        // kube-created VMs; empty for vCenter VMs
  std::string created_by_front;  // "lab" (golden, from YAML), "vcenter", "kube"
  std::string profile;
  std::string guest_os;
  int cpu_count = 2;
  int memory_mb = 4096;
  std::string host_id;
  std::string node;  // kube node name once scheduled
  std::string datastore_id;
  // Where the VM's boot reads are served: the shared base disk of a linked or instant clone (its source's),
  // else its own disk's datastore (empty: datastore_id). See simulator/README.md, "Linked clones".
  std::string base_datastore_id;
  std::string folder_id;
  std::string resource_pool_id;
  std::string cluster_id;
  PowerState power = PowerState::powered_off;
  ToolsState tools = ToolsState::not_running;
  std::string ip;             // guest IP as the platform reports it (Tools / guest agent), set at ip_assigned
  std::string guest_address;  // the address the guest itself holds (from running on; the beacon reports it)
  std::string host_name;      // guest hostname (guest identity)
  bool golden = false;
  bool tools_installed = true;  // VMware Tools / the guest agent is in the image (clones inherit it)
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> guestinfo;  // extraConfig-like "guestinfo.*" keys, inherited by clones
  std::uint64_t resource_version =
      0;  // bumped on every change (shared counter, see Lab::next_resource_version)
  double created_at = 0;
  // Ground truth of the current/last boot.
  std::optional<double> start_received;
  std::array<std::optional<double>, kMilestoneCount> milestones{};
  // When each milestone became visible through the APIs: the wall time at which the model processed it and
  // the fronts committed the change (the lab thread may process an event later than its model time when it
  // is busy). Equal to the model time in virtual mode.
  std::array<std::optional<double>, kMilestoneCount> visible{};
  // When a front first pushed the change to a client (kube: the first watch frame carrying it was handed to
  // a watcher's socket). Empty for milestones nobody was watching.
  std::array<std::optional<double>, kMilestoneCount> delivered{};
  // When the write that carried that first frame completed (the front's event loop ran its completion).
  // written - delivered is the front's own share of the observation error; see bench/README.md.
  std::array<std::optional<double>, kMilestoneCount> written{};
  std::string current_phase;        // empty when not booting
  bool never_boots = false;         // drawn at power-on
  bool agent_never_starts = false;  // drawn at power-on
  int boot_count = 0;

  const std::optional<double>& milestone(Milestone m) const {
    return milestones[static_cast<std::size_t>(m)];
  }
};

struct VmEvent {
  enum class Type { added, modified, deleted };
  Type type = Type::modified;
  const Vm& vm;                        // valid during the callback only (for `deleted`: the VM as it was)
  std::optional<Milestone> milestone;  // set when the change is a milestone
};

enum class CloneKind {
  full,           // vSphere full clone: copies disk_used_gb (datastore read+write, host link)
  linked,         // vSphere linked clone: delta disk only
  instant,        // vSphere instant clone: source must be powered on; result is powered on, guest resumed
  cdi_copy,       // CDI host-assisted copy: full data through the node's host link
  cdi_snapshot,   // CDI snapshot clone: array-side, small
  cdi_csi_clone,  // CDI CSI clone: array-side copy (datastore only)
};
const char* to_string(CloneKind kind) noexcept;

struct CloneRequest {
  CloneKind kind = CloneKind::full;
  std::string source_vm_id;  // vSphere kinds
  std::string source_image;  // CDI kinds: golden image name
  std::string source_image_namespace;
  std::string name;
  std::string namespace_;  // kube-created VMs
  std::string host_id;     // placement; empty: the cluster's/source's host (least loaded)
  std::string cluster_id;
  std::string datastore_id;  // empty: the source's
  std::string folder_id;
  std::string resource_pool_id;
  std::string created_by_front = "vcenter";
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> guestinfo;  // merged over the source's
  bool power_on = false;  // vSphere: power on right after the clone (start_received = completion)
};

// CDI volume clone (a DataVolume populating a PVC): a data flow only, no VM is created.
struct VolumeCloneRequest {
  CloneKind kind = CloneKind::cdi_copy;
  std::string source_image;
  std::string source_image_namespace;
  std::string node;    // target node (its host's link carries a host-assisted copy); empty: any
  double size_gb = 0;  // 0: the image profile's disk_used_gb
};

struct PowerOnOptions {
  std::string node;  // kube: required node (nodeSelector/nodeName); empty: scheduler picks least loaded
  // kube: how long virt-controller's rate limiter holds the launch before the scheduler sees it (the start is
  // received now: the wait is part of the VM's start -> scheduled time in the ground truth).
  double control_plane_wait_s = 0;
};

// ---------------------------------------------------------------------------------------------------------
// Storage telemetry: what the disks, links and arrays did, as exact integrals of the model's flows.

// Cumulative I/O since the counters began.
struct IoCounters {
  double read_bytes = 0, write_bytes = 0;
  double read_ios = 0, write_ios = 0;
  // Summed I/O latency (each I/O's service time added up). By Little's law that is the queue depth held,
  // integrated over time: mean latency = read_seconds / read_ios.
  double read_seconds = 0, write_seconds = 0;
  IoCounters& operator+=(const IoCounters& other);
  bool operator==(const IoCounters&) const = default;
};

struct IoSample {
  double at = 0;  // unix seconds, an instant of the storage grid
  IoCounters total;
};

// Counters on the storage grid (StorageTelemetry::step). Only the instants at which they had changed are
// kept: the value at a grid instant t is the last sample at or before t, zero before the first.
struct IoHistory {
  std::vector<IoSample> samples;
  IoCounters at(double t) const;
};

// One boot's disk I/O, from running (the VMI is Running / the VM is POWERED_ON: the counters begin at zero)
// to power-off or deletion. A VM that boots again begins a new series.
struct VmIoSeries {
  std::string vm_id, name, namespace_;
  std::string node;          // kube VMs
  std::string host_id;       // where it ran
  std::string datastore_id;  // where its boot reads were served
  double begin = 0;
  std::optional<double> end;
  bool deleted = false;  // ended by deletion (vCenter drops a destroyed VM's statistics)
  IoHistory history;
};

struct StorageTelemetry {
  double step = 5;           // the grid, s: gcd(scrape interval, 20 s), on multiples of it in unix time
  double sampled_until = 0;  // the last grid instant sampled; nothing later is known yet
  std::vector<IoHistory> host_links;       // by index of Lab::hosts(): the host's HBA link
  std::vector<IoHistory> datastores;       // by index of Lab::datastores(): everything the array served
  std::vector<IoHistory> host_datastores;  // [host index * datastore count + datastore index]
  std::vector<VmIoSeries> vms;             // in the order the boots reached running
};

using OperationId = std::uint64_t;
using SubscriptionId = std::uint64_t;
using VmCallback = std::function<void(Expected<std::string>)>;  // new VM id, or why it failed
using DoneCallback = std::function<void(Expected<void>)>;

struct LabOptions {
  enum class TimeMode { real, virtual_time };
  TimeMode mode = TimeMode::real;
  boost::asio::any_io_executor executor;  // required in real mode
  std::optional<double> virtual_start;  // virtual mode: unix time of t0 (default: wall clock at construction)
  std::optional<std::uint64_t> seed;    // overrides LabSpec::seed
};

class Lab {
 public:
  Lab(LabSpec spec, LabOptions options);
  ~Lab();
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  const LabSpec& spec() const;
  bool virtual_time() const;

  // ---- Time ----
  double now() const;  // unix seconds
  // Virtual mode only (asserts otherwise): process every event up to `until` (inclusive), leave now = until.
  void run_until(double until);
  void advance(double seconds);
  // Runs until nothing is pending or `deadline` is reached; returns true when idle.
  bool run_until_idle(double deadline);
  // Schedules `fn` at now + delay_s of lab time (fronts use it for lab-time delays). Returns a handle.
  std::uint64_t schedule(double delay_s, std::function<void()> fn);
  void cancel_scheduled(std::uint64_t handle);
  // Real mode: stops the driving timer and drops pending events (call before destroying the executor).
  void shutdown();

  // ---- Inventory ----
  const Datacenter& datacenter() const;
  const std::vector<Cluster>& clusters() const;
  const std::vector<Folder>& folders() const;
  const std::vector<ResourcePool>& resource_pools() const;
  const std::vector<Host>& hosts() const;
  const std::vector<Datastore>& datastores() const;
  const std::vector<Node>& nodes() const;
  const std::vector<GoldenImage>& golden_images() const;
  const GuestProfile* find_profile(std::string_view name) const;
  const Host* find_host(std::string_view id_or_name) const;
  const Datastore* find_datastore(std::string_view id_or_name) const;
  const Cluster* find_cluster(std::string_view id_or_name) const;
  const Folder* find_folder(std::string_view id_or_name) const;
  const ResourcePool* find_resource_pool(std::string_view id_or_name) const;
  const Node* find_node(std::string_view name) const;
  const GoldenImage* find_golden_image(std::string_view namespace_, std::string_view name) const;

  // ---- VMs ----
  std::size_t vm_count() const;
  // Every VM in id order (stable): fn returns false to stop early.
  void for_each_vm(const std::function<bool(const Vm&)>& fn) const;
  const Vm* find_vm(std::string_view id) const;
  const Vm* find_vm_by_name(std::string_view name, std::string_view namespace_ = {}) const;

  // Creates a powered-off VM directly (kube VirtualMachine whose disk is ready; tests). Fails on a duplicate
  // name in the namespace, unknown host/datastore/profile.
  struct CreateVmSpec {
    std::string name;
    std::string namespace_;
    std::string profile;
    std::string host_id;            // empty: least loaded host (kube: chosen at start)
    std::string datastore_id;       // empty: first datastore of the host / kube datastore
    std::string base_datastore_id;  // linked/instant clones: the datastore of the shared base disk
    std::string folder_id, resource_pool_id;
    std::string created_by_front = "kube";
    std::optional<int> cpu_count, memory_mb;
    bool tools_installed = true;
    std::map<std::string, std::string> labels, annotations, guestinfo;
  };
  Expected<std::string> create_vm(CreateVmSpec spec);

  // Edits a VM's metadata (labels, annotations, guestinfo, name...) and notifies subscribers. Do not change
  // power/tools/milestones here. Returns false when the VM does not exist.
  bool modify_vm(std::string_view id, const std::function<void(Vm&)>& edit);

  // Clones a VM (vSphere kinds) or creates a VM from a golden image (CDI kinds). Validation errors
  // (unknown source, duplicate name, instant clone of a powered-off source...) come back immediately; the
  // callback fires once the clone's data flow completes (or fails by fault), on the lab's executor.
  Expected<OperationId> clone_vm(const CloneRequest& request, VmCallback done);
  // CDI DataVolume population: a flow only.
  Expected<OperationId> clone_volume(const VolumeCloneRequest& request, DoneCallback done);

  // A bulk data flow (Forklift disk transfer, image conversion): `mb` crosses the link and bus of every host
  // listed and the bandwidth and IOPS (1 MB per I/O) of every datastore listed (a datastore listed twice is
  // read and written). Shares resources with boots and clones by max-min fairness. `done` fires on the lab's
  // executor when the data has moved; not after cancel_data_flow.
  struct DataFlowRequest {
    std::vector<std::string> host_ids;
    std::vector<std::string> datastore_ids;
    double mb = 0;
  };
  Expected<OperationId> start_data_flow(const DataFlowRequest& request, DoneCallback done);
  // MB moved so far by a running data flow (its total once complete; 0 when unknown).
  double data_flow_done_mb(OperationId id);
  // Stops a running data flow; false when it is not running.
  bool cancel_data_flow(OperationId id);

  // Power on: sets start_received = now, then (kube: scheduled, then) running after the profile's
  // power-on time, then the guest's boot phases. `on_running` fires at running (vCenter's blocking power
  // start returns then). Errors: not found, already powered on (ErrorKind::conflict), host memory exhausted.
  Expected<void> power_on(std::string_view id, DoneCallback on_running, PowerOnOptions options = {});
  // Power off: aborts the boot; powered off after the profile's power_off_s. Conflict when already off.
  Expected<void> power_off(std::string_view id, DoneCallback on_off);
  // Whether the VM's host has the free memory to power it on (a power-on holds it from the request). The
  // fronts ask before they accept a power-on, to answer with their platform's fault; a refusal, theirs or
  // power_on's own, is counted in boot_limits().memory_refusals.
  bool admit_memory(std::string_view vm_id);
  // Deletes a VM (any state; fronts enforce their own preconditions). Fails when it does not exist.
  Expected<void> delete_vm(std::string_view id);

  // ---- Notifications ----
  SubscriptionId subscribe(std::function<void(const VmEvent&)> fn);
  void unsubscribe(SubscriptionId id);
  // Called when a VM reaches `beacon` and has guestinfo[kBeaconUrlKey] set.
  void set_beacon_hook(std::function<void(const Vm&)> hook);
  // One resourceVersion sequence for all objects of the lab (kube front uses it for its own objects too).
  std::uint64_t next_resource_version();
  std::uint64_t current_resource_version() const;

  // ---- Faults ----
  Faults& faults();
  const Faults& faults() const;
  // Seeded RNG shared by the fronts for fault draws (reproducible per seed and call order).
  double random_uniform();  // [0, 1)
  // True when a front fault (error/latency) applies to `path` (Faults::paths empty or prefix match).
  bool front_fault_applies(std::string_view path) const;

  // ---- Ground truth ----
  // {"vms":[{"name","id","namespace","host","node","startReceived":<unix s>,"milestones":{...}}]} — VMs
  // that have received a start request — and "clones": [{"name","kind","datastoreMB","linkMB","requested",
  // "completed"|"failed"}], the data every clone moved (datastore MB: read + written; link MB: through the
  // destination host's HBA), so that a test can compare what provisioning cost by clone kind.
  // Every entry also has "visible": {<milestone>: <unix s>} (see Vm::visible) and, when a front pushed the
  // change to a client, "delivered": {...} and "written": {...} (see Vm::delivered, Vm::written).
  // "storage" holds the storage counters sampled up to now (storage_telemetry()): {"step", "sampledUntil",
  // "columns": [at, readBytes, writeBytes, readIOs, writeIOs, readSeconds, writeSeconds], "hosts": [{"name",
  // "id", "linkMBps", "link": [samples], "datastores": {<name>: [samples]}}], "datastores": [{"name", "id",
  // "samples"}], "vms": [{"name", "id", "namespace", "node", "host", "datastore", "begin", "end", "deleted",
  // "samples"}]}, each sample an array in the order of "columns", kept only where the counters changed.
  // "bootLimits" is boot_limits(): {"since", "limits": [{"kind", "on", "capacity", "flowSeconds",
  // "peakUtilisation"}] ("on", "capacity" and "peakUtilisation" for resources only), "memoryRefusals":
  // {<host>: count}}.
  std::string truth_json();
  // A front pushed milestone `m` of VM `id` to a client at `at` (unix s); the first call per boot wins.
  void note_milestone_delivered(std::string_view id, Milestone m, double at);
  // The write that delivered milestone `m` of VM `id` completed at `at` (unix s).
  void note_milestone_written(std::string_view id, Milestone m, double at);
  // Adds a top-level section to truth_json(): `json_text()` returns a JSON value (fronts' own ground truth,
  // e.g. the Forklift controller's "migrations"). An empty function removes the section.
  void set_truth_section(const std::string& key, std::function<std::string()> json_text);

  // ---- Storage telemetry (storage_meter.cpp) ----
  // Samples the counters up to now and returns them. The fronts' monitoring APIs (Prometheus, vCenter's
  // PerformanceManager) and the truth's "storage" section read this, never the flows.
  const StorageTelemetry& storage_telemetry();

  // ---- What held the boots back (flow_network.cpp) ----
  // Accounted since the lab started or the last reset: a capacity search names from it the resource that
  // bound a layout. Clones and other bulk transfers are not boots and are not counted.
  BootLimits boot_limits() const;
  void reset_boot_limits();

  // ---- Introspection (tests, benches) ----
  struct FlowStats {
    std::size_t active_flows = 0;
    std::uint64_t recomputes = 0;
    std::uint64_t events_processed = 0;
  };
  FlowStats flow_stats() const;
  // Current rates (MB/s) through a host's link and a datastore, summed over active flows.
  double host_link_rate(std::string_view host_id) const;
  double datastore_rate(std::string_view datastore_id) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Faults <-> JSON (the body of POST /_lab/faults and GET /_lab/faults). Partial update: only keys present
// change. Unknown keys and wrong types are errors (ErrorKind::invalid_input).
Expected<void> patch_faults_json(Faults& faults, std::string_view json_text);
std::string faults_to_json(const Faults& faults);
// The `migrationFailures` value alone (a JSON array of {vm, step, reason}); used by the lab YAML loader.
Expected<void> parse_migration_failures_json(std::string_view json_text,
                                             std::vector<MigrationStepFailure>& out);

}  // namespace bootstorm::sim::model
