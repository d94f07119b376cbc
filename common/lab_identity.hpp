#pragma once
// How bootstorm's lab names itself on the wire, spelled once for the lab's fronts (which say it) and the
// providers (which record it as PlatformFacts::simulator): "bootstorm lab <profile>" in the `simulator`
// field of its Kubernetes and KubeVirt /version answers, in the vim25 about.fullName, and in the header
// kSimulatorHeader of every vCenter REST answer (that API has no version call of its own).
#include <string>
#include <string_view>

namespace bootstorm {

inline constexpr std::string_view kLabSimulatorPrefix = "bootstorm lab ";
inline constexpr std::string_view kSimulatorHeader = "X-Bootstorm-Simulator";

inline std::string lab_simulator_name(std::string_view profile) {
  return std::string(kLabSimulatorPrefix) + std::string(profile);
}

}  // namespace bootstorm
