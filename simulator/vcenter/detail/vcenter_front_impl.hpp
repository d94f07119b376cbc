#pragma once
// Internal to bootstorm::sim::vcenter: the vCenter front's state, shared by the request routing
// (vcenter_front.cpp), sessions (vcenter_sessions.cpp), admission control (operation_admission.cpp), the
// inventory lists (inventory_lists.cpp), clone and power (vm_operations.cpp) and the guest services
// (guest_services.cpp). Everything runs on the lab's executor.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/expected.hpp"
#include "protocol/http/server.hpp"
#include "protocol/vim25/types.hpp"
#include "protocol/vim25/xml.hpp"
#include "simulator/model/admission_queue.hpp"
#include "simulator/model/lab.hpp"
#include "simulator/vcenter/detail/sdk_objects.hpp"
#include "simulator/vcenter/vcenter_front.hpp"

namespace bootstorm::sim::vcenter {

using json = nlohmann::json;

struct Session {
  std::string user;
  double created = 0;
  double last_used = 0;
};

// "WINDOWS", "LINUX", ... : the guest OS family of a guest_OS identifier.
std::string guest_family(std::string_view guest_os);
// The MAC address of the VM's one NIC, derived from its id (stable).
std::string mac_for(std::string_view vm_id);

struct VcenterFront::Impl : std::enable_shared_from_this<VcenterFront::Impl> {
  model::Lab& lab;
  boost::asio::any_io_executor executor;
  std::unordered_map<std::string, Session> sessions;
  std::mt19937_64 token_rng{std::random_device{}()};

  // Admission control (vCenter's concurrency behaviour); its limits follow config() at every operation.
  model::AdmissionQueue admission{640, 16};

  // Guest customization set with PUT .../guest/customization: applied at the VM's next power-on.
  struct Customization {
    json spec;                       // Customization.SetSpec.spec (guest.CustomizationSpec)
    std::string status = "PENDING";  // PENDING -> RUNNING (power-on) -> SUCCEEDED (Tools up) | FAILED
    double start_time = 0;
    double end_time = 0;
    std::string error;
  };
  std::unordered_map<std::string, Customization> customizations;

  VcenterFrontStats stats;
  std::int64_t current_second = 0;
  std::uint64_t current_second_count = 0;
  std::map<std::string, std::uint64_t> by_route;

  Impl(model::Lab& l, boost::asio::any_io_executor ex) : lab(l), executor(std::move(ex)) {}

  const model::VcenterSpec& config() const { return lab.spec().vcenter; }

  // VMs that vCenter knows: not the ones created through the Kubernetes front.
  static bool visible(const model::Vm& vm) { return vm.namespace_.empty() && vm.created_by_front != "kube"; }

  // ---- routing, statistics and the lab endpoints (vcenter_front.cpp) ----
  boost::asio::awaitable<http::ServerResponse> handle(http::ServerRequest& req);
  boost::asio::awaitable<http::ServerResponse> serve_api(http::ServerRequest& req);
  // The front faults every API path takes (REST and /sdk): the configured latency, then true when an error
  // is to be injected (counted in the statistics).
  boost::asio::awaitable<bool> inject_front_faults(std::string_view path);
  http::ServerResponse method_not_allowed();
  void count_request(const std::string& route);
  json stats_as_json();
  http::ServerResponse handle_lab(const http::ServerRequest& req);

  // ---- sessions (vcenter_sessions.cpp) ----
  std::string new_token();
  // The session of the request, or null (expired/unknown/missing).
  const Session* session_of(const http::ServerRequest& req);
  http::ServerResponse unauthenticated();
  // The lab's session-expiry fault ends every session, SOAP and REST alike (they share the store); one-shot.
  void apply_session_expiry_fault();
  // The forgetCollectorVersions fault (sdk_updates.cpp).
  void apply_collector_version_fault();
  http::ServerResponse create_session(const http::ServerRequest& req);

