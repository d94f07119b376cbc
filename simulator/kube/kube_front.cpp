// HTTP layer of the Kubernetes front: authentication, fault injection, the /_lab endpoints, the objects'
// bookkeeping (uids, stats) and the wiring of the controllers. Routing and discovery live in kube_routes.cpp,
// the generic REST verbs in kube_rest.cpp, watches in kube_watch.cpp, kind-specific behaviour in the
// controllers (detail/).
#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cmath>
#include <cstring>

#include "common/log.hpp"
#include "simulator/kube/detail/front_cluster_state.hpp"
#include "simulator/kube/detail/seed_objects.hpp"
#include "simulator/kube/forklift_controller.hpp"
#include "simulator/kube/kube_front_impl.hpp"

namespace bootstorm::sim::kube {

namespace {

namespace asio = boost::asio;

}  // namespace

http::ServerResponse json_response(int status, std::string body) {
  http::ServerResponse response;
  response.status = status;
  response.headers.emplace_back("Content-Type", "application/json");
  response.body = std::move(body);
  return response;
}

http::ServerResponse error_response(const ApiError& error) {
  return json_response(error.code, error.status.dump());
}

bool KubeFront::Impl::authenticated(const http::ServerRequest& request) const {
  if (!request.client_cert_subject.empty()) return true;
  auto header = request.header("Authorization");
  if (!header) return false;
  std::string_view value = *header;
  constexpr std::string_view kBearer = "Bearer ";
  if (value.size() <= kBearer.size()) return false;
  for (std::size_t i = 0; i < kBearer.size() - 1; ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) !=
        std::tolower(static_cast<unsigned char>(kBearer[i]))) {
      return false;
    }
  }
  if (value[kBearer.size() - 1] != ' ') return false;
  return tokens.count(std::string(value.substr(kBearer.size()))) > 0;
}

asio::awaitable<http::ServerResponse> KubeFront::Impl::handle(http::ServerRequest& request) {
  auto self = shared_from_this();
  if (request.path.starts_with("/_lab/")) co_return handle_lab(request);
  ++stats.requests;
  if (!alive) co_return error_response(server_fault(503));
  if (lab.front_fault_applies(request.path)) {
    const auto& faults = lab.faults();
    double latency_ms = faults.latency_ms;
    if (faults.latency_jitter_ms > 0) latency_ms += faults.latency_jitter_ms * lab.random_uniform();
    if (latency_ms > 0) {
      ++stats.injected_latency;
      asio::steady_timer timer(co_await asio::this_coro::executor);
      timer.expires_after(std::chrono::microseconds(static_cast<std::int64_t>(latency_ms * 1000)));
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      if (!alive) co_return error_response(server_fault(503));
    }
    if (lab.faults().error_rate > 0 && lab.random_uniform() < lab.faults().error_rate) {
      count_request(request.method + " " + request.path);
      ++stats.injected_errors;
      ++stats.errors;
      http::ServerResponse refused = error_response(server_fault(lab.faults().error_status));
      // APF's rejection: the request was not handled, come back in a second.
      if (refused.status == 429) refused.headers.emplace_back("Retry-After", "1");
      name_flow(refused, false);
      co_return refused;
    }
  }
  static const std::set<std::string> kPublic = {"/version", "/healthz", "/livez", "/readyz"};
  const bool probe = kPublic.count(request.path) > 0;
  if (!probe && !authenticated(request)) {
    count_request(request.method + " " + request.path);
    ++stats.unauthorized;
    ++stats.errors;
    co_return error_response(unauthorized());
  }
  std::string route_key;
  http::ServerResponse response = route_request(request, route_key);
  name_flow(response, probe);
  count_request(request.method + " " + (route_key.empty() ? request.path : route_key));
  if (request.method == "PUT" && route_key == "virtualmachines/start")
    stats.start_connections.insert(request.connection_id);
  if (response.status >= 400) ++stats.errors;
  co_return response;
}

void KubeFront::Impl::name_flow(http::ServerResponse& response, bool probe) const {
  auto uid_of = [&](Kind kind, const char* name) -> std::string {
    ObjectPtr object = store.get(kind, "", name);
    return object ? object->object["metadata"].value("uid", "") : "";
  };
  const std::string flow_schema = uid_of(Kind::flow_schemas, probe ? kProbesFlowSchema : kGlobalDefault);
  const std::string level =
      uid_of(Kind::priority_level_configurations, probe ? kExemptPriorityLevel : kGlobalDefault);
  if (!flow_schema.empty()) response.headers.emplace_back("X-Kubernetes-PF-FlowSchema-UID", flow_schema);
  if (!level.empty()) response.headers.emplace_back("X-Kubernetes-PF-PriorityLevel-UID", level);
}

bool KubeFront::Impl::denied(const std::string& rbac_key) const {
  const auto& deny = lab.spec().kube.deny;
  return std::find(deny.begin(), deny.end(), rbac_key) != deny.end();
}

