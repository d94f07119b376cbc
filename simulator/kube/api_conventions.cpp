// Status conditions, phase transitions and owner references as the controllers write them.
#include "simulator/kube/detail/api_conventions.hpp"

#include <algorithm>

#include "simulator/kube/api_objects.hpp"

namespace bootstorm::sim::kube {

using json = nlohmann::json;

std::pair<std::string, std::string> split_key(const std::string& key) {
  auto slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

bool final_phase(const std::string& phase) {
  return phase == "Succeeded" || phase == "Failed";
}

void enter_phase(json& status, const std::string& phase, const std::string& time) {
  status["phase"] = phase;
  status["phaseTransitionTimestamps"].push_back({{"phase", phase}, {"phaseTransitionTimestamp", time}});
}

void set_condition(json& status, const std::string& type, bool value, const std::string& reason,
                   const std::string& message, const std::string& time, bool with_probe_time,
                   bool heartbeat) {
  if (!status.contains("conditions") || !status["conditions"].is_array())
    status["conditions"] = json::array();
  json& conditions = status["conditions"];
  std::string value_text = value ? "True" : "False";
  for (auto& condition : conditions) {
    if (condition.value("type", "") != type) continue;
    if (condition.value("status", "") != value_text) condition["lastTransitionTime"] = time;
    condition["status"] = value_text;
    condition["reason"] = reason;
    condition["message"] = message;
    if (heartbeat) condition["lastHeartbeatTime"] = time;
    return;
  }
  json condition = {{"type", type}, {"status", value_text}, {"lastTransitionTime", time}};
  if (with_probe_time) condition["lastProbeTime"] = nullptr;
  if (heartbeat) condition["lastHeartbeatTime"] = time;
  if (!reason.empty()) condition["reason"] = reason;
  if (!message.empty()) condition["message"] = message;
  conditions.push_back(std::move(condition));
}

bool condition_true(const json& object, const std::string& type) {
  const json& conditions = field(object, {"status", "conditions"});
  if (!conditions.is_array()) return false;
  return std::any_of(conditions.begin(), conditions.end(), [&](const json& c) {
    return c.value("type", "") == type && c.value("status", "") == "True";
  });
}

json owner_reference(const json& owner) {
  return {{"apiVersion", owner.value("apiVersion", "")},
          {"kind", owner.value("kind", "")},
          {"name", owner["metadata"].value("name", "")},
          {"uid", owner["metadata"].value("uid", "")},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

bool owned_by(const json& object, const json& owner) {
  const json& refs = field(object, {"metadata", "ownerReferences"});
  if (!refs.is_array()) return false;
  std::string uid = owner["metadata"].value("uid", "");
  return std::any_of(refs.begin(), refs.end(), [&](const json& ref) { return ref.value("uid", "") == uid; });
}

}  // namespace bootstorm::sim::kube
