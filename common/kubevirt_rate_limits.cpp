#include "common/kubevirt_rate_limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace bootstorm::kubevirt_limits {

ConfiguredLimit limit_of(const nlohmann::json& kubevirt_cr, std::string_view component,
                         TokenBucketLimit fallback) {
  ConfiguredLimit out{fallback, false};
  const nlohmann::json* node = &kubevirt_cr;
  for (std::string_view key : {std::string_view("spec"), std::string_view("configuration"), component,
                               std::string_view("restClient"), std::string_view("rateLimiter"),
                               std::string_view("tokenBucketRateLimiter")}) {
    if (!node->is_object()) return out;
    auto it = node->find(std::string(key));
    if (it == node->end()) return out;
    node = &*it;
  }
  if (!node->is_object()) return out;
  if (auto qps = node->find("qps"); qps != node->end() && qps->is_number() && qps->get<double>() > 0) {
    out.limit.qps = qps->get<double>();
    out.configured = true;
  }
  if (auto burst = node->find("burst");
      burst != node->end() && burst->is_number() && burst->get<double>() > 0) {
    out.limit.burst = burst->get<double>();
    out.configured = true;
  }
  return out;
}

double launch_pacing_s(int vmis, TokenBucketLimit limit, int writes_per_launch) {
  if (vmis <= 0 || !(limit.qps > 0)) return 0;
  const double writes = static_cast<double>(vmis) * writes_per_launch;
  return std::max(0.0, writes - std::max(1.0, limit.burst)) / limit.qps;
}

namespace {
// 200, 0.5, 1000000: whole numbers in full, others as short as they are.
std::string number(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{:.0f}", v) : fmt::format("{:g}", v);
}
}  // namespace

std::string describe(TokenBucketLimit limit) {
  return number(limit.qps) + " QPS, burst " + number(limit.burst);
}

}  // namespace bootstorm::kubevirt_limits
