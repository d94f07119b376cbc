#pragma once
// The lab's runtime objects as the model holds them (lab.hpp): datacenter, clusters, hosts, datastores,
// nodes, VMs and their events, the requests that change them, and the storage telemetry the model integrates.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/model/lab_spec.hpp"

namespace bootstorm::sim::model {

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
  // is busy). Equal to the model time in virtual mode. When the lab acts through another server's API (lab
  // attach), the wall time at which that server accepted the write carrying it.
  std::array<std::optional<double>, kMilestoneCount> visible{};
  // Attached to another API server only: when the write that server accepted (visible) was sent; the server
  // accepted it within [visible_since, visible].
  std::array<std::optional<double>, kMilestoneCount> visible_since{};
  // ... and the object's resourceVersion there once it carried the milestone: every watch event of that
  // version or a later one shows it.
  std::array<std::string, kMilestoneCount> visible_version{};
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

}  // namespace bootstorm::sim::model
