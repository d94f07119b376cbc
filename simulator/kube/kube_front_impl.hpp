#pragma once
// Internal to bootstorm::sim_kube: the state shared by the HTTP layer (kube_front.cpp, kube_rest.cpp,
// kube_watch.cpp) and the controllers that play virt-controller, virt-handler and CDI against the lab model
// (kube_controllers.cpp).
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/kube_front.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/kube/printer_columns.hpp"
#include "simulator/kube/resource_types.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube {

using json = nlohmann::json;
class ForkliftController;

// A JSON response, and an API error as the API server answers it (a metav1.Status body).
http::ServerResponse json_response(int status, std::string body);
http::ServerResponse error_response(const ApiError& error);

// The outcome of an API operation: the stored object or an API error.
using ApiResult = std::variant<ObjectPtr, ApiError>;
inline bool failed(const ApiResult& result) {
  return std::holds_alternative<ApiError>(result);
}

// DeleteOptions.propagationPolicy: what happens to the objects the deleted one owns.
enum class Propagation { background, foreground, orphan };

// A parsed resource URL.
struct Route {
  const ResourceType* type = nullptr;
  Kind kind = Kind::namespaces;
  std::string ns;                  // namespace from the path ("" for cluster-scoped or all-namespaces)
  std::string name;                // object name ("" for collections)
  std::string subresource;         // "status", "start", "stop", "restart"
  bool watch_prefix = false;       // legacy /watch/ path
  bool subresource_group = false;  // under /apis/subresources.kubevirt.io
  // Reads: what the Accept header asked for (a Table for kubectl get) and the Table's includeObject.
  ResponseShape shape;
  IncludeObject include = IncludeObject::metadata;
};

struct FrontStats {
  std::uint64_t requests = 0;
  std::uint64_t unauthorized = 0;
  std::uint64_t injected_errors = 0;
  std::uint64_t injected_latency = 0;
  std::uint64_t errors = 0;  // 4xx/5xx answered (including injected)
  std::map<std::string, std::uint64_t>
      by_route;  // "GET virtualmachineinstances", "PUT virtualmachines/start"
  // Resource requests as Kubernetes RBAC authorizes them: "verb group resource[/subresource]" with "" shown
  // as "core" ("list kubevirt.io virtualmachines", "update subresources.kubevirt.io virtualmachines/start").
  std::map<std::string, std::uint64_t> by_authorization;
  std::uint64_t forced_gone = 0;  // fault: 410 answered to a watch
  std::int64_t current_second = 0;
  std::uint64_t current_second_count = 0;
  std::uint64_t requests_last_second = 0;
  std::uint64_t peak_requests_per_second = 0;
  std::uint64_t watches_opened = 0;
  std::uint64_t watches_active = 0;
  std::uint64_t watches_dropped = 0;  // fault: aborted
  std::uint64_t watches_gone = 0;     // 410 sent
  std::uint64_t watch_events_sent = 0;
  std::uint64_t bookmarks_sent = 0;
  // Connections that carried VirtualMachine start requests: fewer than the starts when the client pipelines.
  std::set<std::uint64_t> start_connections;
};

// Per-VirtualMachine controller state that is not part of the API object.
struct VmRuntime {
  std::string model_id;          // lab VM id
  bool start_requested = false;  // start/restart subresource (Manual, RerunOnFailure)
  bool stop_requested = false;   // stop subresource
  bool once_started = false;     // runStrategy Once: started already
  bool stopping = false;         // power-off in flight
};

struct CloneRuntime {
  std::string datastore_id;
  double size_mb = 0;
  double done_mb = 0;
  std::string in_progress_phase;
};

struct KubeFront::Impl : std::enable_shared_from_this<KubeFront::Impl> {
  Impl(model::Lab& lab, KubeFrontOptions options);

  model::Lab& lab;
  KubeFrontOptions options;
  ObjectStore store;
  std::mt19937_64 rng;
  bool alive = true;
  model::SubscriptionId subscription = 0;
  std::set<std::string> tokens;
  FrontStats stats;

