// The coroutine toolkit: token bucket arithmetic, rate limiter, FIFO semaphore, wait group, bounded fan-out,
// cancellable sleep and the cancel signal's subscriptions.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/async/for_each.hpp"
#include "common/async/semaphore.hpp"
#include "common/async/sleep.hpp"
#include "common/async/token_bucket.hpp"
#include "common/async/wait_group.hpp"
#include "common/cancel.hpp"
#include "tests/support/run_task.hpp"

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::async;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

using bootstorm::testing::run_task;

double secs(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

TEST(TokenBucket, FirstRequestsUpToBurstDoNotWait) {
  const auto t0 = Clock::now();
  TokenBucket bucket(10.0, 3.0, t0);
  EXPECT_EQ(bucket.reserve(t0), Clock::duration::zero());
  EXPECT_EQ(bucket.reserve(t0), Clock::duration::zero());
  EXPECT_EQ(bucket.reserve(t0), Clock::duration::zero());
  EXPECT_NEAR(secs(bucket.reserve(t0)), 0.1, 1e-6);
  EXPECT_NEAR(secs(bucket.reserve(t0)), 0.2, 1e-6);
}

TEST(TokenBucket, RefillsAtRateAndCapsAtBurst) {
  const auto t0 = Clock::now();
  TokenBucket bucket(4.0, 2.0, t0);
  bucket.reserve(t0);
  bucket.reserve(t0);
  EXPECT_NEAR(bucket.tokens(t0), 0.0, 1e-9);
  EXPECT_NEAR(bucket.tokens(t0 + 250ms), 1.0, 1e-9);
  EXPECT_NEAR(bucket.tokens(t0 + 10s), 2.0, 1e-9);  // never above burst
}

// Property: whatever the arrival pattern, the release times never put more than burst + rate*T requests in
// any window of length T.
TEST(TokenBucket, ReleasesNeverExceedBudgetInAnyWindow) {
  const double rate = 20.0;
  const auto t0 = Clock::now();
  TokenBucket bucket(rate, 1.0, t0);
  std::vector<Clock::time_point> released;
  auto now = t0;
  for (int i = 0; i < 500; ++i) {
    now += std::chrono::microseconds((i * 7919) % 40000);  // irregular arrivals, often faster than the rate
    released.push_back(now + bucket.reserve(now));
  }
  std::sort(released.begin(), released.end());
  for (std::size_t i = 0; i < released.size(); ++i) {
    std::size_t j = i;
    while (j < released.size() && released[j] - released[i] < 1s) ++j;
    EXPECT_LE(static_cast<double>(j - i), 1.0 + rate) << "window starting at release " << i;
  }
}

TEST(TokenBucket, ChargeDelaysLaterReservationsButDebtIsCappedAtOneSecond) {
  const auto t0 = Clock::now();
  TokenBucket bucket(10.0, 1.0, t0);
  for (int i = 0; i < 1000; ++i) bucket.charge(t0);
  EXPECT_NEAR(bucket.tokens(t0), -10.0, 1e-9);
  EXPECT_NEAR(secs(bucket.reserve(t0)), 1.1, 1e-6);
}

TEST(TokenBucket, TryTakeRefusesWithoutTakingAndFullMeansRefilledToTheBurst) {
  const auto t0 = Clock::now();
  TokenBucket bucket(2.0, 2.0, t0);
  EXPECT_TRUE(bucket.full(t0));
  EXPECT_TRUE(bucket.try_take(t0));
  EXPECT_FALSE(bucket.full(t0));
  EXPECT_TRUE(bucket.try_take(t0));
  EXPECT_FALSE(bucket.try_take(t0));  // short: refused, and no debt is left behind
  EXPECT_NEAR(bucket.tokens(t0), 0.0, 1e-9);
  EXPECT_FALSE(bucket.try_take(t0 + 499ms));
  EXPECT_TRUE(bucket.try_take(t0 + 500ms));  // one token refilled at 2/s
  EXPECT_FALSE(bucket.full(t0 + 999ms));
  EXPECT_TRUE(bucket.full(t0 + 2s));
}

TEST(TokenBucket, RejectsNonPositiveRate) {
  EXPECT_THROW(TokenBucket(0.0, 1.0, Clock::now()), std::invalid_argument);
}

TEST(RateLimiter, PacesAcquisitionsAtTheRate) {
  asio::io_context io;
  RateLimiter limiter(io.get_executor(), 100.0, 1.0);
  std::vector<Clock::time_point> times;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 6; ++i) {
          co_await limiter.acquire();
          times.push_back(Clock::now());
        }
      },
      asio::detached);
  io.run();
  ASSERT_EQ(times.size(), 6u);
  // A lower bound only (a slow machine may take longer): 5 waits of 10 ms each.
  EXPECT_GE(times.back() - times.front(), 49ms);
  EXPECT_EQ(limiter.acquired(), 6u);
}

