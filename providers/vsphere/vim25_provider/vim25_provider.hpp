#pragma once
// bootstorm::vsphere::vim25::Vim25Provider — the vSphere provider on vCenter's SOAP API (vim25), the way VDI
// runs vSphere (api::Provider).
//
//  * Clones: `linked` clones a snapshot of the golden VM with diskMoveType createNewChildDiskBacking (the run
//    takes the snapshot `bs-<run>-base` at its first clone and removes it at cleanup, unless the plan names
//    golden.snapshot); `instant` is InstantClone_Task (vSphere 6.7+, a running golden VM; the clone is
//    powered off so that the storm starts it); `full` copies the disks. Every clone carries the run id three
//    times: in its name, in the custom attribute `bootstorm.run` and in its extraConfig (`bootstorm.run`,
//    written by the clone itself). stop() and destroy() touch a VM only when the attribute is the run id, or
//    is unset and the extraConfig is the run id: a VM tagged for another run, or not at all, is refused.
//  * Tasks are followed through the PropertyCollector (TaskWatcher), never polled.
//  * Start: `storm.powerOn: multi` sends the starts that arrive together as one
//    Datacenter.PowerOnMultiVM_Task; `each` sends one PowerOnVM_Task per VM. A start is acknowledged by its
//    PowerOnVM task's success or by the pushed power state, whichever comes first.
//  * Observe: one filter over a ListView of the run's VMs, read with WaitForUpdatesEx (PushedMilestones).
//  * Placement: the clone goes to the plan's host (RelocateSpec.host). With DRS vCenter may place or move it
//    elsewhere: the pushed runtime.host shows it, and every move is logged.
//
// Threading: single executor, as providers/api/provider.hpp requires; nothing locks.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/async/semaphore.hpp"
#include "common/async/token_bucket.hpp"
#include "providers/api/provider.hpp"
#include "providers/vsphere/clone_slots.hpp"
#include "providers/vsphere/settings.hpp"
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "providers/vsphere/vim25_provider/task_watcher.hpp"

namespace bootstorm::vsphere::vim25 {

// The custom attribute that proves a VM belongs to a run (the vSphere Client shows it).
inline constexpr std::string_view kRunField = "bootstorm.run";
// The same proof in the clone's extraConfig, written with the clone: it holds for a clone whose run died
// before the attribute was set.
inline constexpr std::string_view kRunKey = "bootstorm.run";

class Vim25Provider final : public api::Provider {
 public:
  Vim25Provider(boost::asio::any_io_executor executor, api::ProviderConfig config,
                std::unique_ptr<Transport> transport);
  ~Vim25Provider() override;

  // ---- session, facts, statistics (vim25_provider.cpp) ----
  api::Capabilities capabilities() const override;
  boost::asio::awaitable<Expected<void>> connect() override;
  boost::asio::awaitable<void> disconnect() override;
  http::ApiStats stats() const override;
  api::PlatformFacts facts() const override { return facts_; }
  // "auto" and "vsphere-perf": vCenter's real-time statistics (Vim25PerfSource, vim25_telemetry.hpp), read
  // through this provider's session. "prometheus" and "none" are errors saying why there is none.
  Expected<std::unique_ptr<api::TelemetrySource>> telemetry_source(
      const api::TelemetrySettings& settings) override;

  // ---- preflight (vim25_inventory.cpp, vim25_preflight.cpp) ----
  boost::asio::awaitable<Expected<void>> check_inventory(const api::InventoryRequest& request) override;
  boost::asio::awaitable<std::vector<api::CheckResult>> check(const api::CheckRequest& request) override;

