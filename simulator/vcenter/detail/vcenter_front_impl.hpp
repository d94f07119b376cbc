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
#include "providers/http/server.hpp"
#include "providers/vsphere/vim25/types.hpp"
#include "providers/vsphere/vim25/xml.hpp"
#include "simulator/model/lab.hpp"
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

  // Admission control (vCenter's concurrency behaviour).
  struct Waiter {
    std::string host_id;
    int cost = 0;
    std::function<void(bool)> grant;
  };
  int running_operations = 0;
  std::unordered_map<std::string, int> host_cost_used;
  std::deque<Waiter> waiters;

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
  http::ServerResponse create_session(const http::ServerRequest& req);

  // ---- the vim25 endpoint /sdk (sdk_session.cpp): ServiceContent, Login / Logout, the version documents
  // ----
  boost::asio::awaitable<http::ServerResponse> serve_sdk(const http::ServerRequest& req);
  http::ServerResponse sdk_call(const http::ServerRequest& req);

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
  std::uint64_t sdk_token_counter = 0;
  // The vim25 type of a lab object id ("" when vCenter does not know it).
  std::string sdk_type_of(std::string_view id) const;
  std::vector<vsphere::vim25::MoRef> sdk_children(const vsphere::vim25::MoRef& obj) const;
  std::vector<vsphere::vim25::MoRef> sdk_contents(const vsphere::vim25::MoRef& container,
                                                  const std::vector<std::string>& types,
                                                  bool recursive) const;
  // The <val> element of property `path` of `obj`; "" for a property without a value; nullopt: unknown.
  std::optional<std::string> sdk_property(const vsphere::vim25::MoRef& obj, std::string_view path) const;
  http::ServerResponse sdk_create_view(const vsphere::vim25::XmlNode& call, const std::string& session_key);
  http::ServerResponse sdk_destroy_view(const vsphere::vim25::MoRef& self);
  http::ServerResponse sdk_retrieve(const vsphere::vim25::XmlNode& call);
  http::ServerResponse sdk_continue(const vsphere::vim25::XmlNode& call);
  http::ServerResponse sdk_result_page(const std::string& response, std::vector<std::string> objects,
                                       std::size_t page);

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
  bool fits(const std::string& host_id, int cost) const;
  void take(const std::string& host_id, int cost);
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