TEST(RateLimiter, StopFlagEndsAWaitEarly) {
  asio::io_context io;
  RateLimiter limiter(io.get_executor(), 1.0, 1.0);
  auto stop = std::make_shared<bool>(false);
  limiter.set_stop_flag(stop);
  for (int i = 0; i < 5; ++i) limiter.charge();  // 1 s of debt (capped)
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await limiter.acquire();
        done = true;
      },
      asio::detached);
  asio::steady_timer t(io, 50ms);
  t.async_wait([&](auto) { *stop = true; });
  const auto start = Clock::now();
  io.run();
  EXPECT_TRUE(done);
  EXPECT_LT(Clock::now() - start, 1500ms);  // without the flag the wait would be 2 s
}

TEST(AsyncSemaphore, BoundsConcurrencyAndReleasesFifo) {
  asio::io_context io;
  AsyncSemaphore sem(io.get_executor(), 2);
  int inside = 0, peak = 0;
  std::vector<int> order;
  for (int i = 0; i < 6; ++i) {
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          co_await sem.acquire();
          Permit permit(sem);
          order.push_back(i);
          peak = std::max(peak, ++inside);
          asio::steady_timer t(co_await asio::this_coro::executor, 5ms);
          co_await t.async_wait(asio::use_awaitable);
          --inside;
        },
        asio::detached);
  }
  io.run();
  EXPECT_EQ(peak, 2);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(sem.available(), 2u);
}

TEST(RateLimiter, WithoutABudgetNeverWaits) {
  asio::io_context io;
  RateLimiter limiter(io.get_executor(), 0.0);
  const auto start = Clock::now();
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 1000; ++i) co_await limiter.acquire();
      },
      asio::detached);
  io.run();
  EXPECT_EQ(limiter.acquired(), 1000u);
  EXPECT_EQ(limiter.rate(), 0.0);
  EXPECT_LT(Clock::now() - start, 500ms);
}

TEST(AsyncSemaphore, ZeroCapacityAdmitsOne) {
  asio::io_context io;
  AsyncSemaphore sem(io.get_executor(), 0);
  EXPECT_EQ(sem.available(), 1u);
}

TEST(AsyncSemaphore, PermitOwnedByADestroyedFrameIsReturned) {
  asio::io_context io;
  AsyncSemaphore sem(io.get_executor(), 1);
  {
    asio::io_context inner;
    asio::co_spawn(
        inner,
        [&]() -> asio::awaitable<void> {
          auto permit = co_await acquire(sem);
          asio::steady_timer forever(co_await asio::this_coro::executor, Clock::time_point::max());
          co_await forever.async_wait(asio::use_awaitable);
        },
        asio::detached);
    inner.run_for(20ms);
    EXPECT_EQ(sem.available(), 0u);
  }  // `inner` is destroyed with the suspended frame, and the frame's Permit with it
  EXPECT_EQ(sem.available(), 1u);
}

TEST(WaitGroup, WaitReturnsFalseAtTheDeadline) {
  asio::io_context io;
  WaitGroup group(io.get_executor());
  group.add();
  EXPECT_FALSE(run_task(io, group.wait(Clock::now() + 20ms)));
  group.done();
  EXPECT_TRUE(run_task(io, group.wait(Clock::now() + 20ms)));
}

