// ClusterSync's life: connecting, seeding the server with what the lab's front starts with, starting both
// directions, telling when it is ready, stopping. The directions are upstream.cpp and downstream.cpp.
#include "simulator/attach/cluster_sync.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "common/async/for_each.hpp"
#include "common/log.hpp"
#include "protocol/kube/object_calls.hpp"
#include "simulator/kube/kube_front.hpp"

namespace bootstorm::sim::attach {
namespace {

namespace asio = boost::asio;
using json = nlohmann::json;

std::string key_of(Kind kind, const std::string& ns, const std::string& name) {
  return std::to_string(static_cast<std::size_t>(kind)) + "/" + ns + "/" + name;
}

}  // namespace

ClusterSync::ClusterSync(kube::KubeFront& front, model::Lab& lab,
                         std::unique_ptr<bootstorm::kube::KubeApi> api, asio::any_io_executor executor,
                         ClusterSyncOptions options)
    : front_(front),
      lab_(lab),
      api_(std::move(api)),
      executor_(std::move(executor)),
      options_(std::move(options)),
      writes_(executor_, options_.writes_in_flight),
      served_(static_cast<std::size_t>(Kind::count_), false) {}

ClusterSync::~ClusterSync() = default;

ClusterSync::Entry& ClusterSync::entry_for(Kind kind, const std::string& ns, const std::string& name) {
  auto [it, inserted] = entries_.try_emplace(key_of(kind, ns, name));
  if (inserted) {
    it->second.kind = kind;
    it->second.ns = ns;
    it->second.name = name;
  }
  return it->second;
}

void ClusterSync::start() {
  asio::co_spawn(
      executor_, [self = shared_from_this()]() { return self->run(); }, asio::detached);
}

asio::awaitable<void> ClusterSync::leave() {
  auto self = shared_from_this();
  if (!virt_api_ || stopped_) co_return;
  if (auto left = co_await unregister_virt_api(*api_); !left)
    spdlog::warn("lab attach: leaving {}: {}", api_->server(), left.error().what());
}

void ClusterSync::stop() {
  if (stopped_) return;
  stopped_ = true;
  cancel_.cancel();
  for (auto& queue : local_queues_) front_.store().unsubscribe(queue);
  local_queues_.clear();
  api_->close();
  if (virt_api_) virt_api_->stop();
  ready(Error{ErrorKind::cancelled, "lab attach stopped before it was ready", ""});
}

void ClusterSync::ready(Expected<void> outcome) {
  if (ready_told_) return;
  ready_told_ = true;
  if (outcome) {
    spdlog::info("lab attach: ready: the lab's controllers act through {}", api_->server());
  }
  if (options_.on_ready) options_.on_ready(std::move(outcome));
}

asio::awaitable<void> ClusterSync::run() {
  auto self = shared_from_this();
  const bootstorm::kube::ConnectProbe probe{"/api/v1/nodes", "Nodes",
                                            "the attach user must be able to list Nodes"};
  if (auto connected = co_await api_->connect(probe); !connected) {
    ready(connected.error());
    co_return;
  }
  // Which kinds the server serves: a cluster without Forklift or the snapshot API lacks some.
  for (std::size_t i = 0; i < served_.size() && !stopped_; ++i) {
    const auto kind = static_cast<Kind>(i);
    if (role_of(kind) == Role::none) continue;
    // Named first, here and below: g++ 12 miscompiles temporaries inside a co_await expression.
    const std::string path = collection_path(kind, "") + "?limit=1";
    const std::string what = "listing " + kube::resource_type(kind).plural;
    auto listed = co_await bootstorm::kube::get_object(*api_, path, what);
    if (!listed) {
      ready(listed.error());
      co_return;
    }
    served_[i] = listed->has_value();
    if (!served_[i])
      spdlog::info("lab attach: the server does not serve {}; the lab leaves them out",
                   kube::resource_type(kind).plural);
  }
  if (stopped_) co_return;
  subscribe_local();
  if (auto seeded = co_await seed(); !seeded) {
    ready(seeded.error());
    co_return;
  }
  seeded_ = true;
  // virt-api, before anything is listed: a client may start a VirtualMachine as soon as the lab is ready.
  auto front_proxy_ca = co_await read_front_proxy_ca(*api_);
  if (!front_proxy_ca) {
    ready(front_proxy_ca.error());
    co_return;
  }
  auto virt_api = VirtApi::start(executor_, front_.handler(), *front_proxy_ca, kube::kKubeVirtNamespace);
  if (!virt_api) {
    ready(virt_api.error());
    co_return;
  }
  virt_api_ = std::move(*virt_api);
  if (auto registered = co_await register_virt_api(*api_, *virt_api_, options_.virt_api_wait); !registered) {
    ready(registered.error());
    co_return;
  }
  for (std::size_t i = 0; i < served_.size(); ++i) {
    const auto kind = static_cast<Kind>(i);
    if (!served_[i] || !watched(kind)) continue;
    ++lists_pending_;
    asio::co_spawn(
        executor_, [self, kind]() { return self->mirror(kind); }, asio::detached);
  }
  if (lists_pending_ == 0) ready({});
}

asio::awaitable<Expected<void>> ClusterSync::seed() {
  kube::ObjectStore& store = front_.store();
  // What no controller changes goes first, one by one: the namespaces the rest live in.
  for (std::size_t i = 0; i < served_.size(); ++i) {
    const auto kind = static_cast<Kind>(i);
    if (!served_[i] || role_of(kind) != Role::mirror) continue;
    for (const auto& object : store.list(kind, "").items) {
      const json body = for_server(kind, object->object, uids_);
      const std::string name = body["metadata"].value("name", "");
      const std::string ns = body["metadata"].value("namespace", "");
      const std::string collection = collection_path(kind, ns);
      const std::string what = "creating " + describe(kind, ns, name);
      auto made = co_await bootstorm::kube::create_object(*api_, collection, body, what);
      if (!made && made.error().kind != ErrorKind::conflict) co_return made.error();
    }
  }
  // Then everything the controllers own or answer for, through the same writes as later changes.
  std::vector<Entry*> seeded;
  for (std::size_t i = 0; i < served_.size(); ++i) {
    const auto kind = static_cast<Kind>(i);
    const Role role = role_of(kind);
    if (!served_[i] || kind == Kind::events || (role != Role::client && role != Role::controller)) continue;
    for (const auto& object : store.list(kind, "").items) {
      const json& meta = object->object["metadata"];
      Entry& entry = entry_for(kind, meta.value("namespace", ""), meta.value("name", ""));
      entry.dirty = true;
      seeded.push_back(&entry);
    }
  }
  auto seed_one = [this](Entry* entry) -> asio::awaitable<void> {
    if (entry->in_flight) co_return;
    co_await flush(*entry);
  };
  const std::string seeding = "seeding the server";
  co_await async::bounded_for_each(seeded, options_.writes_in_flight, seed_one, seeding);
  for (const Entry* entry : seeded) {
    if (!entry->remote && !stopped_) {
      co_return Error{ErrorKind::api,
                      "lab attach could not create " + describe(entry->kind, entry->ns, entry->name) +
                          " on " + api_->server() + " (the log says why)",
                      "check that the server serves the lab's CRDs (tests/support/realapi/crds) and that the "
                      "attach user may create them"};
    }
  }
  co_return Expected<void>{};
}

json ClusterSync::stats_json() const {
  const http::ApiStats api = api_->stats();
  return {{"server", api_->server()},
          {"requests", api.requests},
          {"throttled", api.throttled},
          {"statuses", api.statuses},
          {"warnings", api.warnings},
          {"creates", stats_.creates},
          {"updates", stats_.updates},
          {"statusUpdates", stats_.status_updates},
          {"deletes", stats_.deletes},
          {"conflicts", stats_.conflicts},
          {"failures", stats_.failures},
          {"givenUp", stats_.given_up},
          {"serverEvents", stats_.server_events},
          {"clientChanges", stats_.client_changes},
          {"refused", stats_.refused},
          {"milestonesVisible", stats_.milestones_visible},
          {"objects", entries_.size()}};
}

}  // namespace bootstorm::sim::attach
