// The vCenter front's request handling: the /rest dialect and front faults, the /api routes dispatched to
// the sessions, inventory, clone/power and guest handlers, request statistics and the /_lab endpoints.
#include "simulator/vcenter/vcenter_front.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cmath>
#include <set>
#include <string_view>
#include <vector>

#include "common/lab_identity.hpp"
#include "common/rfc3339.hpp"
#include "simulator/vcenter/detail/vapi_responses.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"
#include "simulator/vcenter/legacy_rest.hpp"

namespace bootstorm::sim::vcenter {

namespace asio = boost::asio;
using http::ServerRequest;
using http::ServerResponse;

namespace {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start < path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string route_of(const ServerRequest& req, const std::vector<std::string_view>& parts) {
  // Templated route for statistics: ids replaced by {id}.
  std::string route = req.method + " ";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    route += "/";
    const bool is_id = i == 3 && parts.size() > 3 && parts[1] == "vcenter";
    route += is_id ? "{id}" : std::string(parts[i]);
  }
  if (auto action = req.query_param("action")) route += "?action=" + *action;
  return route;
}

}  // namespace

void VcenterFront::Impl::count_request(const std::string& route) {
  ++stats.requests_total;
  ++by_route[route];
  const auto second = static_cast<std::int64_t>(std::floor(lab.now()));
  if (second != current_second) {
    stats.requests_last_second = second == current_second + 1 ? current_second_count : 0;
    current_second = second;
    current_second_count = 0;
  }
  ++current_second_count;
  stats.peak_requests_per_second = std::max(stats.peak_requests_per_second, current_second_count);
}

json VcenterFront::Impl::stats_as_json() {
  // Roll the window forward so that an idle period reads as 0 requests in the last second.
  const auto second = static_cast<std::int64_t>(std::floor(lab.now()));
  std::uint64_t last = stats.requests_last_second;
  if (second == current_second + 1) last = current_second_count;
  if (second > current_second + 1) last = 0;
  // Requests that may change the platform: every method but GET and HEAD, session login/logout included
  // (the dry-run interlock counts them). A vim25 call is always a POST: its reads (RetrieveServiceContent,
  // RetrievePropertiesEx, WaitForUpdatesEx, ...) are counted as reads.
  auto reads = [](const std::string& route) {
    if (route.starts_with("GET ") || route.starts_with("HEAD ")) return true;
    constexpr std::string_view kSoap = "POST /sdk ";
    if (!route.starts_with(kSoap)) return false;
    const std::string_view soap_method = std::string_view(route).substr(kSoap.size());
    // Views, collectors and filters live in the session and change nothing a run could leave behind.
    static const std::set<std::string_view> session_scoped = {
        "CreateContainerView",      "CreateListView", "DestroyView",           "CreatePropertyCollector",
        "DestroyPropertyCollector", "CreateFilter",   "DestroyPropertyFilter", "CancelWaitForUpdates",
        "CheckForUpdates",          "CurrentTime"};
    return soap_method.starts_with("Retrieve") || soap_method.starts_with("ContinueRetrieve") ||
           soap_method.starts_with("WaitForUpdates") || soap_method.starts_with("HasPrivilegeOnEntit") ||
           session_scoped.count(soap_method) != 0;
  };
  std::uint64_t mutating = 0;
  for (const auto& [route, count] : by_route)
    if (!reads(route)) mutating += count;
  return json{{"requestsTotal", stats.requests_total},
              {"mutatingRequests", mutating},
              {"requestsLastSecond", last},
              {"requestsThisSecond", second == current_second ? current_second_count : 0},
              {"peakRequestsPerSecond", stats.peak_requests_per_second},
              {"sessionsCreated", stats.sessions_created},
              {"sessionsActive", sessions.size()},
              {"operationsRunning", admission.running()},
              {"operationsQueued", admission.queued()},
              {"peakOperationsQueued", stats.peak_operations_queued},
              {"faultsInjected", stats.faults_injected},
              {"permissionDenials", stats.permission_denials},
              {"vms", lab.vm_count()},
              {"byRoute", by_route}};
}

