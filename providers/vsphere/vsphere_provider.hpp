#pragma once
// bootstorm::vsphere — the vCenter REST provider (api::Provider).
//
// Talks /api (vSphere 7.0U2+) and, when /api/session answers 404, the legacy /rest dialect (dialect.hpp).
// One session for all requests (session.hpp), clone concurrency bounded per host and per datastore by vCenter
// cost units and overall by apiBudget.maxConcurrent, storm starts never throttled (but charged to the
// budget), observe() polling within apiBudget.requestsPerSecond (common/async/token_bucket.hpp; paced at 95 %
// of it) with per-milestone resolution bookkeeping (milestone_tracker.hpp). Deletes only what carries the run
// id.
//
// observe(): one filtered list call (GET /api/vcenter/vm?vms=...&power_states=POWERED_ON, chunked at 4,000
// ids / 6,000 URL characters) per round for `running`; then, round-robin, one probe per VM that is on but
// lacks a milestone: GET .../tools (run_state RUNNING or EXECUTING_SCRIPTS = guest_agent), then
// GET .../guest/identity (an ip_address = ip_assigned; 503 = not yet). Every event is stamped with the
// positive answer's arrival; its resolution reaches back to the last negative request (or to the VM's power
// start written by this provider, or to when observe() began).
//
// Threading: single executor, as providers/api/provider.hpp requires; nothing locks.
//
// Clone types. The vCenter REST API has exactly two clone operations: POST /api/vcenter/vm?action=clone
// (VM.CloneSpec: source, name, placement, power_on, disks_to_remove, disks_to_update,
// guest_customization_spec) and ?action=instant-clone. VM.CloneSpec has no linked-clone option (linked clones
// need the SOAP API's VirtualMachineRelocateSpec.diskMoveType = createNewChildDiskBacking). So:
//   full    -> ?action=clone, placement {host, datastore}, power_on false
//   linked  -> the same full clone (a warning says so once); the body carries nothing non-standard
//   instant -> ?action=instant-clone, placement {datastore} (InstantClonePlacementSpec has no host: the
//              clone runs on the golden VM's host, so every placement host must be that host), then a power
//              stop, because instant clones are born running and the storm must power them on.
#include <boost/asio/any_io_executor.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/async/semaphore.hpp"
#include "providers/api/provider.hpp"
#include "providers/vsphere/clone_slots.hpp"
#include "providers/vsphere/session.hpp"
#include "providers/vsphere/settings.hpp"
#include "providers/vsphere/transport.hpp"

namespace bootstorm::vsphere {

// Operations vCenter runs at once before it queues the rest (global limit, vSphere 6 to 8).
inline constexpr std::size_t kVcenterConcurrentOperations = 640;

// Beacon handover. vCenter's REST API has no call that sets guestinfo/extraConfig, but it does set a guest
// customization on a powered-off VM (PUT /api/vcenter/vm/{vm}/guest/customization, VM.guest.Customization.
// SetSpec), which the guest applies at its next power-on. For Linux guests the spec is a cloud-init
// configuration (guest.CloudConfiguration CLOUDINIT, vSphere 7.0U3+ with cloud-init's VMware datasource in
// the image): its user data writes /etc/bootstorm/beacon.env (BOOTSTORM_BEACON_URL, _TOKEN, BOOTSTORM_VM_NAME
// — the file deploy/guest/linux reads) and starts the agent; its metadata names the instance after the VM so
// cloud-init runs again in every clone. Windows guests get no customization (sysprep would add its own
// reboots to the measured boot): their golden image carries the agent (deploy/guest/README.md).
nlohmann::json beacon_customization_spec(const std::string& vm_name, const std::string& beacon_url,
                                         const std::string& token);
// The cloud-init user data inside that spec.
std::string beacon_cloud_init_user_data(const std::string& vm_name, const std::string& beacon_url,
                                        const std::string& token);

// Attempts of one clone call while vCenter answers 503 SERVICE_UNAVAILABLE (backoff 0.2, 0.4, 0.8, 1.6 s).
inline constexpr int kCloneAttempts = 5;

class VsphereProvider final : public api::Provider {
 public:
  VsphereProvider(boost::asio::any_io_executor executor, api::ProviderConfig config,
                  std::unique_ptr<Transport> transport);
  ~VsphereProvider() override;

  // ---- session, facts, statistics, preflight (vsphere_provider.cpp) ----
  api::Capabilities capabilities() const override;
  boost::asio::awaitable<Expected<void>> connect() override;
  boost::asio::awaitable<std::vector<api::CheckResult>> check(const api::CheckRequest& request) override;
  boost::asio::awaitable<Expected<std::vector<api::VmHandle>>> list_run_vms(
      const std::string& run_id) override;
  boost::asio::awaitable<void> disconnect() override;
  http::ApiStats stats() const override;
  api::PlatformFacts facts() const override;
  // vCenter's statistics (PerformanceManager) are a vim25 API: REST has none.
  Expected<std::unique_ptr<api::TelemetrySource>> telemetry_source(const api::TelemetrySettings&) override {
    return make_error(ErrorKind::not_found,
                      "vCenter's REST API has no storage statistics (PerformanceManager is vim25 only)",
                      "set platform.api: vim25 (or auto, on a vCenter with /sdk) for storage telemetry");
  }