http::ServerResponse KubeFront::Impl::access_review(const std::string& body) {
  json review = json::parse(body, nullptr, false);
  if (!review.is_object() || !review.contains("spec") || !review["spec"].is_object())
    return error_response(bad_request("SelfSubjectAccessReview needs a spec"));
  const json& spec = review["spec"];
  bool allowed = true;
  std::string reason;
  if (spec.contains("resourceAttributes") && spec["resourceAttributes"].is_object()) {
    const json& a = spec["resourceAttributes"];
    const std::string group = a.value("group", "");
    const std::string sub = a.value("subresource", "");
    const std::string key = a.value("verb", "") + " " + (group.empty() ? "core" : group) + " " +
                            a.value("resource", "") + (sub.empty() ? "" : "/" + sub);
    allowed = !denied(key);
    if (!allowed) reason = "the lab profile denies " + key + " (kube.deny)";
  }
  json status = {{"allowed", allowed}};
  if (!allowed) {
    status["denied"] = true;
    status["reason"] = reason;
  }
  json answer = {{"apiVersion", "authorization.k8s.io/v1"},
                 {"kind", "SelfSubjectAccessReview"},
                 {"metadata", {{"creationTimestamp", nullptr}}},
                 {"spec", spec},
                 {"status", status}};
  return json_response(201, answer.dump());
}

http::ServerResponse KubeFront::Impl::handle_lab(http::ServerRequest& request) {
  if (request.path == "/_lab/truth" && request.method == "GET") return json_response(200, lab.truth_json());
  if (request.path == "/_lab/stats" && request.method == "GET")
    return json_response(200, stats_json().dump());
  if (request.path == "/_lab/faults") {
    if (request.method == "GET") return json_response(200, model::faults_to_json(lab.faults()));
    if (request.method == "POST" || request.method == "PUT" || request.method == "PATCH") {
      auto patched = model::patch_faults_json(lab.faults(), request.body);
      if (!patched) return error_response(bad_request(patched.error().what()));
      if (lab.faults().force_gone_rate >= 1.0) store.compact_all();
      return json_response(200, model::faults_to_json(lab.faults()));
    }
    return error_response(method_not_allowed());
  }
  return error_response(path_not_found());
}

void KubeFront::Impl::count_request(const std::string& route_key) {
  ++stats.by_route[route_key];
  const auto second = static_cast<std::int64_t>(std::floor(lab.now()));
  if (second != stats.current_second) {
    stats.requests_last_second = second == stats.current_second + 1 ? stats.current_second_count : 0;
    stats.current_second = second;
    stats.current_second_count = 0;
  }
  ++stats.current_second_count;
  stats.peak_requests_per_second = std::max(stats.peak_requests_per_second, stats.current_second_count);
}