asio::awaitable<ServerResponse> VcenterFront::Impl::handle(ServerRequest& req) {
  if (std::string_view(req.path).substr(0, 6) == "/_lab/") co_return handle_lab(req);
  if (req.path == "/sdk" || req.path.rfind("/sdk/", 0) == 0) co_return co_await serve_sdk(req);
  count_request(route_of(req, split_path(req.path)));

  // The legacy /rest dialect is translated onto the /api handlers. A lab with `legacyRest: true` is a
  // vCenter before 7.0U2: it has no /api at all (clients detect that on POST /api/session).
  // Every REST answer says the lab is a lab (that API has no version call to say it in).
  auto announced = [this](ServerResponse r) {
    r.headers.emplace_back(std::string(kSimulatorHeader), lab_simulator_name(lab.spec().name));
    return r;
  };
  const bool legacy = req.path == "/rest" || req.path.rfind("/rest/", 0) == 0;
  if (legacy) {
    legacy_rest::Translation translation;
    if (auto refused = legacy_rest::translate_request(req, translation))
      co_return announced(std::move(*refused));
    co_return announced(legacy_rest::to_legacy_response(co_await serve_api(req), translation));
  }
  if (config().legacy_rest) {
    ServerResponse r;
    r.status = 404;
    r.headers = {{"Content-Type", "text/plain"}};
    r.body = "404 Not Found";
    co_return announced(std::move(r));
  }
  co_return announced(co_await serve_api(req));
}

asio::awaitable<bool> VcenterFront::Impl::inject_front_faults(std::string_view path) {
  model::Faults& faults = lab.faults();
  if (!lab.front_fault_applies(path)) co_return false;
  double delay_ms = faults.latency_ms;
  if (faults.latency_jitter_ms > 0) delay_ms += faults.latency_jitter_ms * lab.random_uniform();
  if (delay_ms > 0) {
    asio::steady_timer timer(executor);
    timer.expires_after(std::chrono::microseconds(static_cast<std::int64_t>(delay_ms * 1000)));
    co_await timer.async_wait(asio::use_awaitable);
  }
  if (faults.error_rate > 0 && lab.random_uniform() < faults.error_rate) {
    ++stats.faults_injected;
    co_return true;
  }
  co_return false;
}

