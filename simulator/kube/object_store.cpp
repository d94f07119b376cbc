#include "simulator/kube/object_store.hpp"

#include <algorithm>

namespace bootstorm::sim::kube {

const char* to_string(EventType type) {
  switch (type) {
    case EventType::added:
      return "ADDED";
    case EventType::modified:
      return "MODIFIED";
    case EventType::deleted:
      return "DELETED";
  }
  return "ERROR";
}

void WatchQueue::push(const WatchEvent& event) {
  std::function<void()> waker;
  {
    std::lock_guard lock(mutex_);
    if (closed_ || overflowed_) return;
    if (pending_.size() >= max_pending_) {
      overflowed_ = true;
      pending_.clear();
    } else {
      pending_.push_back(event);
    }
    waker = waker_;
  }
  if (waker) waker();
}

std::deque<WatchEvent> WatchQueue::take() {
  std::lock_guard lock(mutex_);
  std::deque<WatchEvent> out;
  out.swap(pending_);
  return out;
}

void WatchQueue::set_waker(std::function<void()> waker) {
  std::lock_guard lock(mutex_);
  waker_ = std::move(waker);
}

bool WatchQueue::overflowed() const {
  std::lock_guard lock(mutex_);
  return overflowed_;
}

void WatchQueue::close() {
  std::function<void()> waker;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    pending_.clear();
    waker = waker_;
  }
  if (waker) waker();
}

bool WatchQueue::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

ObjectStore::ObjectStore() : ObjectStore(Options{}) {}

ObjectStore::ObjectStore(Options options)
    : options_(options),
      objects_(static_cast<std::size_t>(Kind::count_)),
      watchers_(static_cast<std::size_t>(Kind::count_)) {}

std::uint64_t ObjectStore::current_resource_version() const {
  std::lock_guard lock(mutex_);
  return resource_version_;
}

std::uint64_t ObjectStore::compacted_resource_version() const {
  std::lock_guard lock(mutex_);
  return compacted_;
}

ObjectPtr ObjectStore::get(Kind kind, const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto& map = objects_[static_cast<std::size_t>(kind)];
  auto it = map.find(key(ns, name));
  return it == map.end() ? nullptr : it->second;
}

ObjectStore::ListResult ObjectStore::list(Kind kind, const std::string& ns,
                                          const std::string& after_key) const {
  std::lock_guard lock(mutex_);
  ListResult result;
  result.resource_version = resource_version_;
  const auto& map = objects_[static_cast<std::size_t>(kind)];
  // Keys are "namespace/name"; a namespace's objects are one contiguous range.
  std::string prefix = ns.empty() ? std::string() : ns + "/";
  auto it = after_key.empty() ? map.lower_bound(prefix) : map.upper_bound(after_key);
  if (!prefix.empty() && it != map.end() && it->first < prefix) it = map.lower_bound(prefix);
  result.items.reserve(map.size());
  for (; it != map.end(); ++it) {
    if (!prefix.empty() && it->first.compare(0, prefix.size(), prefix) != 0) break;
    result.items.push_back(it->second);
  }
  return result;
}

std::size_t ObjectStore::count(Kind kind) const {
  std::lock_guard lock(mutex_);
  return objects_[static_cast<std::size_t>(kind)].size();
}

ObjectPtr ObjectStore::put(Kind kind, nlohmann::json object) {
  const auto& meta = object["metadata"];
  std::string k = key(meta.value("namespace", ""), meta.value("name", ""));
  std::lock_guard lock(mutex_);
  auto& map = objects_[static_cast<std::size_t>(kind)];
  auto stored = std::make_shared<StoredObject>();
  stored->resource_version = ++resource_version_;
  object["metadata"]["resourceVersion"] = std::to_string(stored->resource_version);
  stored->text = object.dump();
  stored->object = std::move(object);
  ObjectPtr result = stored;
  WatchEvent event;
  event.resource_version = stored->resource_version;
  event.kind = kind;
  event.object = result;
  auto it = map.find(k);
  if (it == map.end()) {
    event.type = EventType::added;
    map.emplace(std::move(k), result);
  } else {
    event.type = EventType::modified;
    event.previous = it->second;
    it->second = result;
  }
  record(std::move(event));
  return result;
}

