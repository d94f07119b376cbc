#pragma once
// The simulated API server's object storage: every object of every served resource type, one global
// resourceVersion counter (like etcd's revision), a bounded history of change events for watches that resume
// from a resourceVersion, and live fan-out of new events to watch queues.
//
// Objects are immutable once stored (updates store a new version), each kept with its serialised JSON so that
// lists and watch fan-out copy bytes instead of re-serialising. Thread-safe: one mutex guards the store;
// watch queues have their own lock and wake their consumer through a callback.
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "simulator/kube/resource_types.hpp"

namespace bootstorm::sim::kube {

struct StoredObject {
  nlohmann::json object;  // metadata.resourceVersion is set
  std::string text;       // object.dump()
  std::uint64_t resource_version = 0;
};
using ObjectPtr = std::shared_ptr<const StoredObject>;

enum class EventType { added, modified, deleted };
const char* to_string(EventType type);

struct WatchEvent {
  std::uint64_t resource_version = 0;
  Kind kind = Kind::namespaces;
  EventType type = EventType::added;
  ObjectPtr object;    // the new version (for deleted: the last version, with the deletion's resourceVersion)
  ObjectPtr previous;  // the version before a modification (null for added)
  std::chrono::steady_clock::time_point at{};
};

// One watcher's inbox. Producers push under the store lock; the consumer drains it from its own executor.
class WatchQueue {
 public:
  explicit WatchQueue(std::size_t max_pending) : max_pending_(max_pending) {}
  void push(const WatchEvent& event);
  std::deque<WatchEvent> take();
  // Called (on the producer's thread) after each push; the consumer posts a wake-up to its executor.
  void set_waker(std::function<void()> waker);
  // True once the consumer fell more than max_pending events behind: the watch must end (client re-lists).
  bool overflowed() const;
  void close();
  bool closed() const;

 private:
  mutable std::mutex mutex_;
  std::deque<WatchEvent> pending_;
  std::function<void()> waker_;
  std::size_t max_pending_;
  bool overflowed_ = false;
  bool closed_ = false;
};

class ObjectStore {
 public:
  struct Options {
    // Events kept for resuming watches: at least history_events, and history_events_per_object for each
    // object held, so that a storm's churn (a dozen events per VM while it is provisioned and boots) does
    // not compact the history under a watcher that re-lists and resumes; a fixed 20,000 answered 410 Gone
    // to a 10,000-VM storm's watch.
    std::size_t history_events = 20000;
    std::size_t history_events_per_object = 16;
    std::chrono::milliseconds history_age{0};  // events older than this are dropped too (0: no limit)
    std::size_t max_pending_per_watch = 200000;
  };

  ObjectStore();
  explicit ObjectStore(Options options);

  std::uint64_t current_resource_version() const;
  // Highest resourceVersion whose events are no longer in the history: resuming at or after it is possible.
  std::uint64_t compacted_resource_version() const;

  ObjectPtr get(Kind kind, const std::string& ns, const std::string& name) const;

  struct ListResult {
    std::vector<ObjectPtr> items;  // sorted by namespace, then name
    std::uint64_t resource_version = 0;
  };
  // `ns` empty: all namespaces. `after_key` (namespace/name) skips up to and including that key.
  ListResult list(Kind kind, const std::string& ns, const std::string& after_key = {}) const;
  std::size_t count(Kind kind) const;

  // Stores a new object (ADDED) or a new version of an existing one (MODIFIED), assigning the next
  // resourceVersion. Returns the stored version.
  ObjectPtr put(Kind kind, nlohmann::json object);
  // Removes an object (DELETED event); null when absent.
  ObjectPtr remove(Kind kind, const std::string& ns, const std::string& name);

  struct Subscription {
    bool too_old = false;               // the requested resourceVersion is older than the history
    std::vector<WatchEvent> backlog;    // events to send first (synthetic ADDED for a fresh watch)
    std::shared_ptr<WatchQueue> queue;  // live events after the backlog
    std::uint64_t resource_version = 0;
  };
  // Atomically reads the backlog and registers a queue for later events of `kind`. `from` nullopt: start from
  // the current state (synthetic ADDED events for every existing object in `ns`, "" = all).
  Subscription subscribe(Kind kind, const std::string& ns, std::optional<std::uint64_t> from);
  void unsubscribe(const std::shared_ptr<WatchQueue>& queue);
  std::size_t watcher_count() const;

  // Fault injection: forget the whole history, so every resume gets 410 Gone.
  void compact_all();

  static std::string key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

 private:
  void record(WatchEvent event);
  void trim_history();

  Options options_;
  mutable std::mutex mutex_;
  std::uint64_t resource_version_ = 0;
  std::uint64_t compacted_ = 0;
  std::vector<std::map<std::string, ObjectPtr>> objects_;
  std::size_t history_limit() const;
  std::deque<WatchEvent> history_;
  std::vector<std::vector<std::weak_ptr<WatchQueue>>> watchers_;
};

}  // namespace bootstorm::sim::kube