  // ---- users, privileges and the AuthorizationManager (access_control.cpp) ----
  // Whether `user` may log in with `password`: the administrator, or a user of vcenter.users.
  bool authenticate(const std::string& user, const std::string& password) const;
  // The id of the inventory object a permission names ("/", a name or an id); "" when there is none.
  std::string entity_id_of(const std::string& name) const;
  // The objects whose permissions apply to `entity_id`: itself first, then those above it (a VM's folder,
  // pool, host and cluster, then the datacenter and the root folder).
  std::vector<std::string> permission_chain(const std::string& entity_id) const;
  // Whether `user` holds `privilege` on `entity_id` (the administrator holds every one).
  bool granted(const std::string& user, std::string_view privilege, const std::string& entity_id) const;
  static SdkFaultInfo no_permission_fault(const vsphere::vim25::MoRef& entity, std::string_view privilege);
  // The refusal when `user` lacks `privilege` on the object (SOAP NoPermission naming both; REST 403), or
  // nullopt when it holds it. Counted in the statistics.
  std::optional<http::ServerResponse> sdk_denied(const std::string& user, std::string_view privilege,
                                                 const vsphere::vim25::MoRef& entity);
  std::optional<http::ServerResponse> rest_denied(const std::string& user, std::string_view privilege,
                                                  const std::string& entity_id);
  // The privileges a VM method (a *_Task on `vm`) needs, and on which object each (vSphere's API reference).
  std::vector<std::pair<std::string, vsphere::vim25::MoRef>> sdk_privileges_needed(
      const std::string& method, const vsphere::vim25::XmlNode& call, const vsphere::vim25::MoRef& vm) const;
  // HasPrivilegeOnEntities (`many`) or HasPrivilegeOnEntity, for a session's user.
  http::ServerResponse sdk_has_privilege(const vsphere::vim25::XmlNode& call, bool many);

  // ---- the vim25 endpoint /sdk (sdk_session.cpp): ServiceContent, Login / Logout, the version documents,
  // and the dispatch of every other method ----
  boost::asio::awaitable<http::ServerResponse> serve_sdk(const http::ServerRequest& req);
  boost::asio::awaitable<http::ServerResponse> sdk_call(const http::ServerRequest& req);
  http::ServerResponse sdk_login(const vsphere::vim25::XmlNode& call, const http::ServerRequest& req,
                                 bool logged_in);
  boost::asio::awaitable<http::ServerResponse> sdk_session_call(const vsphere::vim25::XmlNode& call,
                                                                const std::string& method,
                                                                const vsphere::vim25::MoRef& self,
                                                                const std::string& session_key,
                                                                const std::string& user);
  boost::asio::awaitable<http::ServerResponse> sdk_collector_call(const vsphere::vim25::XmlNode& call,
                                                                  const std::string& method,
                                                                  const vsphere::vim25::MoRef& self,
                                                                  const std::string& session_key);
  http::ServerResponse sdk_vm_task_call(const vsphere::vim25::XmlNode& call, const std::string& method,
                                        const vsphere::vim25::MoRef& self, const std::string& user);
  // ServiceContent as an element of the given name (and xsi:type, for a property value).
  std::string sdk_service_content(std::string_view element, std::string_view xsi_type) const;
  // The session's end: its views, collectors and filters go with it.
  void sdk_end_session(const std::string& session_key);

