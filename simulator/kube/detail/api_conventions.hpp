#pragma once
// Internal to bootstorm::sim_kube: the API conventions the controllers share when they write objects — status
// conditions, phase transitions, owner references — and the lab's own annotations. Kept apart from
// api_objects.hpp, which is about answering requests, because only the controllers write status.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace bootstorm::sim::kube {

// The golden image a PVC was cloned from ("ns/name"); the lab VM's guest profile of a VirtualMachine.
inline constexpr const char* kGoldenAnnotation = "sim.bootstorm.io/golden-image";
// The clone CDI did for a DataVolume: copy (host-assisted), snapshot or csi-clone.
inline constexpr const char* kCloneTypeAnnotation = "cdi.kubevirt.io/cloneType";
inline constexpr const char* kProfileAnnotation = "sim.bootstorm.io/profile";

// ("ns", "name") of an ObjectStore key "ns/name".
std::pair<std::string, std::string> split_key(const std::string& key);

// Succeeded or Failed: a VirtualMachineInstance (or DataVolume) phase that does not change any more.
bool final_phase(const std::string& phase);
// Enters `phase`, recording when in status.phaseTransitionTimestamps as KubeVirt does.
void enter_phase(nlohmann::json& status, const std::string& phase, const std::string& time);

// Sets a condition, keeping lastTransitionTime when its status does not change.
void set_condition(nlohmann::json& status, const std::string& type, bool value, const std::string& reason,
                   const std::string& message, const std::string& time, bool with_probe_time = true,
                   bool heartbeat = false);
bool condition_true(const nlohmann::json& object, const std::string& type);

// The ownerReference of a controller owning its dependent (garbage-collected with it).
nlohmann::json owner_reference(const nlohmann::json& owner);
bool owned_by(const nlohmann::json& object, const nlohmann::json& owner);

}  // namespace bootstorm::sim::kube
