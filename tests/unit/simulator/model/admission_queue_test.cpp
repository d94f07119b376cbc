// vCenter's admission control as plain logic: per-host cost units, the global operation limit, FIFO order
// among the operations that fit, and grants made from release().
#include "simulator/model/admission_queue.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace bootstorm::sim::model {
namespace {

TEST(AdmissionQueue, AHostsCostUnitsBoundItsOperationsAndReleasesGrantInOrder) {
  AdmissionQueue queue(640, 4);
  std::vector<int> granted;
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(queue.admit("h1", 1, [&granted, i] { granted.push_back(i); }));
  EXPECT_FALSE(queue.admit("h1", 1, [&granted] { granted.push_back(4); }));
  EXPECT_FALSE(queue.admit("h1", 2, [&granted] { granted.push_back(5); }));
  EXPECT_EQ(queue.queued(), 2u);
  queue.release("h1", 1);
  EXPECT_EQ(granted, std::vector<int>{4});
  queue.release("h1", 1);
  EXPECT_TRUE(granted.size() == 1) << "the cost-2 operation needs two units";
  queue.release("h1", 1);
  EXPECT_EQ(granted, (std::vector<int>{4, 5}));
  EXPECT_EQ(queue.peak_queued(), 2u);
}

TEST(AdmissionQueue, OtherHostsAreNotHeldBehindAFullOneOnceSomethingIsQueued) {
  AdmissionQueue queue(640, 1);
  std::vector<std::string> granted;
  EXPECT_TRUE(queue.admit("h1", 1, [] {}));
  EXPECT_FALSE(queue.admit("h1", 1, [&] { granted.push_back("h1"); }));
  // vCenter's queue is FIFO: a new operation waits while others wait, then goes when it fits.
  EXPECT_FALSE(queue.admit("h2", 1, [&] { granted.push_back("h2"); }));
  queue.release("h1", 1);
  EXPECT_EQ(granted, (std::vector<std::string>{"h1", "h2"}));
}

TEST(AdmissionQueue, TheGlobalLimitAndACostAboveAHostsUnits) {
  AdmissionQueue queue(2, 4);
  EXPECT_EQ(queue.cost_of(16), 4);
  EXPECT_TRUE(queue.admit("h1", 16, [] {}));
  EXPECT_TRUE(queue.admit("h2", 1, [] {}));
  int third = 0;
  EXPECT_FALSE(queue.admit("", 1, [&] { ++third; }));
  EXPECT_EQ(queue.running(), 2);
  queue.release("h1", 16);
  EXPECT_EQ(third, 1);
  EXPECT_EQ(queue.running(), 2);
}

}  // namespace
}  // namespace bootstorm::sim::model