  // ---- the /sdk PropertyCollector reads and views (sdk_properties.cpp) ----
  struct SdkView {
    bool list = false;
    std::vector<vsphere::vim25::MoRef> objects;  // ListView
    vsphere::vim25::MoRef container;             // ContainerView
    std::vector<std::string> types;
    bool recursive = false;
  };
  std::map<std::string, SdkView> sdk_views;
  std::uint64_t sdk_view_counter = 0;
  std::map<std::string, std::vector<std::string>> sdk_pages;  // RetrievePropertiesEx tokens: the rest
  std::map<std::string, std::size_t> sdk_page_sizes;
  std::deque<std::string> sdk_page_order;  // tokens, oldest first
  std::uint64_t sdk_token_counter = 0;
  // The vim25 type of a lab object id ("" when vCenter does not know it).
  std::string sdk_type_of(std::string_view id) const;
  // The objects a filter spec names (its objects, and the objects of the views it traverses, each once) into
  // `out`; or the fault for a spec this front cannot follow.
  std::optional<http::ServerResponse> sdk_spec_objects(const vsphere::vim25::PropertyFilterSpec& spec,
                                                       std::vector<vsphere::vim25::MoRef>& out) const;
  // The properties a PropertySpec asks for of an object of its type (`all`: those this front knows).
  static std::vector<std::string> sdk_paths_of(const vsphere::vim25::PropertySpec& prop_spec);
  std::vector<vsphere::vim25::MoRef> sdk_children(const vsphere::vim25::MoRef& obj) const;
  std::vector<vsphere::vim25::MoRef> sdk_contents(const vsphere::vim25::MoRef& container,
                                                  const std::vector<std::string>& types,
                                                  bool recursive) const;
  // The <val> element of property `path` of `obj`; "" for a property without a value; nullopt: unknown.
  // sdk_path_property's answer, else sdk_data_object's.
  std::optional<std::string> sdk_property(const vsphere::vim25::MoRef& obj, std::string_view path) const;
  // The paths the front serves as such (`runtime.powerState`).
  std::optional<std::string> sdk_path_property(const vsphere::vim25::MoRef& obj, std::string_view path) const;
  // A property that holds a data object the front composes from the paths beneath it (`runtime`, `guest`):
  // its <val>; nullopt for any other path, or an object that is gone.
  std::optional<std::string> sdk_data_object(const vsphere::vim25::MoRef& obj, std::string_view path) const;
  http::ServerResponse sdk_create_view(const vsphere::vim25::XmlNode& call, const std::string& session_key);
  http::ServerResponse sdk_destroy_view(const vsphere::vim25::MoRef& self);
  // RetrievePropertiesEx (paged: a token for the rest) or RetrieveProperties (all at once).
  http::ServerResponse sdk_retrieve(const vsphere::vim25::XmlNode& call, bool paged);
  http::ServerResponse sdk_continue(const vsphere::vim25::XmlNode& call);
  // Fetch: one property of one object, as pyVmomi 8.0.1 and later read every property accessor.
  http::ServerResponse sdk_fetch(const vsphere::vim25::XmlNode& call,
                                 const vsphere::vim25::MoRef& self) const;
  http::ServerResponse sdk_result_page(const std::string& response, std::vector<std::string> objects,
                                       std::size_t page);

  // ---- the PerformanceManager (sdk_performance.cpp): real-time statistics of the storage telemetry ----
  // When the front began: a host's real-time samples start at the first interval boundary after it.
  double sdk_perf_since = lab.now();
  // A PerformanceManager method (QueryPerf, QueryPerfCounter, ...); nullopt: not one this front serves.
  std::optional<http::ServerResponse> sdk_performance_call(std::string_view method,
                                                           const vsphere::vim25::XmlNode& call,
                                                           const vsphere::vim25::MoRef& self);
  // The PerformanceManager's properties, and those of datastores and hosts that name what its instances
  // measure (a datastore's url and VMFS uuid, a host's mounted datastores and HBA); nullopt: none of these.
  std::optional<std::string> sdk_perf_property(const vsphere::vim25::MoRef& obj, std::string_view path) const;

