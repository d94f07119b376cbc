// Forklift status conditions: serialised as libcnd writes them, a condition whose status stands keeping its
// lastTransitionTime.
#include "simulator/kube/detail/forklift_conditions.hpp"

#include <algorithm>

#include "simulator/kube/api_objects.hpp"

namespace bootstorm::sim::kube::forklift {
namespace {

json conditions_json(const json& old_conditions, const std::vector<Condition>& conditions,
                     const std::string& ts) {
  json out = json::array();
  for (const auto& c : conditions) {
    std::string since = ts;
    if (old_conditions.is_array()) {
      for (const auto& old : old_conditions) {
        if (old.value("type", "") == c.type && old.value("status", "") == c.status) {
          since = old.value("lastTransitionTime", ts);
        }
      }
    }
    json entry = {
        {"type", c.type}, {"status", c.status}, {"category", c.category}, {"lastTransitionTime", since}};
    if (!c.reason.empty()) entry["reason"] = c.reason;
    if (!c.message.empty()) entry["message"] = c.message;
    if (!c.items.empty()) entry["items"] = c.items;
    if (c.durable) entry["durable"] = true;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

bool is_blocker(const Condition& condition) {
  return condition.category == "Critical" || condition.category == "Error";
}

bool any_blocker(const std::vector<Condition>& conditions) {
  return std::any_of(conditions.begin(), conditions.end(), is_blocker);
}

bool has_condition(const std::vector<Condition>& conditions, const std::string& type) {
  return std::any_of(conditions.begin(), conditions.end(),
                     [&](const Condition& c) { return c.type == type; });
}

bool condition_true(const json& object, const std::string& type) {
  const json& conditions = field(object, {"status", "conditions"});
  if (!conditions.is_array()) return false;
  return std::any_of(conditions.begin(), conditions.end(), [&](const json& c) {
    return c.value("type", "") == type && c.value("status", "") == "True";
  });
}

bool execution_condition(const std::string& type) {
  return type == "Executing" || type == "Succeeded" || type == "Failed" || type == "Canceled";
}

void write_conditions(ClusterState& cluster, Kind kind, const ObjectPtr& object,
                      const std::vector<Condition>& conditions, const std::function<void(json&)>& more) {
  const json& meta = object->object["metadata"];
  std::string now = format_time(cluster.now());
  cluster.modify(kind, meta.value("namespace", ""), meta.value("name", ""), [&](json& o) {
    json& status = o["status"];
    if (!status.is_object()) status = json::object();
    status["conditions"] = conditions_json(status.value("conditions", json::array()), conditions, now);
    status["observedGeneration"] = o["metadata"].value("generation", 1);
    if (more) more(status);
  });
}

}  // namespace bootstorm::sim::kube::forklift
