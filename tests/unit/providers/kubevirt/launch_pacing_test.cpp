// The "launch pacing" check: virt-controller's rate limit from the KubeVirt CR against the storm's timeout.
#include "providers/kubevirt/launch_pacing.hpp"

#include <gtest/gtest.h>

namespace {

using bootstorm::api::CheckStatus;
using bootstorm::kubevirt::launch_pacing_check;
using namespace std::chrono_literals;

nlohmann::json cr(double qps, double burst) {
  return {{"metadata", {{"name", "kubevirt"}, {"namespace", "kubevirt"}}},
          {"spec",
           {{"configuration",
             {{"controllerConfiguration",
               {{"restClient",
                 {{"rateLimiter", {{"tokenBucketRateLimiter", {{"qps", qps}, {"burst", burst}}}}}}}}}}}}}};
}

TEST(LaunchPacing, TheDefaultLimitLaunchesALayoutWithinItsBurst) {
  const auto r = launch_pacing_check(nlohmann::json::object(), "kubevirt/kubevirt", 20, 10min);
  EXPECT_EQ(r.status, CheckStatus::pass) << r.finding;
  EXPECT_NE(r.finding.find("200 QPS, burst 400 (KubeVirt's default"), std::string::npos) << r.finding;
  EXPECT_NE(r.finding.find("virt-handler 5 QPS, burst 10 per node"), std::string::npos) << r.finding;
}

TEST(LaunchPacing, APacedLaunchIsAWarningWithThePredictedTime) {
  // 1,000 launches at KubeVirt's default: (19,000 - 400) / 200 = 93 s, within a 10-minute timeout.
  const auto r =
      launch_pacing_check(nlohmann::json::object(), "openshift-cnv/kubevirt-hyperconverged", 1000, 10min);
  EXPECT_EQ(r.status, CheckStatus::warn) << r.finding;
  EXPECT_NE(r.finding.find("predicted paced over 93 s"), std::string::npos) << r.finding;
  EXPECT_NE(r.advice.find("kubectl edit kubevirt -n openshift-cnv"), std::string::npos) << r.advice;
}

TEST(LaunchPacing, ALaunchPacedPastTheTimeoutFailsWithTheQpsThatWouldFit) {
  // 100 launches at 5 QPS, burst 10: (1,900 - 10) / 5 = 378 s > 2 min. Within half the timeout: 1,890 / 60.
  const auto r = launch_pacing_check(cr(5, 10), "kubevirt/kubevirt", 100, 2min);
  EXPECT_EQ(r.status, CheckStatus::fail) << r.finding;
  EXPECT_NE(r.finding.find("5 QPS, burst 10 (set in KubeVirt CR kubevirt/kubevirt)"), std::string::npos)
      << r.finding;
  EXPECT_NE(r.finding.find("378 s, beyond storm.timeout 120 s"), std::string::npos) << r.finding;
  EXPECT_NE(r.advice.find("qps to 32 or more"), std::string::npos) << r.advice;
}

}  // namespace