  std::map<std::string, VmRuntime> vms;               // "ns/name" of VirtualMachines
  std::map<std::string, std::string> vm_by_model_id;  // lab VM id -> "ns/name"
  std::map<std::string, CloneRuntime> clones;         // "ns/name" of DataVolumes being cloned
  bool progress_ticker = false;
  std::deque<std::pair<std::string, std::string>> event_order;  // (ns, name) of stored Events, oldest first
  // VMI resourceVersions that carry a lab milestone no watch has written yet: (lab VM id, milestone). The
  // first watch frame carrying one stamps the truth's "delivered" time (Lab::note_milestone_delivered).
  static constexpr std::size_t kMaxUndelivered = 200000;
  std::unordered_map<std::uint64_t, std::pair<std::string, model::Milestone>> undelivered;
  std::uint64_t event_counter = 0;
  std::shared_ptr<ForkliftController> forklift;  // forklift_controller.cpp

  void start();
  void shutdown();

  // ---- HTTP layer (kube_front.cpp) ----
  boost::asio::awaitable<http::ServerResponse> handle(http::ServerRequest& request);
  http::ServerResponse route_request(http::ServerRequest& request, std::string& route_key);
  void count_request(const std::string& route_key);
  http::ServerResponse handle_lab(http::ServerRequest& request);
  bool authenticated(const http::ServerRequest& request) const;
  json stats_json() const;

  http::ServerResponse list(const Route& route, const http::ServerRequest& request);
  http::ServerResponse get(const Route& route);
  ApiResult create(Kind kind, const std::string& path_ns, const std::string& body, bool dry_run);
  ApiResult update(const Route& route, json object, bool dry_run);
  ApiResult patch(const Route& route, const http::ServerRequest& request, bool dry_run);
  ApiResult remove(const Route& route, const http::ServerRequest& request, bool dry_run);
  http::ServerResponse subresource_action(const Route& route, const http::ServerRequest& request);

  // ---- Watch (kube_watch.cpp) ----
  http::ServerResponse watch(const Route& route, const http::ServerRequest& request);
  // A watch is handing a chunk with these VMI resourceVersions to its socket: stamps "delivered" truth.
  void mark_delivered(const std::vector<std::uint64_t>& resource_versions);

  // ---- Object helpers ----
  std::string new_uid();
  double now() const;
  // Stores a new version of an existing object produced by `edit`; no-op (returns current) when nothing
  // changed; null when the object is gone.
  ObjectPtr modify(Kind kind, const std::string& ns, const std::string& name,
                   const std::function<void(json&)>& edit);
  // Fills uid, creationTimestamp, generation of a new object and stores it.
  ObjectPtr insert(Kind kind, json object);
  void emit_event(const json& involved, const std::string& type, const std::string& reason,
                  const std::string& message, const std::string& component, const std::string& host = {});

  // ---- Controllers (kube_controllers.cpp) ----
  void seed_objects();
  // Validates a new object of `kind` and prepares it (model side effects for VMs); error to answer instead.
  std::optional<ApiError> admit_create(Kind kind, json& object);
  std::optional<ApiError> admit_update(Kind kind, const json& old_object, json& object);
  void after_create(Kind kind, const ObjectPtr& object);
  void after_update(Kind kind, const ObjectPtr& before, const ObjectPtr& after);
  // Deletes the object with its cascade; returns the object as last stored.
  // Deletes an object and, unless `propagation` is orphan, what it owns (a VM's VMI, DataVolumes and PVCs).
  ApiResult delete_object(Kind kind, const std::string& ns, const std::string& name,
                          Propagation propagation = Propagation::background);

  void on_lab_event(const model::VmEvent& event);
  void reconcile_vm(const std::string& ns, const std::string& name);
  void update_vm_status(const std::string& ns, const std::string& name);
  void create_vmi(const std::string& ns, const std::string& name);
  void stop_vmi(const std::string& ns, const std::string& name);
  void delete_vmi_object(const std::string& ns, const std::string& name);
  void start_data_volume(const std::string& ns, const std::string& name);
  void finish_clone(const std::string& ns, const std::string& name, const Expected<void>& result);
  void progress_tick();
  void terminate_namespace(const std::string& name);
};

std::string run_strategy_of(const json& vm);

}  // namespace bootstorm::sim::kube