asio::awaitable<ServerResponse> VcenterFront::Impl::serve_api(ServerRequest& req) {
  const std::string_view path = req.path;
  const auto parts = split_path(path);

  // Front faults: added latency, then injected errors, then session expiry.
  model::Faults& faults = lab.faults();
  if (co_await inject_front_faults(path)) {
    co_return api_error(faults.error_status, error_type_for_status(faults.error_status),
                        "com.vmware.bootstorm.lab.injected_fault", "Injected fault (simulated lab).");
  }
  apply_session_expiry_fault();

  if (parts.size() == 2 && parts[0] == "api" && parts[1] == "session") {
    if (req.method == "POST") co_return create_session(req);
    const Session* session = session_of(req);
    if (!session) co_return unauthenticated();
    if (req.method == "GET") {
      co_return json_response(
          200, json{{"user", session->user},
                    {"created_time", format_rfc3339(from_unix_seconds(session->created))},
                    {"last_accessed_time", format_rfc3339(from_unix_seconds(session->last_used))}});
    }
    if (req.method == "DELETE") {
      sessions.erase(std::string(*req.header("vmware-api-session-id")));
      co_return no_content();
    }
    co_return method_not_allowed();
  }
  if (parts.empty() || parts[0] != "api") {
    co_return api_error(404, "NOT_FOUND", "com.vmware.vapi.rest.httpNotFound", "Not found.");
  }
  const Session* session = session_of(req);
  if (!session) co_return unauthenticated();
  const std::string user = session->user;
  if (parts.size() < 3 || parts[1] != "vcenter") {
    co_return api_error(404, "NOT_FOUND", "com.vmware.vapi.rest.httpNotFound", "Not found.");
  }
  const std::string_view collection = parts[2];
  const std::string action = req.query_param("action").value_or("");
  if (collection == "vm") {
    if (parts.size() == 3) {
      if (req.method == "GET") co_return list_vms(req);
      if (req.method == "POST" && action == "clone") co_return co_await clone(req, false);
      if (req.method == "POST" && action == "instant-clone") co_return co_await clone(req, true);
      if (req.method == "POST" && action.empty()) {
        co_return api_error(400, "UNSUPPORTED", "com.vmware.bootstorm.lab.unsupported",
                            "Creating VMs from scratch is not simulated; clone a golden VM instead.");
      }
      co_return method_not_allowed();
    }
    const std::string vm_id(parts[3]);
    const model::Vm* vm = lab.find_vm(vm_id);
    if (!vm || !visible(*vm)) co_return not_found("virtual machine", vm_id);
    if (parts.size() == 4) {
      if (req.method == "GET") co_return json_response(200, vm_info(*vm));
      if (req.method == "DELETE") {
        if (auto denied = rest_denied(user, "VirtualMachine.Inventory.Delete", vm_id)) co_return *denied;
        if (vm->power != model::PowerState::powered_off) {
          co_return api_error(400, "NOT_ALLOWED_IN_CURRENT_STATE", "com.vmware.api.vcenter.vm.powered_on",
                              fmt::format("Virtual machine '{}' is powered on.", vm_id), {vm_id});
        }
        (void)lab.delete_vm(vm_id);
        customizations.erase(vm_id);
        co_return no_content();
      }
      co_return method_not_allowed();
    }
    const std::string_view sub = parts[4];
    if (sub == "power" && parts.size() == 5) {
      if (req.method == "GET") {
        json body{{"state", model::to_string(vm->power)}};
        if (vm->power == model::PowerState::powered_off) body["clean_power_off"] = true;
        co_return json_response(200, body);
      }
      if (req.method == "POST") {
        const char* privilege = action == "start"   ? "VirtualMachine.Interact.PowerOn"
                                : action == "stop"  ? "VirtualMachine.Interact.PowerOff"
                                : action == "reset" ? "VirtualMachine.Interact.Reset"
                                                    : "VirtualMachine.Interact.Suspend";
        if (auto denied = rest_denied(user, privilege, vm_id)) co_return *denied;
        co_return co_await power(vm_id, action);
      }
      co_return method_not_allowed();
    }
    if (sub == "tools" && parts.size() == 5 && req.method == "GET")
      co_return json_response(200, tools_info(*vm));
    if (sub == "guest" && parts.size() == 6 && parts[5] == "customization") {
      if (req.method == "GET") co_return json_response(200, customization_info(*vm));
      if (req.method == "PUT") {
        if (auto denied = rest_denied(user, "VirtualMachine.Provisioning.Customize", vm_id))
          co_return *denied;
        co_return set_customization(req, *vm);
      }
      co_return method_not_allowed();
    }
    if (sub == "guest" && parts.size() == 6 && parts[5] == "identity" && req.method == "GET") {
      co_return guest_identity(*vm);
    }
    if (sub == "guest" && parts.size() == 7 && parts[5] == "networking" && parts[6] == "interfaces" &&
        req.method == "GET") {
      co_return guest_interfaces(*vm);
    }
    co_return api_error(404, "NOT_FOUND", "com.vmware.vapi.rest.httpNotFound", "Not found.");
  }
  if (parts.size() == 3 && req.method == "GET") {
    if (collection == "host") co_return list_hosts(req);
    if (collection == "datastore") co_return list_datastores(req);
    if (collection == "cluster") co_return list_clusters(req);
    if (collection == "folder") co_return list_folders(req);
    if (collection == "resource-pool") co_return list_resource_pools(req);
    if (collection == "datacenter") co_return list_datacenters(req);
  }
  co_return api_error(404, "NOT_FOUND", "com.vmware.vapi.rest.httpNotFound", "Not found.");
}

