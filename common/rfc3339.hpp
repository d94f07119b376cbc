#pragma once
// RFC 3339 timestamps as Kubernetes and the plan format write them ("2026-11-30T10:00:05Z", fractions and
// offsets accepted): one parser for the kubeconfig's exec credentials, the KubeVirt watch decoder and the
// simulator's server-side printing.
#include <chrono>
#include <optional>
#include <string_view>

namespace bootstorm {

// nullopt when `text` is not YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm), a field is out of range, or the
// time lies outside what system_clock can hold (years 1678 to 2261).
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

}  // namespace bootstorm
