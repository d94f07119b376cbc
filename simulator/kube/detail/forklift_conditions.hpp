#pragma once
// Internal to the Forklift controller: status conditions as forklift-controller writes them (libcnd), shared
// by the provider, map and plan reconcilers and the migration runner.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simulator/kube/detail/cluster_state.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/kube/resource_types.hpp"

namespace bootstorm::sim::kube::forklift {

using json = nlohmann::json;

// A Forklift condition (libcnd.Condition).
struct Condition {
  std::string type;
  std::string reason;
  std::string category;
  std::string message;
  std::vector<std::string> items;
  bool durable = false;
  std::string status = "True";
};

// Critical and Error conditions block: the object is not Ready while one stands.
bool is_blocker(const Condition& condition);
bool any_blocker(const std::vector<Condition>& conditions);
bool has_condition(const std::vector<Condition>& conditions, const std::string& type);

// Whether the stored object's status carries condition `type` with status True.
bool condition_true(const json& object, const std::string& type);

// The Plan conditions that belong to its running migration rather than to validation.
bool execution_condition(const std::string& type);

// Writes `conditions` and observedGeneration into the object's status (a condition whose status did not
// change keeps its lastTransitionTime); `more` edits the rest of the status in the same write.
void write_conditions(ClusterState& cluster, Kind kind, const ObjectPtr& object,
                      const std::vector<Condition>& conditions, const std::function<void(json&)>& more = {});

}  // namespace bootstorm::sim::kube::forklift
