// Down: the server's objects, one list + watch per watched kind, handed to the lab's front. A client's
// change reaches the controllers once; the lab's own writes coming back are recognised (the same main part
// as the version before, or a resourceVersion no newer than a write's answer) and go no further.
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <set>

#include "common/log.hpp"
#include "protocol/kube/list_watch.hpp"
#include "simulator/attach/cluster_sync.hpp"
#include "simulator/kube/kube_front.hpp"

namespace bootstorm::sim::attach {
namespace {

namespace asio = boost::asio;
using json = nlohmann::json;
using ServerEvent = bootstorm::kube::WatchEvent;

}  // namespace

asio::awaitable<void> ClusterSync::mirror(Kind kind) {
  auto self = shared_from_this();
  const kube::ResourceType& type = kube::resource_type(kind);
  bootstorm::kube::ListWatchRequest request;
  request.collection = collection_path(kind, "");
  request.what = type.kind + " objects";
  request.page_size = 500;
  bool listed = false;
  bootstorm::kube::ListWatchHandlers handlers;
  handlers.on_list = [this, kind, &listed](const std::vector<json>& items, bootstorm::kube::ClientInstant,
                                           bool relist) {
    on_server_list(kind, items, relist);
    if (!listed) {
      listed = true;
      if (--lists_pending_ == 0) ready({});
    }
  };
  handlers.on_event = [this, kind](const ServerEvent& event, bootstorm::kube::ClientInstant, bool, double) {
    if (event.type == ServerEvent::Type::added || event.type == ServerEvent::Type::modified ||
        event.type == ServerEvent::Type::deleted) {
      on_server(kind, event.type, event.object);
    }
  };
  handlers.done = [this] { return stopped_; };
  auto watched =
      co_await bootstorm::kube::list_watch(*api_, std::move(request), std::move(handlers), cancel_);
  if (!watched && !stopped_) {
    spdlog::error("lab attach: watching {} on {} failed: {}", type.plural, api_->server(),
                  watched.error().what());
    ready(watched.error());
  }
}

void ClusterSync::on_server_list(Kind kind, const std::vector<json>& items, bool relist) {
  std::set<std::string> present;
  for (const json& item : items) {
    const json& meta = item["metadata"];
    present.insert(meta.value("namespace", "") + "/" + meta.value("name", ""));
    on_server(kind, ServerEvent::Type::added, item);
  }
  if (!relist) return;
  // What went while no watch was open: deleted.
  std::vector<json> gone;
  for (const auto& [key, entry] : entries_) {
    if (entry.kind == kind && entry.remote && !present.count(entry.ns + "/" + entry.name))
      gone.push_back(*entry.remote);
  }
  for (json& object : gone) on_server(kind, ServerEvent::Type::deleted, std::move(object));
}

void ClusterSync::on_server(Kind kind, ServerEvent::Type type, json object) {
  if (stopped_ || !object.is_object() || !object.contains("metadata")) return;
  ++stats_.server_events;
  const kube::ResourceType& resource = kube::resource_type(kind);
  object["apiVersion"] = resource.api_version();
  object["kind"] = resource.kind;
  object["metadata"].erase("managedFields");
  const std::string ns = object["metadata"].value("namespace", "");
  const std::string name = object["metadata"].value("name", "");
  Entry& entry = entry_for(kind, ns, name);
  const Role role = role_of(kind);
  if (type == ServerEvent::Type::deleted) {
    entry.remote.reset();
    entry.remote_version = 0;
    entry.gone = true;
    entry.pushed_main = json();
    entry.pushed_status = json();
    if (role == Role::mirror) {
      front_.mirror_removed(kind, ns, name);
    } else {
      ++stats_.client_changes;
      front_.client_deleted(kind, ns, name);
    }
    return;
  }
  const std::uint64_t version = resource_version_of(object);
  if (entry.remote && version <= entry.remote_version) return;
  std::optional<json> previous = std::move(entry.remote);
  if (const std::string uid = object["metadata"].value("uid", ""); !uid.empty()) by_uid_[uid] = &entry;
  entry.remote = object;
  entry.remote_version = version;
  entry.gone = false;
  if (role == Role::mirror) {
    front_.mirrored(kind, std::move(object));
    return;
  }
  if (object["metadata"].contains("deletionTimestamp")) {
    // A client deleted it and finalizers hold it: for the controllers it is gone, and the lab's finalizers
    // come off (the flush), as KubeVirt's controllers take theirs off.
    if (previous && (*previous)["metadata"].contains("deletionTimestamp")) return;
    ++stats_.client_changes;
    // Deleted with the Orphan propagation: the garbage collector takes the owner references off the
    // dependants and leaves them. The lab's does, and those changes go up as any other of the lab's.
    const json finalizers = object["metadata"].value("finalizers", json::array());
    const bool orphan = std::find(finalizers.begin(), finalizers.end(), "orphan") != finalizers.end();
    front_.client_deleted(kind, ns, name, orphan);
    entry.dirty = true;
    schedule(entry);
    return;
  }
  if (role == Role::controller) return;  // the lab's own object: what comes back is what it wrote
  if (previous && main_part(kind, *previous, uids_) == main_part(kind, object, uids_)) return;
  ++stats_.client_changes;
  const auto refused = previous ? front_.client_updated(kind, object) : front_.client_created(kind, object);
  if (refused) {
    ++stats_.refused;
    spdlog::warn("lab attach: the lab refuses {}: {}", describe(kind, ns, name), *refused);
  }
  if (auto local = front_.store().get(kind, ns, name))
    entry.pushed_main = main_part(kind, local->object, uids_);
}

}  // namespace bootstorm::sim::attach
