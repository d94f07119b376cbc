// Max-min fairness of the progressive-filling solver on small cases computed by hand.
#include "simulator/model/fair_share.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace bootstorm::sim::model {
namespace {

TEST(FairShare, EqualSplitOfOneResource) {
  const auto rates =
      max_min_fair_rates({12.0}, {ShareDemand{{{0, 1.0}}}, ShareDemand{{{0, 1.0}}}, ShareDemand{{{0, 1.0}}}});
  ASSERT_EQ(rates.size(), 3u);
  for (double r : rates) EXPECT_DOUBLE_EQ(r, 4.0);
}

TEST(FairShare, CappedFlowLeavesItsShareToOthers) {
  // Capacity 10; flow 0 capped at 1 -> the two others split the remaining 9.
  const auto rates = max_min_fair_rates(
      {10.0}, {ShareDemand{{{0, 1.0}}, 1.0}, ShareDemand{{{0, 1.0}}}, ShareDemand{{{0, 1.0}}}});
  EXPECT_DOUBLE_EQ(rates[0], 1.0);
  EXPECT_DOUBLE_EQ(rates[1], 4.5);
  EXPECT_DOUBLE_EQ(rates[2], 4.5);
}

TEST(FairShare, ClassicTwoLinkNetwork) {
  // Link A = 10, link B = 4. f0 uses A, f1 uses A and B, f2 uses B.
  // B saturates first at 2 each (f1, f2 frozen at 2); f0 then takes the rest of A: 8.
  const auto rates = max_min_fair_rates(
      {10.0, 4.0}, {ShareDemand{{{0, 1.0}}}, ShareDemand{{{0, 1.0}, {1, 1.0}}}, ShareDemand{{{1, 1.0}}}});
  EXPECT_DOUBLE_EQ(rates[0], 8.0);
  EXPECT_DOUBLE_EQ(rates[1], 2.0);
  EXPECT_DOUBLE_EQ(rates[2], 2.0);
}

TEST(FairShare, MultiplicityCountsEveryFlow) {
  // 3 identical flows as one demand plus 1 single flow on capacity 12: 3 each.
  const auto rates = max_min_fair_rates({12.0}, {ShareDemand{{{0, 1.0}}, 1e9, 3}, ShareDemand{{{0, 1.0}}}});
  EXPECT_DOUBLE_EQ(rates[0], 3.0);
  EXPECT_DOUBLE_EQ(rates[1], 3.0);
}

TEST(FairShare, CoefficientsScaleConsumption) {
  // A copy flow that reads and writes (coefficient 2) shares 12 with a read flow (coefficient 1):
  // equal rates r, 2r + r = 12 -> r = 4.
  const auto rates = max_min_fair_rates({12.0}, {ShareDemand{{{0, 2.0}}}, ShareDemand{{{0, 1.0}}}});
  EXPECT_DOUBLE_EQ(rates[0], 4.0);
  EXPECT_DOUBLE_EQ(rates[1], 4.0);
}

TEST(FairShare, ZeroCountAndUnconstrainedDemands) {
  const auto rates = max_min_fair_rates(
      {5.0}, {ShareDemand{{{0, 1.0}}, 1e9, 0}, ShareDemand{{}, 7.0}, ShareDemand{{{0, 1.0}}}, ShareDemand{}});
  EXPECT_DOUBLE_EQ(rates[0], 0.0);
  EXPECT_DOUBLE_EQ(rates[1], 7.0);
  EXPECT_DOUBLE_EQ(rates[2], 5.0);
  EXPECT_TRUE(std::isinf(rates[3]));
}

TEST(FairShare, NobodyCanGainWithoutHurtingASmallerFlow) {
  // Property check on a 3-resource case: every flow is either at its cap or crosses a saturated resource
  // on which it has the largest rate (the max-min characterisation).
  const std::vector<double> caps{9.0, 6.0, 20.0};
  const std::vector<ShareDemand> demands{ShareDemand{{{0, 1.0}, {2, 1.0}}}, ShareDemand{{{0, 1.0}, {1, 1.0}}},
                                         ShareDemand{{{1, 1.0}, {2, 1.0}}, 1.5}, ShareDemand{{{2, 1.0}}},
                                         ShareDemand{{{1, 1.0}}, 1e9, 2}};
  const auto rates = max_min_fair_rates(caps, demands);
  std::vector<double> used(caps.size(), 0.0);
  for (std::size_t i = 0; i < demands.size(); ++i) {
    for (const auto& [r, c] : demands[i].uses) used[r] += demands[i].count * c * rates[i];
  }
  for (std::size_t r = 0; r < caps.size(); ++r) EXPECT_LE(used[r], caps[r] + 1e-9);
  for (std::size_t i = 0; i < demands.size(); ++i) {
    if (rates[i] >= demands[i].cap - 1e-9) continue;
    bool bottlenecked = false;
    for (const auto& [r, c] : demands[i].uses) {
      if (used[r] < caps[r] - 1e-9) continue;
      bool largest = true;
      for (std::size_t j = 0; j < demands.size(); ++j) {
        for (const auto& [r2, c2] : demands[j].uses) {
          if (r2 == r && rates[j] > rates[i] + 1e-9) largest = false;
        }
      }
      bottlenecked = bottlenecked || largest;
    }
    EXPECT_TRUE(bottlenecked) << "flow " << i << " at rate " << rates[i];
  }
  // Hand-computed: resource 1 (6) is shared by f1, f2 (cap 1.5) and f4 (x2): level 1.5 would use 1.5*4 = 6
  // -> saturates at 1.5 with f2 capped; f0 and f3 then fill: r0 gets 9 - 1.5 = 7.5 on resource 0.
  EXPECT_NEAR(rates[1], 1.5, 1e-9);
  EXPECT_NEAR(rates[4], 1.5, 1e-9);
  EXPECT_NEAR(rates[0], 7.5, 1e-9);
  EXPECT_NEAR(rates[3], 20.0 - 7.5 - 1.5, 1e-9);
}

}  // namespace
}  // namespace bootstorm::sim::model