  // ---- the PropertyCollector's filters and WaitForUpdatesEx (sdk_updates.cpp) ----
  std::map<std::string, SdkCollector> sdk_collectors;  // by collector id
  std::uint64_t sdk_collector_counter = 0;
  std::uint64_t sdk_filter_counter = 0;
  model::SubscriptionId sdk_subscription = 0;
  // The collector a call addresses: the session's own for "propertyCollector", else one it created.
  SdkCollector* sdk_collector(const std::string& session_key, const std::string& collector_id);
  http::ServerResponse sdk_create_collector(const std::string& session_key);
  http::ServerResponse sdk_destroy_collector(SdkCollector& collector);
  http::ServerResponse sdk_create_filter(SdkCollector& collector, const vsphere::vim25::XmlNode& call);
  http::ServerResponse sdk_destroy_filter(const std::string& session_key, const vsphere::vim25::MoRef& self);
  // WaitForUpdatesEx, or (`legacy`) WaitForUpdates: no options, waits until there is a change.
  boost::asio::awaitable<http::ServerResponse> sdk_wait_for_updates(std::string collector_id, bool legacy,
                                                                    std::string version,
                                                                    std::optional<int> max_wait_seconds,
                                                                    std::optional<int> max_object_updates);
  http::ServerResponse sdk_cancel_wait(SdkCollector& collector);
  // An object changed (a VM, a task, ...): every collector learns it, and waiting calls wake.
  void sdk_changed(const std::string& object_id);
  // VMs were added or removed: views change their contents.
  void sdk_membership_changed();
  void sdk_on_vm_event(const model::VmEvent& event);

  // ---- tasks (sdk_tasks.cpp) ----
  std::map<std::string, SdkTask> sdk_tasks;  // by task id
  std::uint64_t sdk_task_counter = 0;
  std::deque<std::string> sdk_task_order;  // oldest first, for forgetting finished tasks past a cap
  // A task's work: started once the task is admitted; it calls `done` once (at once or later).
  using TaskBody = std::function<void(std::function<void(SdkTaskOutcome)> done)>;
  // The work of a task on one VM: `act` runs with the VM as the lab holds it once the task is admitted; a VM
  // gone by then fails the task with ManagedObjectNotFound, as vCenter's does. Nothing runs once the front
  // is gone.
  using VmTaskAct =
      std::function<void(Impl& impl, const model::Vm& vm, std::function<void(SdkTaskOutcome)> done)>;
  TaskBody sdk_vm_task_body(const vsphere::vim25::MoRef& vm, VmTaskAct act);
  // Queues a task, admits it against the operation limits (`cost` on `cost_host`; cost 0: not admitted)
  // and runs `body`. Returns the Task reference at once, as vCenter's *_Task methods do.
  vsphere::vim25::MoRef sdk_start_task(std::string description_id, const vsphere::vim25::MoRef& entity,
                                       std::string entity_name, std::string user, std::string cost_host,
                                       int cost, TaskBody body);
  boost::asio::awaitable<void> sdk_run_task(std::string task_id, std::string cost_host, int cost,
                                            TaskBody body);
  // The properties of a Task ("info", "info.state", ...); nullopt: unknown.
  std::optional<std::string> sdk_task_property(const SdkTask& task, std::string_view path) const;
  http::ServerResponse sdk_power_on(const vsphere::vim25::MoRef& vm, const std::string& user);
  http::ServerResponse sdk_power_on_multi(const vsphere::vim25::XmlNode& call, const std::string& user);
  http::ServerResponse sdk_power_off(const vsphere::vim25::MoRef& vm, const std::string& user);
  http::ServerResponse sdk_destroy(const vsphere::vim25::MoRef& self, const std::string& user);
  // A PowerOnVM task's body (shared by PowerOnVM_Task and PowerOnMultiVM_Task).
  TaskBody sdk_power_on_body(std::string vm_id);

