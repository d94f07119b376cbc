// LineRelay: watch lines handed from the watch thread to the caller's executor in order, one wakeup per
// batch.
#include "protocol/kube/detail/line_relay.hpp"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>
#include <vector>

namespace {

using bootstorm::kube::detail::LineRelay;

TEST(LineRelay, LinesPushedWhileTheTargetIsBusyAreOneBatch) {
  boost::asio::io_context target;
  std::vector<int> delivered;
  auto relay =
      std::make_shared<LineRelay<int>>(target.get_executor(), [&](int& v) { delivered.push_back(v); });
  for (int i = 0; i < 100; ++i) relay->push(i);
  EXPECT_TRUE(delivered.empty());  // nothing runs on the pushing side
  target.run();
  ASSERT_EQ(delivered.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(delivered[i], i);
  EXPECT_EQ(relay->drains(), 1u);
  // After a drain the next line schedules a new one.
  relay->push(100);
  target.restart();
  target.run();
  EXPECT_EQ(delivered.back(), 100);
  EXPECT_EQ(relay->drains(), 2u);
}

// A producer thread and a running target: every line arrives once, in order, and a completion posted after
// the last push runs after the last line (what HttpKubeApi's watch relies on).
TEST(LineRelay, OrderAndCompletionAcrossThreads) {
  boost::asio::io_context target;
  auto guard = boost::asio::make_work_guard(target);
  std::vector<int> delivered;
  bool completion_saw_all = false;
  constexpr int kLines = 20000;
  auto relay =
      std::make_shared<LineRelay<int>>(target.get_executor(), [&](int& v) { delivered.push_back(v); });
  std::thread producer([&] {
    for (int i = 0; i < kLines; ++i) relay->push(i);
    boost::asio::post(target, [&] {
      completion_saw_all = delivered.size() == static_cast<std::size_t>(kLines);
      guard.reset();
    });
  });
  target.run();
  producer.join();
  EXPECT_TRUE(completion_saw_all);
  ASSERT_EQ(delivered.size(), static_cast<std::size_t>(kLines));
  for (int i = 0; i < kLines; ++i) ASSERT_EQ(delivered[i], i) << "at " << i;
  EXPECT_GE(relay->drains(), 1u);
  EXPECT_LE(relay->drains(), static_cast<std::size_t>(kLines));
}

}  // namespace
