#include "simulator/vcenter/vcenter_front.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cmath>
#include <ctime>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <unordered_map>

#include "common/base64.hpp"
#include "simulator/vcenter/legacy_rest.hpp"

namespace bootstorm::sim::vcenter {

namespace asio = boost::asio;
using http::ServerRequest;
using http::ServerResponse;
using nlohmann::json;

namespace {

ServerResponse json_response(int status, const json& body) {
  ServerResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}};
  r.body = body.dump();
  return r;
}

ServerResponse no_content() {
  ServerResponse r;
  r.status = 204;
  return r;
}

// vAPI error body: {"error_type": ..., "messages": [{"id", "default_message", "args"}]}.
ServerResponse api_error(int status, std::string_view type, std::string_view id, const std::string& message,
                         std::vector<std::string> args = {}) {
  return json_response(
      status,
      json{{"error_type", type},
           {"messages",
            json::array({json{{"id", id}, {"default_message", message}, {"args", std::move(args)}}})}});
}

ServerResponse not_found(std::string_view what, const std::string& id) {
  return api_error(404, "NOT_FOUND", "com.vmware.api.vcenter.not_found",
                   fmt::format("The {} '{}' does not exist.", what, id), {id});
}

ServerResponse invalid_argument(const std::string& message) {
  return api_error(400, "INVALID_ARGUMENT", "com.vmware.api.vcenter.invalid_argument", message);
}

const char* error_type_for_status(int status) {
  switch (status) {
    case 400:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "UNAUTHORIZED";
    case 404:
      return "NOT_FOUND";
    case 503:
      return "SERVICE_UNAVAILABLE";
    case 504:
      return "TIMED_OUT";
    case 500:
      return "INTERNAL_SERVER_ERROR";
    default:
      return "ERROR";
  }
}