ServerResponse VcenterFront::Impl::method_not_allowed() {
  return api_error(405, "ERROR", "com.vmware.vapi.rest.httpMethodNotAllowed", "Method not allowed.");
}

ServerResponse VcenterFront::Impl::handle_lab(const ServerRequest& req) {
  const auto parts = split_path(req.path);
  auto lab_error = [](int status, const std::string& message) {
    return json_response(status, json{{"error", message}});
  };
  if (parts.size() == 2 && parts[1] == "truth" && req.method == "GET") {
    ServerResponse r;
    r.headers = {{"Content-Type", "application/json"}};
    r.body = lab.truth_json();
    return r;
  }
  if (parts.size() == 2 && parts[1] == "stats" && req.method == "GET")
    return json_response(200, stats_as_json());
  if (parts.size() == 2 && parts[1] == "faults") {
    if (req.method == "POST") {
      auto patched = model::patch_faults_json(lab.faults(), req.body);
      if (!patched) return lab_error(400, patched.error().what());
    } else if (req.method != "GET") {
      return lab_error(405, "Use GET or POST.");
    }
    ServerResponse r;
    r.headers = {{"Content-Type", "application/json"}};
    r.body = model::faults_to_json(lab.faults());
    return r;
  }
  if (parts.size() == 4 && parts[1] == "vms" && parts[3] == "guestinfo") {
    const std::string key(parts[2]);
    const model::Vm* vm = lab.find_vm(key);
    if (!vm) vm = lab.find_vm_by_name(key);
    if (!vm) return lab_error(404, fmt::format("No VM '{}'.", key));
    if (req.method == "PUT" || req.method == "POST") {
      const json body = json::parse(req.body, nullptr, false);
      if (body.is_discarded() || !body.is_object()) return lab_error(400, "The body must be a JSON object.");
      for (const auto& [k, v] : body.items()) {
        if (!v.is_string()) return lab_error(400, fmt::format("guestinfo '{}' must be a string.", k));
      }
      lab.modify_vm(vm->id, [&](model::Vm& target) {
        for (const auto& [k, v] : body.items()) target.guestinfo[k] = v.get<std::string>();
      });
      vm = lab.find_vm(vm->id);
    } else if (req.method != "GET") {
      return lab_error(405, "Use GET or PUT.");
    }
    return json_response(200, json(vm->guestinfo));
  }
  return lab_error(404, "Unknown lab endpoint.");
}

VcenterFront::VcenterFront(model::Lab& lab, boost::asio::any_io_executor executor)
    : impl_(std::make_shared<Impl>(lab, std::move(executor))) {
  // Model changes reach the vim25 PropertyCollector's filters.
  std::weak_ptr<Impl> weak = impl_;
  impl_->sdk_subscription = lab.subscribe([weak](const model::VmEvent& event) {
    if (auto impl = weak.lock()) impl->sdk_on_vm_event(event);
  });
}

VcenterFront::~VcenterFront() {
  impl_->lab.unsubscribe(impl_->sdk_subscription);
}

http::Handler VcenterFront::handler() {
  std::weak_ptr<Impl> weak = impl_;
  return [weak](ServerRequest& req) -> asio::awaitable<ServerResponse> {
    auto impl = weak.lock();
    if (!impl) {
      ServerResponse gone;
      gone.status = 503;
      gone.body = "lab stopped";
      co_return gone;
    }
    co_return co_await impl->handle(req);
  };
}

VcenterFrontStats VcenterFront::stats() const {
  VcenterFrontStats s = impl_->stats;
  s.sessions_active = impl_->sessions.size();
  s.operations_running = static_cast<std::size_t>(impl_->admission.running());
  s.operations_queued = impl_->admission.queued();
  return s;
}

std::string VcenterFront::stats_json() const {
  return impl_->stats_as_json().dump();
}

}  // namespace bootstorm::sim::vcenter