std::string KubeFront::Impl::new_uid() {
  std::uniform_int_distribution<std::uint32_t> byte(0, 255);
  unsigned char b[16];
  for (auto& x : b) x = static_cast<unsigned char>(byte(rng));
  b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);
  return fmt::format(
      "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

double KubeFront::Impl::now() const {
  return lab.now();
}

ObjectPtr KubeFront::Impl::modify(Kind kind, const std::string& ns, const std::string& name,
                                  const std::function<void(json&)>& edit) {
  auto current = store.get(kind, ns, name);
  if (!current) return nullptr;
  json next = current->object;
  edit(next);
  if (next == current->object) return current;
  return store.put(kind, std::move(next));
}

ObjectPtr KubeFront::Impl::insert(Kind kind, json object) {
  json& meta = object["metadata"];
  if (!meta.contains("uid")) meta["uid"] = new_uid();
  if (!meta.contains("creationTimestamp")) meta["creationTimestamp"] = format_time(now());
  if (kind != Kind::events && kind != Kind::namespaces && kind != Kind::nodes &&
      !meta.contains("generation")) {
    meta["generation"] = 1;
  }
  return store.put(kind, std::move(object));
}

ObjectPtr KubeFront::Impl::remove(Kind kind, const std::string& ns, const std::string& name) {
  return store.remove(kind, ns, name);
}

void KubeFront::Impl::after_create(Kind kind, const ObjectPtr& object) {
  std::string ns = object->object["metadata"].value("namespace", "");
  std::string name = object->object["metadata"].value("name", "");
  if (forklift) forklift->on_object_changed(kind, ns, name);
  if (kind == Kind::virtual_machines) {
    vm_controller.reconcile(ns, name);
  } else if (kind == Kind::data_volumes) {
    cdi.start(ns, name);
  }
}

void KubeFront::Impl::after_update(Kind kind, const ObjectPtr& before, const ObjectPtr& after) {
  (void)before;
  if (forklift) {
    forklift->on_object_changed(kind, after->object["metadata"].value("namespace", ""),
                                after->object["metadata"].value("name", ""));
  }
  if (kind == Kind::virtual_machines) {
    vm_controller.reconcile(after->object["metadata"].value("namespace", ""),
                            after->object["metadata"].value("name", ""));
  }
}

void KubeFront::Impl::after_delete(Kind kind, const std::string& ns, const std::string& name) {
  if (forklift) forklift->on_object_deleted(kind, ns, name);
}

json KubeFront::Impl::stats_json() const {
  // Same core keys as the vCenter front's /_lab/stats, plus the Kubernetes specifics (watches, objects).
  json objects = json::object();
  for (std::size_t i = 0; i < resource_types().size(); ++i) {
    objects[resource_types()[i].plural] = store.count(static_cast<Kind>(i));
  }
  const auto second = static_cast<std::int64_t>(std::floor(lab.now()));
  std::uint64_t last = stats.requests_last_second;
  if (second == stats.current_second + 1) last = stats.current_second_count;
  if (second > stats.current_second + 1) last = 0;
  // Requests that may change the platform: every method but GET and HEAD (the dry-run interlock counts them).
  std::uint64_t mutating = 0;
  for (const auto& [route, count] : stats.by_route)
    if (!route.starts_with("GET ") && !route.starts_with("HEAD ") && route != "POST selfsubjectaccessreviews")
      mutating += count;
  return {{"requestsTotal", stats.requests},
          {"mutatingRequests", mutating},
          {"requestsLastSecond", last},
          {"requestsThisSecond", second == stats.current_second ? stats.current_second_count : 0},
          {"peakRequestsPerSecond", stats.peak_requests_per_second},
          {"faultsInjected",
           stats.injected_errors + stats.injected_latency + stats.forced_gone + stats.watches_dropped},
          {"vms", lab.vm_count()},
          {"startConnections", stats.start_connections.size()},
          {"byRoute", stats.by_route},
          {"byAuthorization", stats.by_authorization},
          {"errors", stats.errors},
          {"unauthorized", stats.unauthorized},
          {"injectedErrors", stats.injected_errors},
          {"injectedLatency", stats.injected_latency},
          {"watches",
           {{"opened", stats.watches_opened},
            {"active", stats.watches_active},
            {"dropped", stats.watches_dropped},
            {"gone", stats.watches_gone},
            {"forcedGone", stats.forced_gone},
            {"eventsSent", stats.watch_events_sent},
            {"bookmarksSent", stats.bookmarks_sent}}},
          {"objects", objects},
          {"resourceVersion", std::to_string(store.current_resource_version())}};
}

KubeFront::Impl::Impl(model::Lab& lab_, KubeFrontOptions options_)
    : lab(lab_),
      options(std::move(options_)),
      store(ObjectStore::Options{.history_events = options.history_events,
                                 .history_events_per_object = options.history_events_per_object,
                                 .history_age = options.history_age,
                                 .max_pending_per_watch = 200000}),
      rng(lab_.spec().seed * 0x9E3779B97F4A7C15ULL + 17),
      events(store, *this, options.max_events),
      cdi(store, lab, *this, events, lifetime, options,
          [this](const std::string& ns, const std::string& name) { vm_controller.reconcile(ns, name); }),
      vm_controller(store, lab, *this, events, lifetime, cdi),
      virt_handler(store, lab, *this, events, vm_controller, rng),
      admission(store, lab, vm_controller),
      garbage_collector(store, lab, *this, events, lifetime, vm_controller, cdi),
      subresources(store, *this, vm_controller) {
  for (const auto& token : options.tokens) {
    if (token.empty()) continue;
    tokens.insert(token);
    log::register_secret(token);
  }
  if (!lab.spec().kube.token.empty()) {
    tokens.insert(lab.spec().kube.token);
    log::register_secret(lab.spec().kube.token);
  }
}

void KubeFront::Impl::start() {
  std::weak_ptr<Impl> weak = shared_from_this();
  subscription = lab.subscribe([weak](const model::VmEvent& event) {
    if (auto self = weak.lock(); self && self->alive) self->virt_handler.on_lab_event(event);
  });
  seed_objects(store, lab, *this, options.monitoring_route_host);
  forklift = make_forklift_controller(make_front_cluster_state(*this));
}

void KubeFront::Impl::shutdown() {
  if (!alive) return;
  alive = false;
  lifetime.end();
  lab.unsubscribe(subscription);
  if (forklift) forklift->shutdown();
}

KubeFront::KubeFront(model::Lab& lab, KubeFrontOptions options)
    : impl_(std::make_shared<Impl>(lab, std::move(options))) {
  impl_->start();
}

KubeFront::~KubeFront() {
  impl_->shutdown();
}

http::Handler KubeFront::handler() {
  std::shared_ptr<Impl> impl = impl_;
  return [impl](http::ServerRequest& request) { return impl->handle(request); };
}

nlohmann::json KubeFront::stats() const {
  return impl_->stats_json();
}

ObjectStore& KubeFront::store() {
  return impl_->store;
}

http::Handler make_kube_handler(model::Lab& lab, KubeFrontOptions options) {
  auto front = std::make_shared<KubeFront>(lab, std::move(options));
  auto handler = front->handler();
  return [front, handler](http::ServerRequest& request) { return handler(request); };
}

}  // namespace bootstorm::sim::kube