TEST(BoundedForEach, NeverExceedsTheLimitAndStartsItemsInOrder) {
  asio::io_context io;
  std::vector<int> items(50);
  for (int i = 0; i < 50; ++i) items[i] = i;
  int inside = 0, peak = 0;
  std::vector<int> started;
  auto fn = [&](int item) -> asio::awaitable<void> {
    started.push_back(item);
    peak = std::max(peak, ++inside);
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(item % 3));
    co_await t.async_wait(asio::use_awaitable);
    --inside;
  };
  asio::co_spawn(io, bounded_for_each(items, 4, fn, "test item"), asio::detached);
  io.run();
  EXPECT_EQ(peak, 4);
  EXPECT_EQ(started, items);
  EXPECT_EQ(inside, 0);
}

TEST(BoundedForEach, AnExceptionInOneItemDoesNotStopTheOthers) {
  asio::io_context io;
  std::vector<int> items{1, 2, 3, 4, 5, 6};
  std::vector<int> done;
  auto fn = [&](int item) -> asio::awaitable<void> {
    if (item == 2) throw std::runtime_error("boom");
    co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    done.push_back(item);
  };
  asio::co_spawn(io, bounded_for_each(items, 2, fn, "test item"), asio::detached);
  io.run();
  EXPECT_EQ(done.size(), 5u);
}

TEST(BoundedForEach, EmptyRangeAndLimitZero) {
  asio::io_context io;
  std::vector<int> none;
  int calls = 0;
  auto fn = [&](int) -> asio::awaitable<void> {
    ++calls;
    co_return;
  };
  asio::co_spawn(io, bounded_for_each(none, 0, fn, "nothing"), asio::detached);
  std::vector<int> three{1, 2, 3};
  asio::co_spawn(io, bounded_for_each(three, 0, fn, "limit 0 runs one at a time"), asio::detached);
  io.run();
  EXPECT_EQ(calls, 3);
}

TEST(CancelSignal, DroppedSubscriptionIsNotCalled) {
  CancelSignal signal;
  int calls = 0;
  {
    auto kept = signal.subscribe([&] { ++calls; });
    auto dropped = signal.subscribe([&] { calls += 100; });
    dropped.reset();
    EXPECT_EQ(signal.subscribers(), 1u);
    signal.cancel();
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(signal.subscribers(), 0u);
  // Subscribing after the fact runs the callback at once.
  auto late = signal.subscribe([&] { ++calls; });
  EXPECT_EQ(calls, 2);
}

TEST(CancelSignal, SubscriptionOutlivingTheSignalIsHarmless) {
  CancelSubscription subscription;
  {
    CancelSignal signal;
    subscription = signal.subscribe([] {});
  }
  subscription.reset();  // the signal's state is gone: nothing to unregister
  SUCCEED();
}

TEST(Sleep, LeavesNoSubscriptionBehind) {
  asio::io_context io;
  CancelSignal cancel;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 200; ++i) co_await sleep_for(0ms, cancel);
      },
      asio::detached);
  io.run();
  EXPECT_EQ(cancel.subscribers(), 0u);
}

TEST(Sleep, CancelFromAnotherThreadEndsTheSleep) {
  asio::io_context io;
  CancelSignal cancel;
  bool completed = true;
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { completed = co_await sleep_for(10s, cancel); }, asio::detached);
  std::thread canceller([&] {
    std::this_thread::sleep_for(30ms);
    cancel.cancel();
  });
  const auto start = Clock::now();
  io.run();
  canceller.join();
  EXPECT_FALSE(completed);
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST(Sleep, AlreadyCancelledReturnsAtOnce) {
  asio::io_context io;
  CancelSignal cancel;
  cancel.cancel();
  EXPECT_FALSE(run_task(io, sleep_for(10s, cancel)));
  EXPECT_TRUE(run_task(io, sleep_for(1ms)));
}

}  // namespace
