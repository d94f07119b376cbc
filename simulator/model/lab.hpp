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
//
// The profile it is built from is lab_spec.hpp; the objects it holds are lab_state.hpp.
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
#include "simulator/model/lab_spec.hpp"
#include "simulator/model/lab_state.hpp"

namespace bootstorm::sim::model {

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
  // Whether a milestone is "visible" (Vm::visible) as soon as the model reaches it: true when the lab's own
  // fronts serve its state. False when the lab acts through another server's API (lab attach): there a
  // milestone becomes visible when that server accepts the write carrying it (note_milestone_visible).
  bool visible_at_model_time = true;
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
  // change to a client, "delivered": {...} and "written": {...} (see Vm::delivered, Vm::written); attached to
  // another API server, "visibleSince" and "visibleVersion" (Vm::visible_since, Vm::visible_version).
  // "storage" holds the storage counters sampled up to now (storage_telemetry()): {"step", "sampledUntil",
  // "columns": [at, readBytes, writeBytes, readIOs, writeIOs, readSeconds, writeSeconds], "hosts": [{"name",
  // "id", "linkMBps", "link": [samples], "datastores": {<name>: [samples]}}], "datastores": [{"name", "id",
  // "samples"}], "vms": [{"name", "id", "namespace", "node", "host", "datastore", "begin", "end", "deleted",
  // "samples"}]}, each sample an array in the order of "columns", kept only where the counters changed.
  // "bootLimits" is boot_limits(): {"since", "limits": [{"kind", "on", "capacity", "flowSeconds",
  // "peakUtilisation"}] ("on", "capacity" and "peakUtilisation" for resources only), "memoryRefusals":
  // {<host>: count}}.
  std::string truth_json();
  // The server a lab acting through another API (LabOptions::visible_at_model_time false) writes to accepted
  // the write carrying milestone `m` of VM `id`, sent at `since` and answered at `at` (unix s), with the
  // object's resourceVersion on that server: truth "visibleSince", "visible" and "visibleVersion". The first
  // call per boot wins.
  void note_milestone_visible(std::string_view id, Milestone m, double since, double at,
                              std::string server_version = {});
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

}  // namespace bootstorm::sim::model