  // ---- clones (vim25_provision.cpp) ----
  boost::asio::awaitable<Expected<api::VmHandle>> provision(const api::VmSpec& spec) override;
  boost::asio::awaitable<Expected<void>> wait_startable(const api::VmHandle& vm,
                                                        std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<Expected<void>> remove_run_artifacts(const std::string& run_id) override;
  // The kind of clone task that made it: vCenter fails a linked clone it cannot make (no snapshot) rather
  // than copy the disks.
  std::string clone_method(const api::VmHandle&) const override { return settings_.clone; }

  // ---- power and teardown (vim25_power.cpp) ----
  boost::asio::awaitable<Expected<void>> prepare_storm(std::size_t expected_starts) override;
  boost::asio::awaitable<Expected<api::StartResult>> start(const api::VmHandle& vm) override;
  boost::asio::awaitable<Expected<void>> stop(const api::VmHandle& vm) override;
  boost::asio::awaitable<Expected<void>> destroy(const api::VmHandle& vm) override;
  boost::asio::awaitable<Expected<std::vector<api::VmHandle>>> list_run_vms(
      const std::string& run_id) override;

  // ---- observation (vim25_observe.cpp) ----
  boost::asio::awaitable<void> observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                                       CancelSignal stop) override;

 private:
  // The telemetry source reads through read(), read_all() and the session.
  friend class Vim25PerfSource;

  struct Host {
    std::string id, name, pool;
  };
  // A start waiting for its acknowledgement (the power-on task's end or the pushed power state).
  struct Ack {
    explicit Ack(const boost::asio::any_io_executor& executor) : timer(executor) {
      timer.expires_at(boost::asio::steady_timer::time_point::max());
    }
    boost::asio::steady_timer timer;
    std::optional<std::chrono::steady_clock::time_point> at;
    std::chrono::system_clock::time_point at_wall{};
    std::optional<Error> error;
    std::chrono::steady_clock::time_point written{};
    std::chrono::system_clock::time_point written_wall{};
  };

  // ---- helpers (vim25_provider.cpp) ----
  // `paths` of `objects` (of one type), read with RetrievePropertiesEx page by page.
  boost::asio::awaitable<Expected<std::vector<ObjectContent>>> read(const std::vector<MoRef>& objects,
                                                                    const std::string& type,
                                                                    std::vector<std::string> paths);
  // `paths` of every object of `type` in the inventory (a container view, read and destroyed).
  boost::asio::awaitable<Expected<std::vector<ObjectContent>>> read_all(const std::string& type,
                                                                        std::vector<std::string> paths);
  // Starts a task method and follows it to its end: the outcome (state error carries the fault).
  boost::asio::awaitable<Expected<TaskOutcome>> run_task(std::string method, std::string element,
                                                         std::string what, CallOptions options = {});
  Error refuse_foreign(const std::string& verb, const std::string& name, const std::string& why) const;
  void log_dry_run(const std::string& method, const std::string& detail) const;
  // The VM's id and whether its custom attribute proves it belongs to this run; "" id: no such VM.
  struct Ownership {
    std::string id;
    bool proven = false;
    std::string found;  // the attribute's value ("" when unset), for the refusal
    std::string power_state;
  };
  boost::asio::awaitable<Expected<Ownership>> ownership(const api::VmHandle& vm);
  std::string unproven(const Ownership& own) const;  // why a VM is refused
  Ack& ack_of(const std::string& vm_id);
  void acknowledge(const std::string& vm_id, std::chrono::steady_clock::time_point at,
                   std::chrono::system_clock::time_point at_wall);
  void refuse_start(const std::string& vm_id, Error e);
  // The power-on call that carried this VM's start failed (`e`): refused, unless its pushed power state came
  // already, in which case the start stands, written at the latest when the call was handed over.
  void start_call_failed(const std::string& vm_id, Error e, std::chrono::steady_clock::time_point handed_over,
                         std::chrono::system_clock::time_point handed_over_wall);

  // ---- inventory (vim25_inventory.cpp) ----
  // The datacenter, the placement hosts (connected, not in maintenance), the golden VM and what its clone
  // kind needs, the datastore: resolved for provisioning, or the first problem.
  boost::asio::awaitable<Expected<void>> resolve_inventory(const api::InventoryRequest& request);

  // ---- checks (vim25_preflight.cpp) ----
  // The placement hosts' memory against their VMs' configured memory (ESXi overcommits: a warning).
  boost::asio::awaitable<api::CheckResult> check_host_memory(const api::CheckRequest& request);
  // The golden VM's VMware Tools (the guest_agent and ip_assigned signals need them) and the datastore's
  // free space for the run's clones.
  boost::asio::awaitable<std::vector<api::CheckResult>> check_golden_and_datastore(
      const api::CheckRequest& request);