std::string iso8601(double unix_seconds) {
  const auto whole = static_cast<std::time_t>(std::floor(unix_seconds));
  const int millis = static_cast<int>(std::lround((unix_seconds - std::floor(unix_seconds)) * 1000)) % 1000;
  std::tm tm{};
  gmtime_r(&whole, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

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

std::string guest_family(std::string_view guest_os) {
  if (guest_os.find("WIN") == 0) return "WINDOWS";
  if (guest_os.find("DARWIN") == 0) return "DARWIN";
  if (guest_os.find("SOLARIS") == 0) return "SOLARIS";
  if (guest_os.find("NETWARE") == 0) return "NETWARE";
  if (guest_os == "OTHER" || guest_os == "OTHER_64" || guest_os == "DOS") return "OTHER";
  return "LINUX";
}

std::string mac_for(std::string_view vm_id) {
  std::uint32_t h = 2166136261u;
  for (char c : vm_id) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return fmt::format("00:50:56:{:02x}:{:02x}:{:02x}", (h >> 16) & 0x3F, (h >> 8) & 0xFF, h & 0xFF);
}

// Turns a model callback into something a coroutine can await: pass callback() to the model, then
// co_await wait_for(state). The coroutine sleeps on a timer that the callback cancels, so it is resumed
// through the executor and never runs inside the model's event loop; the callback may also fire
// synchronously. (Deliberately no lambdas handed across co_await: g++ 12 mis-destroys non-trivial lambda
// temporaries in co_await expressions.)
template <class T>
struct CallbackState : std::enable_shared_from_this<CallbackState<T>> {
  explicit CallbackState(const asio::any_io_executor& executor) : timer(executor) {
    timer.expires_at(asio::steady_timer::time_point::max());
  }
  std::function<void(T)> callback() {
    return [self = this->shared_from_this()](T result) {
      self->value.emplace(std::move(result));
      self->timer.cancel();
    };
  }
  asio::steady_timer timer;
  std::optional<T> value;
};

template <class T>
std::shared_ptr<CallbackState<T>> callback_state(const asio::any_io_executor& executor) {
  return std::make_shared<CallbackState<T>>(executor);
}

template <class T>
asio::awaitable<T> wait_for(std::shared_ptr<CallbackState<T>> state) {
  while (!state->value) {
    auto [ec] = co_await state->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
  }
  co_return std::move(*state->value);
}

struct Session {
  std::string user;
  double created = 0;
  double last_used = 0;
};

}  // namespace

struct VcenterFront::Impl : std::enable_shared_from_this<VcenterFront::Impl> {
  model::Lab& lab;
  asio::any_io_executor executor;
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

  Impl(model::Lab& l, asio::any_io_executor ex) : lab(l), executor(std::move(ex)) {}

  const model::VcenterSpec& config() const { return lab.spec().vcenter; }

  // ---- statistics ----
  void count_request(const std::string& route) {
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

  json stats_as_json() {
    // Roll the window forward so that an idle period reads as 0 requests in the last second.
    const auto second = static_cast<std::int64_t>(std::floor(lab.now()));
    std::uint64_t last = stats.requests_last_second;
    if (second == current_second + 1) last = current_second_count;
    if (second > current_second + 1) last = 0;
    // Requests that may change the platform: every method but GET and HEAD, session login/logout included
    // (the dry-run interlock counts them).
    std::uint64_t mutating = 0;
    for (const auto& [route, count] : by_route)
      if (!route.starts_with("GET ") && !route.starts_with("HEAD ")) mutating += count;
    return json{{"requestsTotal", stats.requests_total},
                {"mutatingRequests", mutating},
                {"requestsLastSecond", last},
                {"requestsThisSecond", second == current_second ? current_second_count : 0},
                {"peakRequestsPerSecond", stats.peak_requests_per_second},
                {"sessionsCreated", stats.sessions_created},
                {"sessionsActive", sessions.size()},
                {"operationsRunning", running_operations},
                {"operationsQueued", waiters.size()},
                {"peakOperationsQueued", stats.peak_operations_queued},
                {"faultsInjected", stats.faults_injected},
                {"vms", lab.vm_count()},
                {"byRoute", by_route}};
  }

  // ---- admission ----
  bool fits(const std::string& host_id, int cost) const {
    if (running_operations >= config().max_concurrent_operations) return false;
    if (host_id.empty()) return true;
    auto it = host_cost_used.find(host_id);
    const int used = it == host_cost_used.end() ? 0 : it->second;
    return used + cost <= config().host_cost_units;
  }
  void take(const std::string& host_id, int cost) {
    ++running_operations;
    if (!host_id.empty()) host_cost_used[host_id] += cost;
  }
  void release(const std::string& host_id, int cost) {
    --running_operations;
    if (!host_id.empty()) host_cost_used[host_id] -= cost;
    for (auto it = waiters.begin(); it != waiters.end();) {
      if (fits(it->host_id, it->cost)) {
        take(it->host_id, it->cost);
        auto grant = std::move(it->grant);
        it = waiters.erase(it);
        grant(true);
      } else {
        ++it;
      }
    }
  }

  // Holds an admitted operation's cost until destroyed.
  struct OperationSlot {
    std::shared_ptr<Impl> impl;
    std::string host_id;
    int cost;
    OperationSlot(std::shared_ptr<Impl> i, std::string h, int c)
        : impl(std::move(i)), host_id(std::move(h)), cost(c) {}
    OperationSlot(const OperationSlot&) = delete;
    OperationSlot& operator=(const OperationSlot&) = delete;
    ~OperationSlot() { impl->release(host_id, cost); }
  };

  asio::awaitable<std::unique_ptr<OperationSlot>> admit(std::string host_id, int cost) {
    cost = std::min(cost, config().host_cost_units);
    if (waiters.empty() && fits(host_id, cost)) {
      take(host_id, cost);
    } else {
      auto granted = callback_state<bool>(executor);
      waiters.push_back(Waiter{host_id, cost, granted->callback()});
      stats.peak_operations_queued = std::max(stats.peak_operations_queued, waiters.size());
      co_await wait_for(granted);
    }
    co_return std::make_unique<OperationSlot>(shared_from_this(), std::move(host_id), cost);
  }

  // ---- sessions ----
  std::string new_token() { return fmt::format("{:016x}{:016x}", token_rng(), token_rng()); }

  // The session of the request, or nullopt (expired/unknown/missing).
  const Session* session_of(const ServerRequest& req) {
    auto token = req.header("vmware-api-session-id");
    if (!token) return nullptr;
    auto it = sessions.find(std::string(*token));
    if (it == sessions.end()) return nullptr;
    const double now = lab.now();
    if (now - it->second.last_used > config().session_idle_timeout_s) {
      sessions.erase(it);
      return nullptr;
    }
    it->second.last_used = now;
    return &it->second;
  }

  ServerResponse unauthenticated() {
    return api_error(401, "UNAUTHENTICATED", "com.vmware.vapi.endpoint.method.authentication.required",
                     "Authentication required.");
  }

  ServerResponse create_session(const ServerRequest& req) {
    auto auth = req.header("Authorization");
    if (!auth || auth->size() < 6 || auth->substr(0, 6) != "Basic ") return unauthenticated();
    const std::string decoded = base64_decode(auth->substr(6)).value_or("");
    const auto colon = decoded.find(':');
    if (colon == std::string::npos) return unauthenticated();
    const std::string user = decoded.substr(0, colon);
    const std::string password = decoded.substr(colon + 1);
    if (user != config().username || password != config().password) return unauthenticated();
    // Drop idle sessions before counting against the cap.
    const double now = lab.now();
    int of_user = 0;
    for (auto it = sessions.begin(); it != sessions.end();) {
      if (now - it->second.last_used > config().session_idle_timeout_s) {
        it = sessions.erase(it);
        continue;
      }
      if (it->second.user == user) ++of_user;
      ++it;
    }
    if (of_user >= config().max_sessions_per_user) {
      return api_error(503, "SERVICE_UNAVAILABLE", "com.vmware.vapi.endpoint.session.limit",
                       fmt::format("The maximum number of sessions ({}) for user {} has been reached.",
                                   config().max_sessions_per_user, user));
    }
    const std::string token = new_token();
    sessions.emplace(token, Session{user, now, now});
    ++stats.sessions_created;
    return json_response(201, json(token));
  }

  // ---- the handler ----
  asio::awaitable<ServerResponse> handle(ServerRequest& req) {
    if (std::string_view(req.path).substr(0, 6) == "/_lab/") co_return handle_lab(req);
    count_request(route_of(req, split_path(req.path)));

    // The legacy /rest dialect is translated onto the /api handlers. A lab with `legacyRest: true` is a
    // vCenter before 7.0U2: it has no /api at all (clients detect that on POST /api/session).
    const bool legacy = req.path == "/rest" || req.path.rfind("/rest/", 0) == 0;
    if (legacy) {
      legacy_rest::Translation translation;
      if (auto refused = legacy_rest::translate_request(req, translation)) co_return std::move(*refused);
      co_return legacy_rest::to_legacy_response(co_await serve_api(req), translation);
    }
    if (config().legacy_rest) {
      ServerResponse r;
      r.status = 404;
      r.headers = {{"Content-Type", "text/plain"}};
      r.body = "404 Not Found";
      co_return r;
    }
    co_return co_await serve_api(req);
  }

  asio::awaitable<ServerResponse> serve_api(ServerRequest& req) {
    const std::string_view path = req.path;
    const auto parts = split_path(path);

    // Front faults: added latency, then injected errors, then session expiry.
    model::Faults& faults = lab.faults();
    if (lab.front_fault_applies(path)) {
      double delay_ms = faults.latency_ms;
      if (faults.latency_jitter_ms > 0) delay_ms += faults.latency_jitter_ms * lab.random_uniform();
      if (delay_ms > 0) {
        asio::steady_timer timer(executor);
        timer.expires_after(std::chrono::microseconds(static_cast<std::int64_t>(delay_ms * 1000)));
        co_await timer.async_wait(asio::use_awaitable);
      }
      if (faults.error_rate > 0 && lab.random_uniform() < faults.error_rate) {
        ++stats.faults_injected;
        co_return api_error(faults.error_status, error_type_for_status(faults.error_status),
                            "com.vmware.bootstorm.lab.injected_fault", "Injected fault (simulated lab).");
      }
    }
    if (faults.expire_sessions) {
      faults.expire_sessions = false;
      stats.faults_injected += sessions.size();
      sessions.clear();
    }

    if (parts.size() == 2 && parts[0] == "api" && parts[1] == "session") {
      if (req.method == "POST") co_return create_session(req);
      const Session* session = session_of(req);
      if (!session) co_return unauthenticated();
      if (req.method == "GET") {
        co_return json_response(200, json{{"user", session->user},
                                          {"created_time", iso8601(session->created)},
                                          {"last_accessed_time", iso8601(session->last_used)}});
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
    if (!session_of(req)) co_return unauthenticated();
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
        if (req.method == "POST") co_return co_await power(vm_id, action);
        co_return method_not_allowed();
      }
      if (sub == "tools" && parts.size() == 5 && req.method == "GET")
        co_return json_response(200, tools_info(*vm));
      if (sub == "guest" && parts.size() == 6 && parts[5] == "customization") {
        if (req.method == "GET") co_return json_response(200, customization_info(*vm));
        if (req.method == "PUT") co_return set_customization(req, *vm);
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

  static std::string route_of(const ServerRequest& req, const std::vector<std::string_view>& parts) {
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

  ServerResponse method_not_allowed() {
    return api_error(405, "ERROR", "com.vmware.vapi.rest.httpMethodNotAllowed", "Method not allowed.");
  }

  // VMs that vCenter knows: not the ones created through the Kubernetes front.
  static bool visible(const model::Vm& vm) { return vm.namespace_.empty() && vm.created_by_front != "kube"; }

  // ---- lists ----
  // Filter helper: empty filter = match all.
  static bool in(const std::vector<std::string>& filter, std::string_view value) {
    return filter.empty() || std::find(filter.begin(), filter.end(), value) != filter.end();
  }

  ServerResponse list_vms(const ServerRequest& req) {
    const auto vms = req.query_params("vms");
    const auto names = req.query_params("names");
    const auto folders = req.query_params("folders");
    const auto datacenters = req.query_params("datacenters");
    const auto hosts = req.query_params("hosts");
    const auto clusters = req.query_params("clusters");
    const auto pools = req.query_params("resource_pools");
    const auto power_states = req.query_params("power_states");
    for (const auto& state : power_states) {
      if (state != "POWERED_ON" && state != "POWERED_OFF" && state != "SUSPENDED") {
        return invalid_argument(fmt::format("Invalid value '{}' for power_states.", state));
      }
    }
    if (!in(datacenters, lab.datacenter().id)) return json_response(200, json::array());
    json out = json::array();
    std::size_t matched = 0;
    const auto limit = static_cast<std::size_t>(config().list_limit);
    auto consider = [&](const model::Vm& vm) {
      if (!visible(vm)) return true;
      if (!in(vms, vm.id) || !in(names, vm.name) || !in(folders, vm.folder_id) || !in(hosts, vm.host_id) ||
          !in(clusters, vm.cluster_id) || !in(pools, vm.resource_pool_id) ||
          !in(power_states, model::to_string(vm.power))) {
        return true;
      }
      if (++matched > limit) return false;
      out.push_back(json{{"vm", vm.id},
                         {"name", vm.name},
                         {"power_state", model::to_string(vm.power)},
                         {"cpu_count", vm.cpu_count},
                         {"memory_size_MiB", vm.memory_mb}});
      return true;
    };
    // Lists filtered by id or name (what clients poll with) look those VMs up instead of scanning every VM
    // of the lab: with 10,000 VMs a scan per request would make the front's capacity fall with the lab's
    // size.
    if (!vms.empty() || !names.empty()) {
      std::set<std::string_view> seen;
      std::vector<const model::Vm*> candidates;
      if (!vms.empty()) {
        for (const auto& id : vms) {
          const model::Vm* vm = lab.find_vm(id);
          if (vm && vm->id == id && seen.insert(vm->id).second) candidates.push_back(vm);
        }
      } else {
        for (const auto& name : names) {
          const model::Vm* vm = lab.find_vm_by_name(name);
          if (vm && seen.insert(vm->id).second) candidates.push_back(vm);
        }
      }
      // The order of a full scan (creation order: ids are vm-<n>).
      std::sort(candidates.begin(), candidates.end(), [](const model::Vm* a, const model::Vm* b) {
        return a->id.size() != b->id.size() ? a->id.size() < b->id.size() : a->id < b->id;
      });
      for (const model::Vm* vm : candidates) {
        if (!consider(*vm)) break;
      }
    } else {
      lab.for_each_vm(consider);
    }
    if (matched > limit) {
      return api_error(500, "UNABLE_TO_ALLOCATE_RESOURCE", "com.vmware.api.vcenter.vm.list.limit_exceeded",
                       fmt::format("Too many virtual machines. Add more filter criteria to reduce the number "
                                   "(the limit is {}).",
                                   limit),
                       {std::to_string(limit)});
    }
    return json_response(200, out);
  }

  json vm_info(const model::Vm& vm) const {
    const model::GuestProfile* profile = lab.find_profile(vm.profile);
    const double disk_gb = profile ? profile->disk_gb : 40;
    const model::Datastore* ds = lab.find_datastore(vm.datastore_id);
    const std::string ds_name = ds ? ds->spec.name : "datastore";
    json disks{{"2000", json{{"label", "Hard disk 1"},
                             {"type", "SCSI"},
                             {"scsi", json{{"bus", 0}, {"unit", 0}}},
                             {"backing",
                              json{{"type", "VMDK_FILE"},
                                   {"vmdk_file", fmt::format("[{}] {}/{}.vmdk", ds_name, vm.name, vm.name)}}},
                             {"capacity", static_cast<std::int64_t>(disk_gb * 1024 * 1024 * 1024)}}}};
    json nics{
        {"4000", json{{"label", "Network adapter 1"},
                      {"type", "VMXNET3"},
                      {"upt_compatibility_enabled", true},
                      {"mac_type", "GENERATED"},
                      {"mac_address", mac_for(vm.id)},
                      {"pci_slot_number", 192},
                      {"wake_on_lan_enabled", false},
                      {"backing", json{{"type", "STANDARD_PORTGROUP"},
                                       {"network", "network-1"},
                                       {"network_name", "VM Network"}}},
                      {"state", vm.power == model::PowerState::powered_on ? "CONNECTED" : "NOT_CONNECTED"},
                      {"start_connected", true},
                      {"allow_guest_control", true}}}};
    json scsi{{"1000", json{{"label", "SCSI controller 0"},
                            {"type", "PVSCSI"},
                            {"scsi", json{{"bus", 0}, {"unit", 7}}},
                            {"pci_slot_number", 160},
                            {"sharing", "NONE"}}}};
    return json{
        {"guest_OS", vm.guest_os},
        {"name", vm.name},
        {"identity", json{{"name", vm.name},
                          {"bios_uuid", fmt::format("4210{:028x}", std::hash<std::string>{}(vm.id))},
                          {"instance_uuid", fmt::format("5010{:028x}", std::hash<std::string>{}(vm.name))}}},
        {"power_state", model::to_string(vm.power)},
        {"instant_clone_frozen", false},
        {"hardware", json{{"version", "VMX_19"}, {"upgrade_policy", "NEVER"}, {"upgrade_status", "NONE"}}},
        {"boot", json{{"type", "EFI"},
                      {"efi_legacy_boot", false},
                      {"delay", 0},
                      {"retry", false},
                      {"retry_delay", 10000},
                      {"enter_setup_mode", false}}},
        {"boot_devices", json::array()},
        {"cpu", json{{"count", vm.cpu_count},
                     {"cores_per_socket", 1},
                     {"hot_add_enabled", false},
                     {"hot_remove_enabled", false}}},
        {"memory", json{{"size_MiB", vm.memory_mb}, {"hot_add_enabled", false}}},
        {"disks", disks},
        {"nics", nics},
        {"cdroms", json::object()},
        {"floppies", json::object()},
        {"parallel_ports", json::object()},
        {"serial_ports", json::object()},
        {"sata_adapters", json::object()},
        {"scsi_adapters", scsi}};
  }

  json tools_info(const model::Vm& vm) const {
    const bool windows = guest_family(vm.guest_os) == "WINDOWS";
    const bool running = vm.power == model::PowerState::powered_on && vm.tools == model::ToolsState::running;
    return json{{"auto_update_supported", false},
                {"install_attempt_count", 0},
                {"version_number", 12352},
                {"version", "12352"},
                {"upgrade_policy", "MANUAL"},
                {"version_status", "CURRENT"},
                {"install_type", windows ? "MSI" : "OPEN_VM_TOOLS"},
                {"run_state", running ? "RUNNING" : "NOT_RUNNING"}};
  }

  ServerResponse tools_not_running(const model::Vm& vm) {
    return api_error(503, "SERVICE_UNAVAILABLE", "com.vmware.api.vcenter.vm.guest.tools_not_running",
                     fmt::format("VMware Tools is not running in virtual machine '{}'.", vm.id), {vm.id});
  }

  ServerResponse guest_identity(const model::Vm& vm) {
    if (vm.power != model::PowerState::powered_on || vm.tools != model::ToolsState::running) {
      return tools_not_running(vm);
    }
    json body{{"name", vm.guest_os},
              {"family", guest_family(vm.guest_os)},
              {"full_name", json{{"id", "vmsg.guestos." + vm.guest_os},
                                 {"default_message", vm.guest_os},
                                 {"args", json::array()}}},
              {"host_name", vm.host_name.empty() ? vm.name : vm.host_name}};
    if (!vm.ip.empty()) body["ip_address"] = vm.ip;
    return json_response(200, body);
  }

  ServerResponse guest_interfaces(const model::Vm& vm) {
    if (vm.power != model::PowerState::powered_on || vm.tools != model::ToolsState::running) {
      return tools_not_running(vm);
    }
    json addresses = json::array();
    if (!vm.ip.empty()) {
      addresses.push_back(
          json{{"ip_address", vm.ip}, {"prefix_length", 16}, {"origin", "DHCP"}, {"state", "PREFERRED"}});
    }
    return json_response(200, json::array({json{{"nic", "4000"},
                                                {"mac_address", mac_for(vm.id)},
                                                {"ip", json{{"ip_addresses", addresses}}}}}));
  }

  ServerResponse list_hosts(const ServerRequest& req) {
    const auto ids = req.query_params("hosts");
    const auto names = req.query_params("names");
    const auto folders = req.query_params("folders");
    const auto datacenters = req.query_params("datacenters");
    const auto clusters = req.query_params("clusters");
    const auto states = req.query_params("connection_states");
    const auto standalone = req.query_param("standalone");
    json out = json::array();
    if (!in(datacenters, lab.datacenter().id)) return json_response(200, out);
    for (const auto& h : lab.hosts()) {
      if (h.spec.inventory != "vcenter") continue;
      if (!in(ids, h.id) || !in(names, h.spec.name) || !in(folders, lab.datacenter().host_folder_id) ||
          !in(clusters, h.cluster_id) || !in(states, h.connection_state)) {
        continue;
      }
      if (standalone && (*standalone == "true") != h.cluster_id.empty()) continue;
      out.push_back(json{{"host", h.id},
                         {"name", h.spec.name},
                         {"connection_state", h.connection_state},
                         {"power_state", h.power_state}});
    }
    return json_response(200, out);
  }

  ServerResponse list_datastores(const ServerRequest& req) {
    const auto ids = req.query_params("datastores");
    const auto names = req.query_params("names");
    const auto types = req.query_params("types");
    const auto folders = req.query_params("folders");
    const auto datacenters = req.query_params("datacenters");
    json out = json::array();
    if (!in(datacenters, lab.datacenter().id)) return json_response(200, out);
    for (const auto& d : lab.datastores()) {
      if (!in(ids, d.id) || !in(names, d.spec.name) || !in(types, "VMFS") ||
          !in(folders, lab.datacenter().datastore_folder_id)) {
        continue;
      }
      const double gib = 1024.0 * 1024 * 1024;
      out.push_back(
          json{{"datastore", d.id},
               {"name", d.spec.name},
               {"type", "VMFS"},
               {"free_space", static_cast<std::int64_t>(std::max(0.0, d.spec.capacity_gb - d.used_gb) * gib)},
               {"capacity", static_cast<std::int64_t>(d.spec.capacity_gb * gib)}});
    }
    return json_response(200, out);
  }

  ServerResponse list_clusters(const ServerRequest& req) {
    const auto ids = req.query_params("clusters");
    const auto names = req.query_params("names");
    const auto folders = req.query_params("folders");
    const auto datacenters = req.query_params("datacenters");
    json out = json::array();
    if (!in(datacenters, lab.datacenter().id)) return json_response(200, out);
    for (const auto& c : lab.clusters()) {
      if (!in(ids, c.id) || !in(names, c.name) || !in(folders, lab.datacenter().host_folder_id)) continue;
      out.push_back(json{{"cluster", c.id}, {"name", c.name}, {"ha_enabled", true}, {"drs_enabled", true}});
    }
    return json_response(200, out);
  }

  std::string parent_folder_of(const model::Folder& f) const {
    // Extra VM folders live in the datacenter's "vm" folder; the datacenter's own folders have the
    // datacenter (not a folder) as parent; the root "Datacenters" folder has none.
    if (f.type == "VIRTUAL_MACHINE" && f.id != lab.datacenter().vm_folder_id)
      return lab.datacenter().vm_folder_id;
    return {};
  }

  ServerResponse list_folders(const ServerRequest& req) {
    const auto ids = req.query_params("folders");
    const auto names = req.query_params("names");
    const auto type = req.query_param("type");
    const auto parents = req.query_params("parent_folders");
    const auto datacenters = req.query_params("datacenters");
    if (type && *type != "DATACENTER" && *type != "DATASTORE" && *type != "HOST" && *type != "NETWORK" &&
        *type != "VIRTUAL_MACHINE") {
      return invalid_argument(fmt::format("Invalid value '{}' for type.", *type));
    }
    json out = json::array();
    for (const auto& f : lab.folders()) {
      if (!in(ids, f.id) || !in(names, f.name) || (type && *type != f.type)) continue;
      if (!parents.empty() && !in(parents, parent_folder_of(f))) continue;
      if (!datacenters.empty() && (f.type == "DATACENTER" || !in(datacenters, lab.datacenter().id))) continue;
      out.push_back(json{{"folder", f.id}, {"name", f.name}, {"type", f.type}});
    }
    return json_response(200, out);
  }

  ServerResponse list_resource_pools(const ServerRequest& req) {
    const auto ids = req.query_params("resource_pools");
    const auto names = req.query_params("names");
    const auto parents = req.query_params("parent_resource_pools");
    const auto datacenters = req.query_params("datacenters");
    const auto hosts = req.query_params("hosts");
    const auto clusters = req.query_params("clusters");
    json out = json::array();
    if (!in(datacenters, lab.datacenter().id)) return json_response(200, out);
    for (const auto& p : lab.resource_pools()) {
      if (!in(ids, p.id) || !in(names, p.name) || !in(clusters, p.cluster_id)) continue;
      if (!parents.empty()) {
        std::string parent;
        if (p.name != "Resources") {
          for (const auto& c : lab.clusters()) {
            if (c.id == p.cluster_id) parent = c.resource_pool_id;
          }
        }
        if (!in(parents, parent)) continue;
      }
      if (!hosts.empty()) {
        bool on_host = false;
        for (const auto& h : lab.hosts()) {
          if (in(hosts, h.id) && !h.cluster_id.empty() && h.cluster_id == p.cluster_id) on_host = true;
        }
        if (!on_host) continue;
      }
      out.push_back(json{{"resource_pool", p.id}, {"name", p.name}});
    }
    return json_response(200, out);
  }

  ServerResponse list_datacenters(const ServerRequest& req) {
    const auto ids = req.query_params("datacenters");
    const auto names = req.query_params("names");
    json out = json::array();
    const auto& dc = lab.datacenter();
    if (in(ids, dc.id) && in(names, dc.name)) out.push_back(json{{"datacenter", dc.id}, {"name", dc.name}});
    return json_response(200, out);
  }

  // ---- clone ----
  asio::awaitable<ServerResponse> clone(const ServerRequest& req, bool instant) {
    const json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object())
      co_return invalid_argument("The request body is not a JSON object.");
    const std::set<std::string> allowed = instant ? std::set<std::string>{"source",
                                                                          "name",
                                                                          "placement",
                                                                          "nics_to_update",
                                                                          "disconnect_all_nics",
                                                                          "parallel_ports_to_update",
                                                                          "serial_ports_to_update",
                                                                          "bios_uuid"}
                                                  : std::set<std::string>{"source",
                                                                          "name",
                                                                          "placement",
                                                                          "disks_to_remove",
                                                                          "disks_to_update",
                                                                          "power_on",
                                                                          "guest_customization_spec"};
    for (const auto& [key, value] : body.items()) {
      if (!allowed.count(key))
        co_return invalid_argument(fmt::format("Unexpected field '{}' in the clone spec.", key));
    }
    if (!body.contains("source") || !body["source"].is_string())
      co_return invalid_argument("'source' is required.");
    if (!body.contains("name") || !body["name"].is_string() || body["name"].get<std::string>().empty()) {
      co_return invalid_argument("'name' is required.");
    }
    const std::string source_id = body["source"];
    const std::string name = body["name"];
    const model::Vm* source = lab.find_vm(source_id);
    if (!source || !visible(*source)) co_return not_found("virtual machine", source_id);
    if (lab.find_vm_by_name(name)) {
      co_return api_error(400, "ALREADY_EXISTS", "com.vmware.api.vcenter.vm.already_exists",
                          fmt::format("A virtual machine named '{}' already exists.", name), {name});
    }
    if (instant && source->power != model::PowerState::powered_on) {
      co_return api_error(
          400, "NOT_ALLOWED_IN_CURRENT_STATE", "com.vmware.api.vcenter.vm.instant_clone.source_off",
          fmt::format("Instant clone needs a powered-on source; '{}' is powered off.", source_id),
          {source_id});
    }
    model::CloneRequest request;
    request.kind =
        instant ? model::CloneKind::instant
                : (config().clone_kind == "linked" ? model::CloneKind::linked : model::CloneKind::full);
    request.source_vm_id = source_id;
    request.name = name;
    request.created_by_front = "vcenter";
    if (!instant && body.contains("power_on")) {
      if (!body["power_on"].is_boolean()) co_return invalid_argument("'power_on' must be a boolean.");
      request.power_on = body["power_on"].get<bool>();
    }
    if (body.contains("placement")) {
      const json& placement = body["placement"];
      if (!placement.is_object()) co_return invalid_argument("'placement' must be an object.");
      for (const auto& [key, value] : placement.items()) {
        if (!value.is_string())
          co_return invalid_argument(fmt::format("'placement.{}' must be a string.", key));
        const std::string id = value;
        if (key == "folder") {
          const model::Folder* f = lab.find_folder(id);
          if (!f || f->id != id || f->type != "VIRTUAL_MACHINE") co_return not_found("folder", id);
          request.folder_id = id;
        } else if (key == "resource_pool") {
          const model::ResourcePool* p = lab.find_resource_pool(id);
          if (!p || p->id != id) co_return not_found("resource pool", id);
          request.resource_pool_id = id;
        } else if (key == "host" && !instant) {
          const model::Host* h = lab.find_host(id);
          if (!h || h->id != id || h->spec.inventory != "vcenter") co_return not_found("host", id);
          request.host_id = id;
        } else if (key == "cluster" && !instant) {
          const model::Cluster* c = lab.find_cluster(id);
          if (!c || c->id != id) co_return not_found("cluster", id);
          request.cluster_id = id;
        } else if (key == "datastore") {
          const model::Datastore* d = lab.find_datastore(id);
          if (!d || d->id != id) co_return not_found("datastore", id);
          request.datastore_id = id;
        } else {
          co_return invalid_argument(fmt::format("Unexpected field 'placement.{}'.", key));
        }
      }
    }
    // Admission on the destination host (the source's when placement names none, or any host of a cluster).
    const std::string cost_host = !request.host_id.empty()     ? request.host_id
                                  : request.cluster_id.empty() ? source->host_id
                                                               : std::string();
    auto slot = co_await admit(cost_host, config().clone_cost);
    auto cloned = callback_state<Expected<std::string>>(executor);
    if (auto started = lab.clone_vm(request, cloned->callback()); !started)
      cloned->callback()(started.error());
    auto result = co_await wait_for(cloned);
    if (!result) {
      const Error& e = result.error();
      if (e.kind == ErrorKind::conflict) {
        co_return api_error(400, "ALREADY_EXISTS", "com.vmware.api.vcenter.vm.already_exists", e.message,
                            {name});
      }
      if (e.kind == ErrorKind::not_found) co_return not_found("object", source_id);
      co_return api_error(500, "ERROR", "com.vmware.api.vcenter.vm.clone.failed", e.message);
    }
    co_return json_response(200, json(*result));
  }

  // ---- power ----
  asio::awaitable<ServerResponse> power(const std::string& vm_id, const std::string& action) {
    const model::Vm* vm = lab.find_vm(vm_id);
    if (action != "start" && action != "stop" && action != "reset" && action != "suspend") {
      co_return invalid_argument(fmt::format("Unknown power action '{}'.", action));
    }
    if (action == "suspend") {
      co_return api_error(400, "UNSUPPORTED", "com.vmware.bootstorm.lab.unsupported",
                          "Suspend is not simulated by the lab.");
    }
    const bool on = vm->power == model::PowerState::powered_on;
    if (action == "start" && on) {
      co_return api_error(400, "ALREADY_IN_DESIRED_STATE",
                          "com.vmware.api.vcenter.vm.power.already_powered_on",
                          fmt::format("Virtual machine '{}' is already powered on.", vm_id), {vm_id});
    }
    if (action == "stop" && !on) {
      co_return api_error(400, "ALREADY_IN_DESIRED_STATE",
                          "com.vmware.api.vcenter.vm.power.already_powered_off",
                          fmt::format("Virtual machine '{}' is already powered off.", vm_id), {vm_id});
    }
    if (action == "reset" && !on) {
      co_return api_error(400, "NOT_ALLOWED_IN_CURRENT_STATE", "com.vmware.api.vcenter.vm.power.powered_off",
                          fmt::format("Virtual machine '{}' is powered off.", vm_id), {vm_id});
    }
    if (action == "start") {
      const model::Host* host = lab.find_host(vm->host_id);
      if (host && host->memory_used_mb + vm->memory_mb > host->spec.memory_gb * 1024) {
        co_return api_error(
            500, "UNABLE_TO_ALLOCATE_RESOURCE", "com.vmware.api.vcenter.vm.power.insufficient_memory",
            fmt::format("Host '{}' has not enough memory to power on '{}'.", host->spec.name, vm_id));
      }
    }
    auto slot = co_await admit(vm->host_id, config().power_cost);
    if (action == "stop" || action == "reset") {
      auto stopped = callback_state<Expected<void>>(executor);
      if (auto started = lab.power_off(vm_id, stopped->callback()); !started)
        stopped->callback()(started.error());
      auto off = co_await wait_for(stopped);
      if (!off) co_return busy(vm_id, off.error());
      if (action == "stop") co_return no_content();
    }
    begin_customization(vm_id);
    auto on_state = callback_state<Expected<void>>(executor);
    if (auto started = lab.power_on(vm_id, on_state->callback()); !started)
      on_state->callback()(started.error());
    auto running = co_await wait_for(on_state);
    if (!running) co_return busy(vm_id, running.error());
    co_return no_content();
  }

  ServerResponse busy(const std::string& vm_id, const Error& e) {
    if (e.kind == ErrorKind::not_found) return not_found("virtual machine", vm_id);
    return api_error(500, "RESOURCE_BUSY", "com.vmware.api.vcenter.vm.power.busy", e.message, {vm_id});
  }

  // ---- guest customization ----
  ServerResponse set_customization(const ServerRequest& req, const model::Vm& vm) {
    if (vm.power != model::PowerState::powered_off) {
      return api_error(
          400, "NOT_ALLOWED_IN_CURRENT_STATE", "com.vmware.api.vcenter.vm.guest.customization.powered_on",
          fmt::format("Virtual machine '{}' must be powered off to set a customization.", vm.id), {vm.id});
    }
    const json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object())
      return invalid_argument("The request body is not a JSON object.");
    for (const auto& [key, value] : body.items()) {
      if (key != "name" && key != "spec")
        return invalid_argument(fmt::format("Unexpected field '{}' in the set spec.", key));
    }
    if (body.contains("name") && body.contains("spec")) {
      return invalid_argument("Only one of 'name' and 'spec' may be set.");
    }
    if (body.contains("name")) {
      if (!body["name"].is_string()) return invalid_argument("'name' must be a string.");
      // The lab has no customization-spec inventory (/api/vcenter/guest/customization-specs is empty).
      return not_found("customization specification", body["name"].get<std::string>());
    }
    if (!body.contains("spec")) {  // neither: clears any pending customization
      customizations.erase(vm.id);
      return no_content();
    }
    if (auto problem = customization_spec_problem(body["spec"])) return invalid_argument(*problem);
    customizations[vm.id] = Customization{body["spec"]};
    return no_content();
  }

  // What is wrong with a guest.CustomizationSpec (the schema's rules plus the documented "exactly one of"
  // windows_config / linux_config / cloud_config and the 512 KiB cloud-init limits); nullopt when valid.
  static std::optional<std::string> customization_spec_problem(const json& spec) {
    if (!spec.is_object()) return "'spec' must be an object.";
    for (const auto& [key, value] : spec.items()) {
      if (key != "configuration_spec" && key != "global_DNS_settings" && key != "interfaces") {
        return fmt::format("Unexpected field 'spec.{}'.", key);
      }
    }
    if (!spec.contains("configuration_spec") || !spec["configuration_spec"].is_object()) {
      return "'spec.configuration_spec' is required.";
    }
    if (!spec.contains("global_DNS_settings") || !spec["global_DNS_settings"].is_object()) {
      return "'spec.global_DNS_settings' is required.";
    }
    if (!spec.contains("interfaces") || !spec["interfaces"].is_array())
      return "'spec.interfaces' is required.";
    const json& config = spec["configuration_spec"];
    int kinds = 0;
    for (const auto& [key, value] : config.items()) {
      if (key != "windows_config" && key != "linux_config" && key != "cloud_config") {
        return fmt::format("Unexpected field 'configuration_spec.{}'.", key);
      }
      if (!value.is_object()) return fmt::format("'configuration_spec.{}' must be an object.", key);
      ++kinds;
    }
    if (kinds != 1) return "Exactly one of windows_config, linux_config and cloud_config must be set.";
    if (config.contains("cloud_config")) {
      const json& cloud = config["cloud_config"];
      if (cloud.value("type", "") != "CLOUDINIT") return "'cloud_config.type' must be CLOUDINIT.";
      if (!cloud.contains("cloudinit") || !cloud["cloudinit"].is_object())
        return "'cloud_config.cloudinit' is required.";
      const json& init = cloud["cloudinit"];
      constexpr std::size_t kMaxBytes = 524288;
      if (!init.contains("metadata") || !init["metadata"].is_string())
        return "'cloudinit.metadata' is required.";
      if (init["metadata"].get_ref<const std::string&>().size() > kMaxBytes)
        return "'cloudinit.metadata' exceeds 524288 bytes.";
      if (init.contains("userdata")) {
        if (!init["userdata"].is_string()) return "'cloudinit.userdata' must be a string.";
        if (init["userdata"].get_ref<const std::string&>().size() > kMaxBytes) {
          return "'cloudinit.userdata' exceeds 524288 bytes.";
        }
      }
    }
    if (config.contains("linux_config")) {
      const json& linux = config["linux_config"];
      if (!linux.contains("hostname") || !linux["hostname"].is_object() ||
          !linux["hostname"].contains("type")) {
        return "'linux_config.hostname' with a type is required.";
      }
      if (!linux.contains("domain") || !linux["domain"].is_string())
        return "'linux_config.domain' is required.";
      if (linux.contains("script_text") && linux["script_text"].is_string() &&
          linux["script_text"].get_ref<const std::string&>().size() > 1500) {
        return "'linux_config.script_text' exceeds 1500 bytes.";
      }
    }
    return std::nullopt;
  }

  // The customization starts with the power-on: the guest's customization engine (cloud-init with the
  // VMware datasource, or the Linux customization script) reads it from the VM's configuration and writes the
  // bootstorm beacon settings where the agent finds them — modelled as the VM's guestinfo keys that the lab's
  // beacon hook reads when the guest reaches logon.
  void begin_customization(const std::string& vm_id) {
    auto it = customizations.find(vm_id);
    const model::Vm* vm = lab.find_vm(vm_id);
    if (it == customizations.end() || !vm || it->second.status != "PENDING") return;
    Customization& c = it->second;
    c.status = "RUNNING";
    c.start_time = lab.now();
    const json& config = c.spec["configuration_spec"];
    const bool windows = guest_family(vm->guest_os) == "WINDOWS";
    if (windows != config.contains("windows_config")) {
      c.status = "FAILED";
      c.end_time = c.start_time;
      c.error = fmt::format("The customization does not apply to guest OS {}.", vm->guest_os);
      return;
    }
    std::string text;
    if (config.contains("cloud_config")) text = config["cloud_config"]["cloudinit"].value("userdata", "");
    if (config.contains("linux_config")) text = config["linux_config"].value("script_text", "");
    auto keys = beacon_guestinfo(text);
    if (keys.empty()) return;
    lab.modify_vm(vm_id, [&](model::Vm& target) {
      for (auto& [k, v] : keys) target.guestinfo[k] = v;
    });
  }

  // BOOTSTORM_BEACON_URL=..., BOOTSTORM_BEACON_TOKEN=..., BOOTSTORM_VM_NAME=... lines (the beacon.env the
  // user data writes, deploy/guest/linux) -> guestinfo keys.
  static std::map<std::string, std::string> beacon_guestinfo(std::string_view text) {
    static const std::vector<std::pair<std::string_view, std::string_view>> kKeys = {
        {"BOOTSTORM_BEACON_URL=", model::kBeaconUrlKey},
        {"BOOTSTORM_BEACON_TOKEN=", model::kBeaconTokenKey},
        {"BOOTSTORM_VM_NAME=", model::kBeaconVmKey}};
    std::map<std::string, std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(start, end - start);
      start = end + 1;
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      if (line.rfind("export ", 0) == 0) line.remove_prefix(7);
      for (const auto& [prefix, key] : kKeys) {
        if (line.rfind(prefix, 0) != 0) continue;
        std::string_view value = line.substr(prefix.size());
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
            value.back() == value.front()) {
          value = value.substr(1, value.size() - 2);
        }
        out[std::string(key)] = std::string(value);
      }
    }
    if (!out.count(std::string(model::kBeaconUrlKey))) out.clear();
    return out;
  }

  json customization_info(const model::Vm& vm) {
    auto it = customizations.find(vm.id);
    if (it == customizations.end()) return json{{"status", "IDLE"}};
    Customization& c = it->second;
    if (c.status == "RUNNING" && vm.milestone(model::Milestone::guest_agent)) {
      c.status = "SUCCEEDED";  // the customization engine reports back through Tools
      c.end_time = *vm.milestone(model::Milestone::guest_agent);
    }
    json info{{"status", c.status}};
    if (c.status != "PENDING") info["start_time"] = iso8601(c.start_time);
    if (c.status == "SUCCEEDED" || c.status == "FAILED") info["end_time"] = iso8601(c.end_time);
    if (c.status == "FAILED") info["error"] = c.error;
    return info;
  }

  // ---- lab endpoints ----
  ServerResponse handle_lab(const ServerRequest& req) {
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
        if (body.is_discarded() || !body.is_object())
          return lab_error(400, "The body must be a JSON object.");
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
};

VcenterFront::VcenterFront(model::Lab& lab, boost::asio::any_io_executor executor)
    : impl_(std::make_shared<Impl>(lab, std::move(executor))) {}

VcenterFront::~VcenterFront() = default;

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
  s.operations_running = static_cast<std::size_t>(impl_->running_operations);
  s.operations_queued = impl_->waiters.size();
  return s;
}

std::string VcenterFront::stats_json() const {
  return impl_->stats_as_json().dump();
}

}  // namespace bootstorm::sim::vcenter
