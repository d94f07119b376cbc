#pragma once
// Internal to bootstorm::sim_kube: the state shared by the HTTP layer (kube_front.cpp, kube_rest.cpp,
// kube_watch.cpp) and the controllers that play virt-controller, virt-handler and CDI against the lab model
// (detail/*.hpp), which the front holds.
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/admission.hpp"
#include "simulator/kube/detail/api_result.hpp"
#include "simulator/kube/detail/cdi_controller.hpp"
#include "simulator/kube/detail/event_recorder.hpp"
#include "simulator/kube/detail/garbage_collector.hpp"
#include "simulator/kube/detail/lifetime.hpp"
#include "simulator/kube/detail/object_publisher.hpp"
#include "simulator/kube/detail/virt_handler.hpp"
#include "simulator/kube/detail/vm_controller.hpp"
#include "simulator/kube/detail/vm_subresources.hpp"
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

struct KubeFront::Impl final : std::enable_shared_from_this<KubeFront::Impl>, ObjectPublisher {
  Impl(model::Lab& lab, KubeFrontOptions options);

  model::Lab& lab;
  KubeFrontOptions options;
  ObjectStore store;
  std::mt19937_64 rng;
  bool alive = true;
  model::SubscriptionId subscription = 0;
  std::set<std::string> tokens;
  FrontStats stats;

  // The controllers, in the order they depend on one another; their lab callbacks run while `lifetime` does.
  Lifetime lifetime;
  EventRecorder events;
  CdiController cdi;
  VmController vm_controller;
  VirtHandler virt_handler;
  Admission admission;
  GarbageCollector garbage_collector;
  VmSubresources subresources;
  std::shared_ptr<ForkliftController> forklift;  // forklift_controller.cpp

  void start();
  void shutdown();

  // ---- HTTP layer (kube_front.cpp) ----
  boost::asio::awaitable<http::ServerResponse> handle(http::ServerRequest& request);
  // Fixed paths from a table, discovery, then resource paths; `route_key` names the route for /_lab/stats.
  http::ServerResponse route_request(http::ServerRequest& request, std::string& route_key);
  http::ServerResponse route_resource(http::ServerRequest& request, const std::string& group,
                                      const std::string& version, std::vector<std::string> rest,
                                      std::string& route_key);
  std::optional<http::ServerResponse> authorize(const Route& route, const std::string& method, bool watching);
  // A resource request past routing and authorization: read options, dry run, then the verb.
  http::ServerResponse serve_resource(Route& route, http::ServerRequest& request, bool watching);
  void count_request(const std::string& route_key);
  http::ServerResponse handle_lab(http::ServerRequest& request);
  // The lab profile's kube.deny holds `rbac_key` ("verb group resource[/subresource]").
  bool denied(const std::string& rbac_key) const;
  // API Priority and Fairness: names on `response` the FlowSchema and priority level that classified a
  // request (a probe or not), by UID, as kube-apiserver does on every answer it queued.
  void name_flow(http::ServerResponse& response, bool probe) const;
  // POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews: answered from kube.deny (201, not stored).
  http::ServerResponse access_review(const std::string& body);
  bool authenticated(const http::ServerRequest& request) const;
  json stats_json() const;

  http::ServerResponse list(const Route& route, const http::ServerRequest& request);
  http::ServerResponse get(const Route& route);
  ApiResult create(Kind kind, const std::string& path_ns, const std::string& body, bool dry_run);
  ApiResult update(const Route& route, json object, bool dry_run);
  ApiResult patch(const Route& route, const http::ServerRequest& request, bool dry_run);
  ApiResult remove(const Route& route, const http::ServerRequest& request, bool dry_run);

  // ---- Watch (kube_watch.cpp) ----
  http::ServerResponse watch(const Route& route, const http::ServerRequest& request);

  // ---- Object helpers (ObjectPublisher) ----
  std::string new_uid() override;
  double now() const override;
  // Stores a new version of an existing object produced by `edit`; no-op (returns current) when nothing
  // changed; null when the object is gone.
  ObjectPtr modify(Kind kind, const std::string& ns, const std::string& name,
                   const std::function<void(json&)>& edit) override;
  // Fills uid, creationTimestamp, generation of a new object and stores it.
  ObjectPtr insert(Kind kind, json object) override;
  ObjectPtr remove(Kind kind, const std::string& ns, const std::string& name) override;

  // ---- Controllers: what a created, updated or deleted object sets going ----
  void after_create(Kind kind, const ObjectPtr& object);
  void after_update(Kind kind, const ObjectPtr& before, const ObjectPtr& after) override;
  void after_delete(Kind kind, const std::string& ns, const std::string& name) override;
};

}  // namespace bootstorm::sim::kube