  // ---- privileges (vim25_privileges.cpp) ----
  struct NeededPrivilege {
    MoRef entity;
    std::string what;  // the object, as the error names it
    std::string privilege;
  };
  // What the run will do, as privileges on the objects check_inventory() resolved.
  std::vector<NeededPrivilege> needed_privileges() const;
  // What vCenter answered: every privilege held (`asked`), or why it could not be asked (`why_not`: it then
  // shows at the first call that needs a missing one).
  struct PrivilegeAnswer {
    bool asked = false;
    std::size_t privileges = 0;
    std::string why_not;
  };
  // Asks vCenter which of them the user holds; an error (ErrorKind::auth) naming every one missing.
  boost::asio::awaitable<Expected<PrivilegeAnswer>> check_privileges();

  // ---- platform facts (vim25_facts.cpp) ----
  // vCenter's product, version and build from the ServiceContent, and whether it says it is a simulator.
  boost::asio::awaitable<void> learn_platform();
  // ESXi version and CPU model of the placement hosts (after check_inventory resolved them). Best effort:
  // facts are not worth failing a run for.
  boost::asio::awaitable<void> learn_hosts();

  // ---- provisioning (vim25_provision.cpp) ----
  // The run's custom attribute and, for linked clones, its snapshot: made once, at the first clone.
  boost::asio::awaitable<Expected<void>> prepare_clones();
  // The key of the custom attribute kRunField; -1 when vCenter has none.
  boost::asio::awaitable<Expected<int>> find_field_key();
  boost::asio::awaitable<Expected<void>> tag(const MoRef& vm, const std::string& name);
  boost::asio::awaitable<Expected<void>> power_off(const MoRef& vm, const std::string& name);

  // ---- power (vim25_power.cpp) ----
  boost::asio::awaitable<void> flush_multi();

  boost::asio::any_io_executor executor_;
  api::ProviderConfig config_;
  vsphere::Settings settings_;  // the kind's own part of the plan (config_.settings, typed)
  std::unique_ptr<Transport> transport_;
  async::RateLimiter limiter_;
  Session session_;
  std::unique_ptr<TaskWatcher> watcher_;

  // Inventory resolved by check_inventory().
  bool inventory_checked_ = false;  // for checked_request_ (check() or check_inventory() passed)
  api::InventoryRequest checked_request_;
  MoRef datacenter_, vm_folder_, golden_, datastore_, snapshot_;
  std::string golden_host_id_;
  std::map<std::string, Host> hosts_;              // by name
  std::map<std::string, std::string> host_names_;  // id -> name

  api::PlatformFacts facts_;

  // Made at the first clone.
  async::AsyncSemaphore prepare_mutex_;
  bool prepared_ = false;
  int field_key_ = -1;

  async::AsyncSemaphore clone_slots_;
  HostCloneSlots host_clone_slots_;

  // Observation in place before the starts: observe(), spawned before the barrier, counts itself here until
  // its filter exists and its initial state was read to the end; prepare_storm waits for that
  // (observation_armed_ is cancelled each time one is in place), so that vCenter holds a wait when the first
  // change happens. starts_requested_: the starts asked of this provider since prepare_storm (a storm's first
  // call) began; an initial state read while it is 0 predates every start of the storm.
  std::size_t observations_arming_ = 0;
  boost::asio::steady_timer observation_armed_;
  std::size_t starts_requested_ = 0;

  // Starts.
  std::size_t expected_starts_ = 0;
  std::vector<std::string> multi_batch_;  // VM ids waiting for the next PowerOnMultiVM_Task
  bool multi_flush_scheduled_ = false;
  std::map<std::string, std::unique_ptr<Ack>> acks_;
  std::map<std::string, std::chrono::steady_clock::time_point> start_written_;

  // Expires with the provider: a telemetry source asked after that fails instead of using it.
  std::shared_ptr<const int> alive_ = std::make_shared<const int>(0);
};

}  // namespace bootstorm::vsphere::vim25