  // ---- snapshots, clones and reconfiguration (sdk_provisioning.cpp) ----
  std::map<std::string, SdkSnapshot> sdk_snapshots;  // by snapshot id
  std::uint64_t sdk_snapshot_counter = 0;
  std::vector<const SdkSnapshot*> sdk_snapshots_of(const std::string& vm_id) const;
  std::string sdk_snapshot_tree(const std::vector<const SdkSnapshot*>& chain, std::size_t from) const;
  http::ServerResponse sdk_create_snapshot(const vsphere::vim25::XmlNode& call,
                                           const vsphere::vim25::MoRef& vm, const std::string& user);
  http::ServerResponse sdk_remove_snapshot(const vsphere::vim25::XmlNode& call,
                                           const vsphere::vim25::MoRef& snapshot, const std::string& user);
  http::ServerResponse sdk_clone(const vsphere::vim25::XmlNode& call, const vsphere::vim25::MoRef& vm,
                                 const std::string& user);
  http::ServerResponse sdk_instant_clone(const vsphere::vim25::XmlNode& call, const vsphere::vim25::MoRef& vm,
                                         const std::string& user);
  // A RelocateSpec (datastore, pool, host) into the clone request, or the fault for an unknown object.
  std::optional<http::ServerResponse> sdk_relocation(const vsphere::vim25::XmlNode& location,
                                                     model::CloneRequest& request) const;
  TaskBody sdk_clone_body(model::CloneRequest request);
  http::ServerResponse sdk_reconfigure(const vsphere::vim25::XmlNode& call, const vsphere::vim25::MoRef& vm,
                                       const std::string& user);
  // A VM left the inventory: its snapshots and custom values go with it.
  void sdk_forget_vm(const std::string& vm_id);

  // ---- custom attributes (sdk_custom_fields.cpp) ----
  std::vector<SdkCustomField> sdk_fields;
  int sdk_next_field_key = 101;
  std::map<std::string, std::map<int, std::string>> sdk_field_values;  // entity id -> key -> value
  http::ServerResponse sdk_add_field(const vsphere::vim25::XmlNode& call);
  http::ServerResponse sdk_remove_field(const vsphere::vim25::XmlNode& call);
  http::ServerResponse sdk_set_field(const vsphere::vim25::XmlNode& call);
  std::string sdk_field_defs(std::string_view managed_object_type) const;  // <val> ArrayOfCustomFieldDef
  std::string sdk_custom_values(const std::string& entity_id) const;       // <val> ArrayOfCustomFieldValue

  // ---- admission (operation_admission.cpp) ----
  // Holds an admitted operation's cost until destroyed.
  struct OperationSlot {
    std::shared_ptr<Impl> impl;
    std::string host_id;
    int cost;
    OperationSlot(std::shared_ptr<Impl> i, std::string h, int c)
        : impl(std::move(i)), host_id(std::move(h)), cost(c) {}
    OperationSlot(const OperationSlot&) = delete;
    OperationSlot& operator=(const OperationSlot&) = delete;
    ~OperationSlot();
  };
  void release(const std::string& host_id, int cost);
  boost::asio::awaitable<std::unique_ptr<OperationSlot>> admit(std::string host_id, int cost);

  // ---- inventory lists and VM info (inventory_lists.cpp) ----
  http::ServerResponse list_vms(const http::ServerRequest& req);
  json vm_info(const model::Vm& vm) const;
  http::ServerResponse list_hosts(const http::ServerRequest& req);
  http::ServerResponse list_datastores(const http::ServerRequest& req);
  http::ServerResponse list_clusters(const http::ServerRequest& req);
  std::string parent_folder_of(const model::Folder& f) const;
  http::ServerResponse list_folders(const http::ServerRequest& req);
  http::ServerResponse list_resource_pools(const http::ServerRequest& req);
  http::ServerResponse list_datacenters(const http::ServerRequest& req);

  // ---- clone and power (vm_operations.cpp) ----
  boost::asio::awaitable<http::ServerResponse> clone(const http::ServerRequest& req, bool instant);
  boost::asio::awaitable<http::ServerResponse> power(const std::string& vm_id, const std::string& action);
  http::ServerResponse busy(const std::string& vm_id, const Error& e);

  // ---- Tools, guest identity and guest customization (guest_services.cpp) ----
  json tools_info(const model::Vm& vm) const;
  http::ServerResponse tools_not_running(const model::Vm& vm);
  http::ServerResponse guest_identity(const model::Vm& vm);
  http::ServerResponse guest_interfaces(const model::Vm& vm);
  http::ServerResponse set_customization(const http::ServerRequest& req, const model::Vm& vm);
  void begin_customization(const std::string& vm_id);
  json customization_info(const model::Vm& vm);
};

}  // namespace bootstorm::sim::vcenter
