#pragma once
// KubeVirt's client rate limiters, as the KubeVirt CR configures them
// (spec.configuration.<component>Configuration.restClient.rateLimiter.tokenBucketRateLimiter), and the launch
// time a limit implies. Spelled once for the lab's virt-controller, which applies the limit, and for
// `bootstorm check`, which predicts from it.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace bootstorm::kubevirt_limits {

struct TokenBucketLimit {
  double qps = 0;
  double burst = 0;
  bool operator==(const TokenBucketLimit&) const = default;
};

// KubeVirt 1.x defaults (pkg/virt-config): virt-controller 200 QPS with a burst of 400, virt-handler 5 QPS
// with a burst of 10 per node. Older releases used 20/30 and 5/10 for virt-controller.
inline constexpr TokenBucketLimit kVirtControllerDefault{200, 400};
inline constexpr TokenBucketLimit kVirtHandlerDefault{5, 10};

// API writes virt-controller makes to launch one VMI (VMI, virt-launcher pod, status updates): "~19 PUT
// requests per VMI from the virt-controller", as KubeVirt's SIG-scale counted them (kubevirt/kubevirt#7879,
// which measured 1 VMI/s at the old 20 QPS default).
inline constexpr int kVirtControllerWritesPerLaunch = 19;

// The CR's component names: "controllerConfiguration", "handlerConfiguration".
inline constexpr std::string_view kController = "controllerConfiguration";
inline constexpr std::string_view kHandler = "handlerConfiguration";

// The limit a KubeVirt CR sets for `component`; a field the CR leaves out or sets to 0 is the component's
// default, as KubeVirt reads it. `configured` says whether the CR set anything.
struct ConfiguredLimit {
  TokenBucketLimit limit;
  bool configured = false;
};
ConfiguredLimit limit_of(const nlohmann::json& kubevirt_cr, std::string_view component,
                         TokenBucketLimit fallback);

// Seconds from the moment `vmis` launches are asked together to the last one's last write: the writes
// beyond the burst wait for the bucket to refill at `qps`. 0 when the burst covers them all.
double launch_pacing_s(int vmis, TokenBucketLimit limit,
                       int writes_per_launch = kVirtControllerWritesPerLaunch);

// "200 QPS, burst 400"
std::string describe(TokenBucketLimit limit);

}  // namespace bootstorm::kubevirt_limits