  // ---- inventory (vsphere_inventory.cpp) ----
  boost::asio::awaitable<Expected<void>> check_inventory(const api::InventoryRequest& request) override;

  // ---- clones (vsphere_provision.cpp) ----
  boost::asio::awaitable<Expected<api::VmHandle>> provision(const api::VmSpec& spec) override;
  // REST clones in full unless instant (VM.CloneSpec has no linked option).
  std::string clone_method(const api::VmHandle&) const override { return instant() ? "instant" : "full"; }

  // ---- power and teardown (vsphere_power.cpp) ----
  boost::asio::awaitable<Expected<void>> wait_startable(const api::VmHandle& vm,
                                                        std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<Expected<void>> prepare_storm(std::size_t expected_starts) override;
  boost::asio::awaitable<Expected<api::StartResult>> start(const api::VmHandle& vm) override;
  boost::asio::awaitable<Expected<void>> stop(const api::VmHandle& vm) override;
  boost::asio::awaitable<Expected<void>> destroy(const api::VmHandle& vm) override;

  // ---- observation (vsphere_observe.cpp) ----
  boost::asio::awaitable<void> observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                                       CancelSignal stop) override;

  // ---- the REST dialect's own ----
  Dialect dialect() const { return session_.paths().dialect(); }
  std::uint64_t logins() const { return session_.logins(); }

  // Tuning (defaults suit production; tests shorten them). Set before the first call.
  struct Tuning {
    std::size_t clones_per_datastore = kClonesPerDatastore;
    std::size_t max_in_flight = 8;                  // concurrent per-VM probes
    std::chrono::milliseconds list_interval{1000};  // re-list power states at least this often
    std::chrono::milliseconds startable_poll{500};  // wait_startable's poll interval
    std::size_t max_ids_per_list = 4000;            // vCenter fails lists matching > 4,000 VMs
    std::size_t max_target_length = 6000;           // stay under common URL length limits
  };
  void set_tuning(const Tuning& tuning) { tuning_ = tuning; }

 private:
  struct Observation;
  // vCenter's product, and whether it is a lab (the header kSimulatorHeader of GET /api/session).
  boost::asio::awaitable<void> learn_platform();
  boost::asio::awaitable<Expected<nlohmann::json>> get_json(const std::string& target,
                                                            const std::string& what,
                                                            CallOptions options = {});
  boost::asio::awaitable<Expected<std::string>> resolve_vm_id(const api::VmHandle& vm);
  boost::asio::awaitable<Expected<void>> power_stop(const std::string& vm_id, const std::string& vm_name);
  boost::asio::awaitable<Expected<void>> hand_over_beacon(const api::VmHandle& vm);
  // The steps after a clone exists: power an instant clone off, hand the beacon over.
  boost::asio::awaitable<Expected<api::VmHandle>> finish_clone(api::VmHandle handle);
  boost::asio::awaitable<Expected<std::map<std::string, std::string>>> list_vm_ids(
      const std::vector<std::string>& names);
  boost::asio::awaitable<void> poll_running(Observation& obs);
  boost::asio::awaitable<void> probe_vm(Observation& obs, std::string vm_name);
  std::vector<std::vector<std::string>> chunk_for_list(const std::vector<std::string>& values,
                                                       const ListFilter& extra, const std::string& key) const;
  Error refuse_foreign(const std::string& verb, const std::string& name) const;
  void log_dry_run(const std::string& method, const std::string& target, const std::string& body) const;
  double estimated_clone_bytes(const nlohmann::json& golden_info) const;
  bool instant() const { return settings_.clone == "instant"; }

  boost::asio::any_io_executor executor_;
  api::ProviderConfig config_;
  Settings settings_;  // the kind's own part of the plan (config_.settings, typed)
  std::unique_ptr<Transport> transport_;
  Session session_;
  Tuning tuning_;

  api::PlatformFacts facts_;  // learned by connect()

  // Inventory resolved by check_inventory().
  std::map<std::string, std::string> host_ids_;  // host name -> id
  std::string datastore_id_;
  std::string datastore_name_;
  std::string golden_id_;
  bool inventory_checked_ = false;  // for checked_request_
  api::InventoryRequest checked_request_;
  bool warned_linked_ = false;
  std::string golden_guest_os_;  // VM.Info.guest_OS of the golden VM ("" when it could not be read)
  bool warned_beacon_windows_ = false;

  // When each VM's power start was written (observe's lower bound before its first negative poll).
  std::map<std::string, std::chrono::steady_clock::time_point> start_written_;

  async::AsyncSemaphore clone_slots_;
  HostCloneSlots host_clone_slots_;
  std::unique_ptr<async::AsyncSemaphore> datastore_clone_slots_;
};

}  // namespace bootstorm::vsphere
