#pragma once
// The "launch pacing" check: how long virt-controller's client rate limiter, as the KubeVirt CR configures
// it, will take to launch the plan's largest storm (predicted from the writes a launch makes), against the
// storm's timeout. Pure: the provider reads the CR and hands it in.
#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "providers/api/check.hpp"

namespace bootstorm::kubevirt {

// `kubevirt_cr`: the installation's KubeVirt CR, `where` its "namespace/name". A launch paced past the storm
// timeout fails; one paced over a second or more is a warning with the predicted time; else a pass.
api::CheckResult launch_pacing_check(const nlohmann::json& kubevirt_cr, const std::string& where,
                                     std::size_t vms, std::chrono::milliseconds storm_timeout);

}  // namespace bootstorm::kubevirt
