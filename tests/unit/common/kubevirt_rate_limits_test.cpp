// KubeVirt's client rate limits as the KubeVirt CR sets them, and the launch pacing they imply.
#include "common/kubevirt_rate_limits.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace {

using namespace bootstorm::kubevirt_limits;

nlohmann::json cr_with(const char* component, nlohmann::json bucket) {
  return {{"spec",
           {{"configuration",
             {{component, {{"restClient", {{"rateLimiter", {{"tokenBucketRateLimiter", bucket}}}}}}}}}}}};
}

TEST(KubevirtRateLimits, TheCrsLimitOrTheDefaultFieldByField) {
  auto set = limit_of(cr_with("controllerConfiguration", {{"qps", 5}, {"burst", 10}}), kController,
                      kVirtControllerDefault);
  EXPECT_TRUE(set.configured);
  EXPECT_EQ(set.limit, (TokenBucketLimit{5, 10}));
  // A zero field is the component's default, as KubeVirt reads it.
  auto half = limit_of(cr_with("controllerConfiguration", {{"qps", 50}, {"burst", 0}}), kController,
                       kVirtControllerDefault);
  EXPECT_EQ(half.limit, (TokenBucketLimit{50, 400}));
  // Another component's limit is not this one's.
  auto other = limit_of(cr_with("handlerConfiguration", {{"qps", 1}, {"burst", 1}}), kController,
                        kVirtControllerDefault);
  EXPECT_FALSE(other.configured);
  EXPECT_EQ(other.limit, kVirtControllerDefault);
  EXPECT_FALSE(limit_of(nlohmann::json::array(), kHandler, kVirtHandlerDefault).configured);
}

TEST(KubevirtRateLimits, LaunchPacingIsTheWritesBeyondTheBurstAtTheRate) {
  // 24 launches of 19 writes = 456 writes; 400 in the burst, 56 paced at 200 per second.
  EXPECT_DOUBLE_EQ(launch_pacing_s(24, {200, 400}), 56.0 / 200);
  EXPECT_DOUBLE_EQ(launch_pacing_s(21, {200, 400}), 0.0);
  EXPECT_DOUBLE_EQ(launch_pacing_s(1000, {20, 30}), (19000.0 - 30) / 20);
  EXPECT_DOUBLE_EQ(launch_pacing_s(10, {5, 10}, 1), 0.0);
  EXPECT_DOUBLE_EQ(launch_pacing_s(0, {5, 10}), 0.0);
  EXPECT_EQ(describe({200, 400}), "200 QPS, burst 400");
  EXPECT_EQ(describe({1e6, 1e6}), "1000000 QPS, burst 1000000");
  EXPECT_EQ(describe({0.5, 1}), "0.5 QPS, burst 1");
}

}  // namespace
