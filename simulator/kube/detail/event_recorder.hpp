#pragma once
// Internal to bootstorm::sim_kube: the core v1 Events the controllers record, kept to the newest
// `max_events` like the API server's event TTL. Separate because it owns the bookkeeping of which Events are
// stored, which the garbage collector updates when a client deletes one.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "simulator/kube/detail/object_publisher.hpp"
#include "simulator/kube/object_store.hpp"

namespace bootstorm::sim::kube {

class EventRecorder {
 public:
  EventRecorder(ObjectStore& store, ObjectPublisher& publisher, std::size_t max_events);

  // Stores an Event about `involved` from `component` (on node `host`); the oldest go beyond max_events.
  void record(const nlohmann::json& involved, const std::string& type, const std::string& reason,
              const std::string& message, const std::string& component, const std::string& host = {});
  // The Event ns/name was deleted.
  void forget(const std::string& ns, const std::string& name);

 private:
  ObjectStore& store_;
  ObjectPublisher& publisher_;
  std::size_t max_events_;
  std::deque<std::pair<std::string, std::string>> order_;  // (ns, name) of stored Events, oldest first
  std::uint64_t counter_ = 0;                              // makes names unique within a microsecond
};

}  // namespace bootstorm::sim::kube
