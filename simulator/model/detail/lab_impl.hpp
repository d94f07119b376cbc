#pragma once
// Internal to bootstorm::sim_model: the lab's private state, shared by the parts of the model that act on it
// (event_clock.cpp, flow_network.cpp, boot_machine.cpp, cloning.cpp, inventory.cpp, ground_truth.cpp and
// the facade in lab.cpp).
#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "simulator/model/lab.hpp"

namespace bootstorm::sim::model {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr std::uint64_t kFirstVmNumber = 1001;

inline std::string name_key(std::string_view namespace_, std::string_view name) {
  std::string key(namespace_);
  key.push_back('\x1f');
  key.append(name);
  return key;
}

inline bool listed(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

inline std::optional<std::uint64_t> vm_number(std::string_view id) {
  if (id.size() < 4 || id.substr(0, 3) != "vm-") return std::nullopt;
  std::uint64_t n = 0;
  for (char c : id.substr(3)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

// Where one unit of a flow's work goes as storage I/O: `mb_per_work` MB read from or written to `datastore`
// through `host`'s link (either may be kNoIndex), in I/Os of `io_mb`, with `queue` I/Os outstanding per flow.
inline constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
inline constexpr int kNoLimiter = -1;
struct IoPath {
  std::size_t host = kNoIndex;
  std::size_t datastore = kNoIndex;
  bool write = false;
  double mb_per_work = 1;
  double io_mb = 1;
  double queue = 1;
};

// The storage counters' live state (storage_meter.cpp): advanced with the flows, sampled on the grid.
struct StorageMeter {
  // A guest's boot reads: attributed to the series of the boot that issued them.
  struct VmFlow {
    std::size_t series = 0;
    int cls = 0;
    double start_service = 0;
    double started_at = 0;
    double work = 0;
  };
  std::int64_t next_grid = 0;  // index of the next grid instant (next_grid * step)
  bool changed = false;        // counters moved since the last sample
  std::vector<IoCounters> host_links, datastores, host_datastores;
  std::unordered_map<std::uint64_t, VmFlow> vm_flows;          // by flow id
  std::unordered_map<std::uint64_t, std::size_t> open_series;  // by VM number
  std::vector<IoCounters> folded;                              // by series: ended flows' I/O
  std::unordered_set<std::size_t> touched;                     // series folded since the last sample
  StorageTelemetry published;
};

struct Lab::Impl {
  // A class of interchangeable flows: same resources, same coefficients, same cap. Max-min fairness gives
  // them the same rate, so the class keeps one cumulative per-flow "service" counter and a heap of finish
  // levels (generalised processor sharing virtual time): an event costs O(classes + log flows), not
  // O(flows), which is what lets 10,000 booting VMs fit.
  struct FlowClass {
    std::vector<std::pair<int, double>> uses;
    std::vector<IoPath> paths;  // its storage I/O; empty for CPU
    double cap = kInf;
    bool boot = false;  // a guest boot's reads or CPU (counted in the boot limits)
    int limiter =
        kNoLimiter;   // what holds it at its rate: a resource index, or cap_io_limiter() / cap_cpu_limiter()
    double rate = 0;  // per flow, MB/s or reference-core-s/s
    double service = 0;  // per-flow work done since the class was created
    std::size_t count = 0;
    using Entry = std::pair<double, std::uint64_t>;  // (finish service level, flow id)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> finishes;
  };
  struct FlowRecord {
    int cls = 0;
    std::function<void()> done;
  };
  struct Event {
    double time;
    std::uint64_t seq;
    bool operator>(const Event& other) const {
      return time != other.time ? time > other.time : seq > other.seq;
    }
  };
  // The in-flight power transition and boot of one VM. Everything it owns is cancelled on power-off/delete.
  struct Boot {
    std::uint64_t generation = 0;
    bool powering_on = false;
    bool powering_off = false;
    std::size_t phase = 0;
    int pending_parts = 0;
    std::vector<std::uint64_t> flows;
    std::vector<std::uint64_t> timers;
    DoneCallback on_running;
    DoneCallback on_off;
    // A power-on holds the VM's memory on its host from the request, as vCenter's and the scheduler's
    // admission do, so that a burst of power-ons cannot overcommit the host; running takes the hold over.
    std::size_t memory_host = kNoIndex;
  };

  LabSpec spec;
  LabOptions options;
  bool virtual_mode = false;
  std::uint64_t seed = 1;

  double now_ = 0;        // time up to which the model has been processed
  double start_unix = 0;  // real mode: unix time at `anchor`
  std::chrono::steady_clock::time_point anchor;

  Datacenter datacenter;
  std::vector<Cluster> clusters;
  std::vector<Folder> folders;
  std::vector<ResourcePool> resource_pools;
  std::vector<Host> hosts;
  std::vector<Datastore> datastores;
  std::vector<Node> nodes;
  std::vector<GoldenImage> golden_images;

  std::map<std::uint64_t, Vm> vms;
  std::unordered_map<std::string, std::uint64_t> vm_by_name;
  std::unordered_set<std::string> reserved_names;  // clones in flight
  std::uint64_t next_vm = kFirstVmNumber;

  std::vector<double> capacity;  // resources: per host cpu, link, bus; per datastore bandwidth, iops
  // The boot limits (Lab::boot_limits): flow-seconds by limiter (resources, then the two caps past them),
  // each resource's peak boot utilisation, the memory refusals, and when the accounting began.
  std::vector<double> limit_seconds;
  std::vector<double> peak_boot_use;
  std::map<std::string, int> memory_refusals;
  double limits_since = 0;
  std::vector<FlowClass> classes;
  std::unordered_map<std::string, int> class_index;
  std::unordered_map<std::uint64_t, FlowRecord> flows;
  std::uint64_t next_flow = 1;
  bool dirty = false;
  double next_flow_time = kInf;
  double settled_at = 0;

  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::unordered_map<std::uint64_t, std::function<void()>> event_fns;
  std::uint64_t next_event = 1;

  // Bulk data flows (start_data_flow): flow id, class and the class's service level when the flow started.
  struct DataFlow {
    std::uint64_t flow = 0;
    int cls = 0;
    double start_service = 0;
    double mb = 0;
    bool done = false;
  };
  std::unordered_map<OperationId, DataFlow> data_flows;
  std::map<std::string, std::function<std::string()>> truth_sections;
  // What every VM clone moved, for the truth's "clones" (see Lab::truth_json).
  struct CloneRecord {
    std::string name;
    CloneKind kind = CloneKind::full;
    double datastore_mb = 0;  // read + written on the datastore
    double link_mb = 0;       // through the destination host's link
    double requested = 0;
    std::optional<double> completed;
    bool failed = false;
  };
  std::vector<CloneRecord> clone_records;

  std::unordered_map<std::uint64_t, Boot> boots;
  std::uint64_t next_generation = 1;
  OperationId next_operation = 1;

  std::map<SubscriptionId, std::function<void(const VmEvent&)>> subscribers;
  SubscriptionId next_subscription = 1;
  std::function<void(const Vm&)> beacon_hook;
  std::uint64_t resource_version = 1;

  Faults faults;
  std::mt19937_64 rng;

  std::unique_ptr<boost::asio::steady_timer> timer;
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
  bool processing = false;
  FlowStats stats;
  StorageMeter meter;

  // ---- resources ----
  int cpu_res(std::size_t host) const { return static_cast<int>(host * 3); }
  int link_res(std::size_t host) const { return static_cast<int>(host * 3 + 1); }
  int bus_res(std::size_t host) const { return static_cast<int>(host * 3 + 2); }
  int ds_bw_res(std::size_t ds) const { return static_cast<int>(hosts.size() * 3 + ds * 2); }
  int ds_iops_res(std::size_t ds) const { return static_cast<int>(hosts.size() * 3 + ds * 2 + 1); }
  std::size_t host_index(std::string_view id) const;
  std::size_t datastore_index(std::string_view id) const;

  // ---- inventory (inventory.cpp) ----
  void build_inventory();
  const GuestProfile* find_profile(std::string_view name) const;
  std::string default_pool_for(const std::string& host_id) const;
  Vm& insert_vm(Vm vm);
  Vm* vm_ptr(std::string_view id);
  void notify(VmEvent::Type type, const Vm& vm, std::optional<Milestone> milestone);
  void changed(Vm& vm, std::optional<Milestone> milestone = std::nullopt);
  bool is_kube_vm(const Vm& vm) const { return vm.created_by_front == "kube" || !vm.namespace_.empty(); }
  std::string least_loaded_host(const std::string& cluster_id) const;
  const Node* least_loaded_node() const;

  // ---- events and the loop (event_clock.cpp) ----
  double real_now() const;
  std::uint64_t schedule_at(double time, std::function<void()> fn);
  void cancel_event(std::uint64_t id) { event_fns.erase(id); }
  double next_event_time();
  void process_until(double until);
  // Real mode: bring the model up to the wall clock before a mutation, and re-arm the timer after it.
  void catch_up();
  void after_mutation();
  void arm_timer();

  // ---- flows (flow_network.cpp) ----
  int class_for(std::vector<std::pair<int, double>> uses, double cap, std::vector<IoPath> paths = {},
                bool boot = false);
  // The limiter index of a flow held at its own cap (after the resources).
  int cap_io_limiter() const { return static_cast<int>(capacity.size()); }
  int cap_cpu_limiter() const { return static_cast<int>(capacity.size() + 1); }
  void account_limiters();  // after the rates: each boot class's limiter, the resources' peak boot use
  std::uint64_t add_flow(int cls, double work, std::function<void()> done);
  void remove_flow(std::uint64_t id);
  // Advances every class's service (and the storage counters) to t, sampling the storage grid on the way.
  void settle(double t);
  void advance_service(double t);
  void recompute();
  void drop_cancelled(FlowClass& c);
  void complete_due_flows();

  // ---- boots (boot_machine.cpp) ----
  Boot& boot_of(std::uint64_t number) { return boots[number]; }
  void cancel_boot(std::uint64_t number, const char* why);
  void forget_id(std::vector<std::uint64_t>& ids, std::uint64_t id);
  // Schedules fn for this VM's current boot generation; dropped if the boot was cancelled meanwhile.
  void boot_timer(std::uint64_t number, double delay, std::function<void()> fn);
  void set_milestone(Vm& vm, Milestone m);
  std::string guest_ip(std::uint64_t number) const;
  void reach_running(std::uint64_t number, bool boot_guest = true);
  void start_phase(std::uint64_t number, std::size_t index);
  void end_phase(std::uint64_t number, std::size_t index);
  void release_host(Vm& vm);
  // Whether host `h` has the free memory for `vm` (holds of power-ons in flight included); a refusal is
  // counted in the boot limits.
  bool memory_fits(std::size_t h, const Vm& vm);
  // Power-on of an existing VM (validated by the caller): start_received now, then (kube: scheduled, then)
  // running, then the boot phases.
  Expected<void> power_on(std::uint64_t number, DoneCallback on_running, const PowerOnOptions& options);
  void resume_instant_clone(std::uint64_t number);

  // ---- storage counters (storage_meter.cpp) ----
  void meter_start(double t);
  void meter_advance(double dt);  // the I/O classes' share of advance_service
  bool meter_grid_due(double t);  // a grid instant <= t must be sampled (skips idle stretches)
  double meter_grid_time() const;
  void meter_sample();  // at meter_grid_time(), after advance_service to it
  void meter_vm_flow(std::uint64_t flow, std::uint64_t vm_number, double work);
  void meter_flow_ended(std::uint64_t flow, bool completed);  // completed, or removed before
  void meter_vm_running(std::uint64_t number);
  void meter_vm_stopped(std::uint64_t number, bool deleted);
  // The truth's "storage" section (ground_truth.cpp).
  nlohmann::json storage_truth_json(const StorageTelemetry& telemetry) const;

  // ---- cloning (cloning.cpp) ----
  bool clone_fault(const std::string& host_id, std::string_view name);
};

}  // namespace bootstorm::sim::model
