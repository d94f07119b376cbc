#include "providers/kubevirt/launch_pacing.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/kubevirt_rate_limits.hpp"

namespace bootstorm::kubevirt {

namespace limits = kubevirt_limits;

namespace {

constexpr const char* kName = "launch pacing";
constexpr const char* kQpsField =
    "spec.configuration.controllerConfiguration.restClient.rateLimiter.tokenBucketRateLimiter";

std::string origin(const limits::ConfiguredLimit& limit, const std::string& where) {
  return limit.configured ? "set in KubeVirt CR " + where : "KubeVirt's default; CR " + where + " sets none";
}

}  // namespace

api::CheckResult launch_pacing_check(const nlohmann::json& kubevirt_cr, const std::string& where,
                                     std::size_t vms, std::chrono::milliseconds storm_timeout) {
  const auto controller = limits::limit_of(kubevirt_cr, limits::kController, limits::kVirtControllerDefault);
  const auto handler = limits::limit_of(kubevirt_cr, limits::kHandler, limits::kVirtHandlerDefault);
  const int launches = static_cast<int>(vms);
  const double pacing_s = limits::launch_pacing_s(launches, controller.limit);
  const double timeout_s = std::chrono::duration<double>(storm_timeout).count();
  const std::string limit_text = fmt::format("virt-controller {} ({}); virt-handler {} per node ({})",
                                             limits::describe(controller.limit), origin(controller, where),
                                             limits::describe(handler.limit), origin(handler, where));
  const std::string writes = fmt::format("~{} API writes per launch", limits::kVirtControllerWritesPerLaunch);
  if (pacing_s < 1.0) {
    return api::check_result(
        kName, api::CheckStatus::pass,
        fmt::format("{}: {} VMI launches ({}) fit its burst, predicted paced over {:.1f} s", limit_text,
                    launches, writes, pacing_s));
  }
  // The QPS that launches the storm within half its timeout, the other half left for the boots themselves.
  const double writes_total = static_cast<double>(launches) * limits::kVirtControllerWritesPerLaunch;
  const double needed_qps =
      timeout_s > 0 ? std::ceil((writes_total - controller.limit.burst) / (timeout_s / 2)) : 0;
  const std::string edit = fmt::format("kubectl edit kubevirt -n {}", where.substr(0, where.find('/')));
  if (timeout_s > 0 && pacing_s >= timeout_s) {
    const std::string raise = fmt::format("raise {}.qps to {:g} or more ({})", kQpsField, needed_qps, edit);
    return api::check_result(
        kName, api::CheckStatus::fail,
        fmt::format(
            "{}: the launch of {} VMIs ({}) is predicted paced over {:.0f} s, beyond storm.timeout {:.0f} s: "
            "the last VMs would time out before they are scheduled",
            limit_text, launches, writes, pacing_s, timeout_s),
        raise + ", or lengthen storm.timeout, or run a smaller storm");
  }
  return api::check_result(
      kName, api::CheckStatus::warn,
      fmt::format(
          "{}: the launch of {} VMIs ({}) is predicted paced over {:.0f} s; the report's control-plane "
          "phase will show it",
          limit_text, launches, writes, pacing_s),
      fmt::format("the boot times will include this wait; to launch faster raise {}.qps ({})", kQpsField,
                  edit));
}

}  // namespace bootstorm::kubevirt
