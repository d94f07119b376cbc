// Up: what the lab's controllers store, written to the server. Each object has at most one flush running,
// which writes the latest local version and loops while the object changed meanwhile, so that a boot's
// several status changes in quick succession cost as many writes as the server's answers allow, not one per
// change.
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <chrono>

#include "common/async/sleep.hpp"
#include "common/log.hpp"
#include "protocol/kube/list_watch.hpp"
#include "protocol/kube/object_calls.hpp"
#include "simulator/attach/cluster_sync.hpp"
#include "simulator/kube/kube_front.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::attach {
namespace {

namespace asio = boost::asio;
using json = nlohmann::json;

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

void ClusterSync::subscribe_local() {
  kube::ObjectStore& store = front_.store();
  const std::uint64_t from = store.current_resource_version();
  std::weak_ptr<ClusterSync> weak = weak_from_this();
  for (std::size_t i = 0; i < served_.size(); ++i) {
    const auto kind = static_cast<Kind>(i);
    const Role role = role_of(kind);
    if (!served_[i] || (role != Role::client && role != Role::controller)) continue;
    auto subscription = store.subscribe(kind, "", from);
    // Called on the lab's thread by every store write: one drain of all the queues is posted at a time.
    subscription.queue->set_waker([weak, executor = executor_] {
      auto self = weak.lock();
      if (!self || self->drain_posted_) return;
      self->drain_posted_ = true;
      asio::post(executor, [weak] {
        if (auto self = weak.lock()) self->drain_local();
      });
    });
    local_queues_.push_back(subscription.queue);
  }
}

void ClusterSync::drain_local() {
  drain_posted_ = false;
  if (stopped_) return;
  for (const auto& queue : local_queues_) {
    for (const kube::WatchEvent& event : queue->take()) on_local(event);
  }
}

void ClusterSync::on_local(const kube::WatchEvent& event) {
  const json& meta = event.object->object["metadata"];
  Entry& entry = entry_for(event.kind, meta.value("namespace", ""), meta.value("name", ""));
  if (event.type == kube::EventType::added) entry.gone = false;
  if (event.kind == Kind::virtual_machine_instances && event.type != kube::EventType::deleted) {
    // A version the server already accepted (its write read the store before this event was drained).
    if (event.resource_version <= entry.written_version) {
      stamp_visible(entry, {event.resource_version});
    } else {
      entry.local_versions.push_back(event.resource_version);
    }
  }
  entry.dirty = true;
  schedule(entry);
}

void ClusterSync::schedule(Entry& entry) {
  if (entry.in_flight || stopped_ || !seeded_) return;
  asio::co_spawn(
      executor_, [self = shared_from_this(), &entry]() { return self->flush(entry); }, asio::detached);
}

asio::awaitable<void> ClusterSync::flush(Entry& entry) {
  auto self = shared_from_this();
  entry.in_flight = true;
  while (entry.dirty && !stopped_) {
    entry.dirty = false;
    std::vector<std::uint64_t> versions = std::move(entry.local_versions);
    entry.local_versions.clear();
    Expected<void> pushed;
    {
      auto permit = co_await async::acquire(writes_);
      if (stopped_) break;
      pushed = co_await push(entry);
    }
    if (pushed) {
      entry.failures = 0;
      entry.conflicts = 0;
      // Versions stored while the write was on its way, and read by it, were accepted with it.
      std::erase_if(entry.local_versions, [&](std::uint64_t version) {
        if (version > entry.written_version) return false;
        versions.push_back(version);
        return true;
      });
      stamp_visible(entry, versions);
      continue;
    }
    entry.local_versions.insert(entry.local_versions.begin(), versions.begin(), versions.end());
    entry.dirty = true;
    if (stopped_ || pushed.error().kind == ErrorKind::cancelled) break;
    if (pushed.error().kind == ErrorKind::conflict) {
      // Someone wrote the object since the version this write named: read theirs, write ours again.
      ++stats_.conflicts;
      if (auto read = co_await refresh(entry); !read) pushed = read.error();
      if (++entry.conflicts <= 3 && pushed) continue;
    }
    if (pushed.error().kind == ErrorKind::not_found && entry.remote) {
      // A client deleted it on the server: its deletion comes down the watch; nothing to write until then.
      entry.remote.reset();
      entry.gone = true;
      continue;
    }
    ++stats_.failures;
    if (++entry.failures >= options_.max_failures) {
      ++stats_.given_up;
      spdlog::warn("lab attach: gave up writing {} to {} after {} attempts: {}",
                   describe(entry.kind, entry.ns, entry.name), api_->server(), entry.failures,
                   pushed.error().what());
      entry.failures = 0;
      entry.dirty = false;
      entry.local_versions.clear();
      break;
    }
    spdlog::debug("lab attach: writing {} failed (attempt {}): {}",
                  describe(entry.kind, entry.ns, entry.name), entry.failures, pushed.error().what());
    const auto backoff = bootstorm::kube::retry_backoff(entry.failures);
    co_await async::sleep_for(backoff, cancel_);
  }
  entry.in_flight = false;
}

asio::awaitable<Expected<void>> ClusterSync::push(Entry& entry) {
  kube::ObjectPtr local = front_.store().get(entry.kind, entry.ns, entry.name);
  if (!local) co_return co_await push_deletion(entry);
  const std::uint64_t local_version = local->resource_version;
  const double sent_at = wall_now();
  const std::string what = describe(entry.kind, entry.ns, entry.name);
  const std::string path = object_path(entry.kind, entry.ns, entry.name);
  if (!entry.remote) {
    if (entry.gone) co_return Expected<void>{};
    if (auto made = co_await create_remote(entry, local->object); !made) co_return made.error();
  } else {
    const json main = main_part(entry.kind, local->object, uids_);
    if (main != entry.pushed_main) {
      json body = for_server(entry.kind, local->object, uids_);
      body["metadata"]["resourceVersion"] = (*entry.remote)["metadata"].value("resourceVersion", "");
      if (server_status_subresource(entry.kind)) body.erase("status");
      const std::string doing = "updating " + what;
      auto put = co_await bootstorm::kube::replace_object(*api_, path, body, doing);
      if (!put) co_return put.error();
      ++stats_.updates;
      note_remote(entry, *put);
      entry.pushed_main = main;
    }
  }
  if (server_status_subresource(entry.kind)) {
    const json status = status_part(local->object);
    if (!status.is_null() && status != entry.pushed_status) {
      if (!entry.remote) co_return Expected<void>{};  // deleted on the server meanwhile: it comes down
      json body = *entry.remote;
      body["status"] = status;
      const std::string status_path = path + "/status";
      const std::string doing = "updating the status of " + what;
      auto put = co_await bootstorm::kube::replace_object(*api_, status_path, body, doing);
      if (!put) co_return put.error();
      ++stats_.status_updates;
      note_remote(entry, *put);
      entry.pushed_status = status;
    }
  }
  entry.written_version = std::max(entry.written_version, local_version);
  entry.sent_at = sent_at;
  entry.accepted_at = wall_now();
  co_return Expected<void>{};
}

asio::awaitable<Expected<void>> ClusterSync::create_remote(Entry& entry, const json& local) {
  const std::string what = describe(entry.kind, entry.ns, entry.name);
  json body = for_server(entry.kind, local, uids_);
  if (server_status_subresource(entry.kind)) body.erase("status");
  const std::string collection = collection_path(entry.kind, entry.ns);
  const std::string doing = "creating " + what;
  auto made = co_await bootstorm::kube::create_object(*api_, collection, body, doing);
  if (!made) {
    if (made.error().kind != ErrorKind::conflict) co_return made.error();
    // It exists already (a lab attached before): adopt it. A client's object keeps what the server holds,
    // which comes down to the controllers; the controllers' own is overwritten with the lab's.
    if (auto read = co_await refresh(entry); !read) co_return read.error();
    if (!entry.remote) co_return Error{ErrorKind::conflict, what + " was created and deleted meanwhile", ""};
    if (role_of(entry.kind) == Role::client) {
      ++stats_.client_changes;
      if (auto refused = front_.client_updated(entry.kind, *entry.remote)) ++stats_.refused;
      if (auto now = front_.store().get(entry.kind, entry.ns, entry.name))
        entry.pushed_main = main_part(entry.kind, now->object, uids_);
    } else {
      entry.pushed_main = json();
    }
    entry.pushed_status = json();
    entry.dirty = true;
    co_return Expected<void>{};
  }
  ++stats_.creates;
  const std::string local_uid = local["metadata"].value("uid", "");
  const std::string server_uid = (*made)["metadata"].value("uid", "");
  if (!local_uid.empty() && !server_uid.empty()) uids_[local_uid] = server_uid;
  note_remote(entry, *made);
  entry.pushed_main = main_part(entry.kind, local, uids_);
  entry.pushed_status = json();
  co_return Expected<void>{};
}

asio::awaitable<Expected<void>> ClusterSync::push_deletion(Entry& entry) {
  if (!entry.remote) co_return Expected<void>{};
  // A copy: the server's deletion may come down the watch (and reset entry.remote) while a write is out.
  json remote = *entry.remote;
  const std::string what = describe(entry.kind, entry.ns, entry.name);
  const std::string path = object_path(entry.kind, entry.ns, entry.name);
  // The lab's controllers are done with it: their finalizers come off, or the server keeps it terminating.
  // A PVC's protection is the PVC protection controller's, which takes it off once no pod uses the claim: the
  // lab's pods are its VMs, and the claim went here because its VM or DataVolume did.
  const json& written = entry.pushed_main.is_object() ? entry.pushed_main : json::object();
  json ours =
      written.contains("metadata") ? written["metadata"].value("finalizers", json::array()) : json::array();
  if (entry.kind == Kind::persistent_volume_claims) ours.push_back("kubernetes.io/pvc-protection");
  // The garbage collector's, whose part the lab's played: a foreground deletion ends once the dependants are
  // gone from the server too (the last one's deletion flushes this object again).
  const json finalizers = remote["metadata"].value("finalizers", json::array());
  ours.push_back("orphan");
  if (std::find(finalizers.begin(), finalizers.end(), "foregroundDeletion") != finalizers.end()) {
    if (has_dependants(remote["metadata"].value("uid", ""))) co_return Expected<void>{};
    ours.push_back("foregroundDeletion");
  }
  json kept = json::array();
  for (const auto& finalizer : finalizers)
    if (std::find(ours.begin(), ours.end(), finalizer) == ours.end()) kept.push_back(finalizer);
  if (kept.size() != finalizers.size()) {
    json body = remote;
    body["metadata"]["finalizers"] = kept;
    const std::string doing = "removing the lab's finalizers of " + what;
    auto put = co_await bootstorm::kube::replace_object(*api_, path, body, doing);
    if (!put) co_return put.error();
    note_remote(entry, *put);
    remote = *put;
  }
  if (!remote["metadata"].contains("deletionTimestamp")) {
    const std::string doing = "deleting " + what;
    auto deleted = co_await bootstorm::kube::delete_object(*api_, path, doing);
    if (!deleted) co_return deleted.error();
    ++stats_.deletes;
  }
  entry.remote.reset();
  entry.gone = true;
  entry.pushed_main = json();
  entry.pushed_status = json();
  for (const auto& owner : remote["metadata"].value("ownerReferences", json::array())) {
    // An owner deleted in the foreground may have been waiting for this one.
    if (Entry* waiting = entry_of_uid(owner.value("uid", "")); waiting && waiting->remote) {
      waiting->dirty = true;
      schedule(*waiting);
    }
  }
  co_return Expected<void>{};
}

bool ClusterSync::has_dependants(const std::string& uid) const {
  if (uid.empty()) return false;
  for (const auto& [key, other] : entries_) {
    if (!other.remote) continue;
    const json& meta = (*other.remote)["metadata"];
    auto owners = meta.find("ownerReferences");
    if (owners == meta.end() || !owners->is_array()) continue;
    for (const auto& owner : *owners)
      if (owner.value("uid", "") == uid) return true;
  }
  return false;
}

ClusterSync::Entry* ClusterSync::entry_of_uid(const std::string& uid) {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? nullptr : it->second;
}

asio::awaitable<Expected<void>> ClusterSync::refresh(Entry& entry) {
  // Named first: g++ 12 miscompiles temporaries inside a co_await expression.
  const std::string path = object_path(entry.kind, entry.ns, entry.name);
  const std::string doing = "reading " + describe(entry.kind, entry.ns, entry.name);
  auto read = co_await bootstorm::kube::get_object(*api_, path, doing);
  if (!read) co_return read.error();
  if (!*read) {
    entry.remote.reset();
    co_return Expected<void>{};
  }
  entry.remote_version = 0;  // what the server answers now is the newest there is
  note_remote(entry, **read);
  co_return Expected<void>{};
}

void ClusterSync::note_remote(Entry& entry, const json& object) {
  const std::uint64_t version = resource_version_of(object);
  if (entry.remote && version < entry.remote_version) return;
  json copy = object;
  copy["apiVersion"] = kube::resource_type(entry.kind).api_version();
  copy["kind"] = kube::resource_type(entry.kind).kind;
  copy["metadata"].erase("managedFields");
  if (const std::string uid = copy["metadata"].value("uid", ""); !uid.empty()) by_uid_[uid] = &entry;
  entry.remote = std::move(copy);
  entry.remote_version = version;
}

void ClusterSync::stamp_visible(Entry& entry, const std::vector<std::uint64_t>& local_versions) {
  if (entry.kind != Kind::virtual_machine_instances || local_versions.empty()) return;
  for (const auto& [vm, milestone] : front_.take_milestones(local_versions)) {
    lab_.note_milestone_visible(vm, milestone, entry.sent_at, entry.accepted_at,
                                entry.remote_version ? std::to_string(entry.remote_version) : std::string{});
    ++stats_.milestones_visible;
  }
}

}  // namespace bootstorm::sim::attach