ObjectPtr ObjectStore::remove(Kind kind, const std::string& ns, const std::string& name) {
  std::lock_guard lock(mutex_);
  auto& map = objects_[static_cast<std::size_t>(kind)];
  auto it = map.find(key(ns, name));
  if (it == map.end()) return nullptr;
  auto stored = std::make_shared<StoredObject>();
  stored->resource_version = ++resource_version_;
  stored->object = it->second->object;
  stored->object["metadata"]["resourceVersion"] = std::to_string(stored->resource_version);
  stored->text = stored->object.dump();
  WatchEvent event;
  event.resource_version = stored->resource_version;
  event.kind = kind;
  event.type = EventType::deleted;
  event.previous = it->second;
  event.object = stored;
  map.erase(it);
  record(std::move(event));
  return stored;
}

void ObjectStore::record(WatchEvent event) {
  event.at = std::chrono::steady_clock::now();
  auto& list = watchers_[static_cast<std::size_t>(event.kind)];
  bool expired = false;
  for (const auto& weak : list) {
    if (auto queue = weak.lock()) {
      queue->push(event);
    } else {
      expired = true;
    }
  }
  if (expired) {
    list.erase(std::remove_if(list.begin(), list.end(), [](const auto& weak) { return weak.expired(); }),
               list.end());
  }
  history_.push_back(std::move(event));
  trim_history();
}

std::size_t ObjectStore::history_limit() const {
  std::size_t objects = 0;
  for (const auto& map : objects_) objects += map.size();
  return std::max(options_.history_events, options_.history_events_per_object * objects);
}

void ObjectStore::trim_history() {
  auto now = std::chrono::steady_clock::now();
  const std::size_t limit = history_limit();
  while (!history_.empty()) {
    bool too_many = history_.size() > limit;
    bool too_old = options_.history_age.count() > 0 && now - history_.front().at > options_.history_age;
    if (!too_many && !too_old) break;
    compacted_ = history_.front().resource_version;
    history_.pop_front();
  }
}

ObjectStore::Subscription ObjectStore::subscribe(Kind kind, const std::string& ns,
                                                 std::optional<std::uint64_t> from) {
  std::lock_guard lock(mutex_);
  trim_history();
  Subscription sub;
  sub.resource_version = resource_version_;
  if (from) {
    if (*from < compacted_) {
      sub.too_old = true;
      return sub;
    }
    auto first =
        std::upper_bound(history_.begin(), history_.end(), *from,
                         [](std::uint64_t rv, const WatchEvent& e) { return rv < e.resource_version; });
    for (auto it = first; it != history_.end(); ++it) {
      if (it->kind != kind) continue;
      if (!ns.empty() && it->object->object["metadata"].value("namespace", "") != ns) continue;
      sub.backlog.push_back(*it);
    }
  } else {
    const auto& map = objects_[static_cast<std::size_t>(kind)];
    for (const auto& [k, object] : map) {
      if (!ns.empty() && object->object["metadata"].value("namespace", "") != ns) continue;
      WatchEvent event;
      event.resource_version = object->resource_version;
      event.kind = kind;
      event.type = EventType::added;
      event.object = object;
      sub.backlog.push_back(std::move(event));
    }
  }
  sub.queue = std::make_shared<WatchQueue>(options_.max_pending_per_watch);
  watchers_[static_cast<std::size_t>(kind)].push_back(sub.queue);
  return sub;
}

void ObjectStore::unsubscribe(const std::shared_ptr<WatchQueue>& queue) {
  queue->close();
  std::lock_guard lock(mutex_);
  for (auto& list : watchers_) {
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const auto& weak) {
                                auto locked = weak.lock();
                                return !locked || locked == queue;
                              }),
               list.end());
  }
}

std::size_t ObjectStore::watcher_count() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& list : watchers_) {
    for (const auto& weak : list) n += weak.expired() ? 0 : 1;
  }
  return n;
}

void ObjectStore::compact_all() {
  std::lock_guard lock(mutex_);
  compacted_ = resource_version_;
  history_.clear();
}

}  // namespace bootstorm::sim::kube
