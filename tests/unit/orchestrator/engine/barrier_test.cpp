#include "orchestrator/engine/barrier.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "tests/unit/orchestrator/engine/fake_provider.hpp"

namespace bootstorm::engine {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Fired {
  Expected<FireReport> report = make_error(ErrorKind::internal, "not run");
  std::vector<std::string> completed;
  std::vector<std::string> failed;
};

Fired fire(test::FakeBehaviour b, std::shared_ptr<test::FakeRecord> rec, std::size_t n, BarrierOptions opts,
           CancelSignal cancel = {}) {
  boost::asio::io_context io;
  api::ProviderConfig cfg;
  cfg.run_id = "abc123";
  test::FakeProvider provider(io.get_executor(), cfg, std::move(b), rec);
  std::vector<api::VmHandle> vms;
  for (std::size_t i = 0; i < n; ++i)
    vms.push_back({"bs-abc123-s-" + std::to_string(100 + i), "vm-" + std::to_string(i), "h", "s"});
  Fired out;
  StartBarrier barrier(provider, opts);
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        out.report = co_await barrier.fire(
            vms,
            [&](const api::VmHandle& vm, const Expected<api::StartResult>& r) {
              (r ? out.completed : out.failed).push_back(vm.name);
            },
            cancel);
      },
      boost::asio::detached);
  io.run();
  return out;
}

TEST(StartBarrier, SimultaneousStartsOverlapEvenWhenStartBlocks) {
  test::FakeBehaviour b;
  b.start_block = milliseconds(300);  // like vCenter: the call returns when the VM is on
  auto rec = std::make_shared<test::FakeRecord>();
  BarrierOptions opts;
  opts.max_concurrent = 64;
  auto out = fire(b, rec, 20, opts);
  ASSERT_TRUE(out.report) << out.report.error().what();
  EXPECT_EQ(out.report->released, 20u);
  EXPECT_EQ(out.report->succeeded, 20u);
  EXPECT_EQ(out.completed.size(), 20u);
  EXPECT_EQ(rec->prepare_storm_expected, 20u);
  // prepare_storm came before the first start.
  ASSERT_FALSE(rec->calls.empty());
  EXPECT_EQ(rec->calls.front(), "prepare_storm");
  // Every start was in flight at the same time: nothing serialized behind a blocking call.
  EXPECT_EQ(rec->peak_starts_in_flight, 20u);
  EXPECT_EQ(out.report->peak_in_flight, 20u);
  // Serialized starts would spread the writes over 19 x 300 ms; released together they fall within one call.
  EXPECT_LT(out.report->fire_skew_ms, 300.0);
  ASSERT_TRUE(out.report->first_written && out.report->last_written);
  const double skew =
      std::chrono::duration<double, std::milli>(*out.report->last_written - *out.report->first_written)
          .count();
  EXPECT_DOUBLE_EQ(out.report->fire_skew_ms, skew);
}

TEST(StartBarrier, MaxConcurrentBoundsStartsInFlight) {
  test::FakeBehaviour b;
  b.start_block = milliseconds(40);
  auto rec = std::make_shared<test::FakeRecord>();
  BarrierOptions opts;
  opts.max_concurrent = 4;
  auto out = fire(b, rec, 12, opts);
  ASSERT_TRUE(out.report);
  EXPECT_EQ(out.report->succeeded, 12u);
  EXPECT_EQ(rec->peak_starts_in_flight, 4u);
  // The provider opens connections for the starts in flight, not for all of them.
  EXPECT_EQ(rec->prepare_storm_expected, 4u);
}

TEST(BurstConcurrency, EveryStartAtOnceUnlessThePlanOrThePlatformLimitsIt) {
  api::Capabilities pipelined;  // KubeVirt: no limit of its own
  EXPECT_EQ(burst_concurrency(0, pipelined, 1000), 1000u);
  EXPECT_EQ(burst_concurrency(256, pipelined, 1000), 256u);
  EXPECT_EQ(burst_concurrency(5000, pipelined, 1000), 1000u);  // never more than there are starts
  EXPECT_EQ(burst_concurrency(0, pipelined, 0), 1u);

  api::Capabilities rest;  // vCenter REST: its operation limit
  rest.start_burst_limit = 640;
  EXPECT_EQ(burst_concurrency(0, rest, 1000), 640u);
  EXPECT_EQ(burst_concurrency(0, rest, 24), 24u);
  EXPECT_EQ(burst_concurrency(1000, rest, 1000), 1000u);  // the plan asked for it

  api::Capabilities batched = rest;  // one PowerOnMultiVM call carries them all
  batched.starts_batched = true;
  EXPECT_EQ(burst_concurrency(0, batched, 1000), 1000u);
  EXPECT_EQ(burst_concurrency(100, batched, 1000), 100u);
}

TEST(StartBarrier, RampSpacesReleasesAtPerSecond) {
  test::FakeBehaviour b;
  auto rec = std::make_shared<test::FakeRecord>();
  BarrierOptions opts;
  opts.ramp = true;
  opts.per_second = 20;  // one every 50 ms
  const std::size_t n = 8;
  auto out = fire(b, rec, n, opts);
  ASSERT_TRUE(out.report);
  ASSERT_EQ(rec->written.size(), n);
  const auto opened = out.report->released_at;
  for (std::size_t i = 0; i < n; ++i) {
    auto name = "bs-abc123-s-" + std::to_string(100 + i);
    auto offset = rec->written.at(name) - opened;
    // Timers never fire early: the i-th start is written no sooner than i/perSecond after the opening.
    EXPECT_GE(offset, milliseconds(50 * i)) << name;
  }
  // Ordered by index.
  for (std::size_t i = 1; i < n; ++i) {
    EXPECT_GT(rec->written.at("bs-abc123-s-" + std::to_string(100 + i)),
              rec->written.at("bs-abc123-s-" + std::to_string(100 + i - 1)));
  }
  EXPECT_GE(out.report->fire_skew_ms, 50.0 * (n - 1));
}

TEST(StartBarrier, FailedStartsAreReportedPerVm) {
  test::FakeBehaviour b;
  b.start_fail = {"bs-abc123-s-101"};
  auto rec = std::make_shared<test::FakeRecord>();
  auto out = fire(b, rec, 3, BarrierOptions{});
  ASSERT_TRUE(out.report);
  EXPECT_EQ(out.report->succeeded, 2u);
  EXPECT_EQ(out.report->failed, 1u);
  ASSERT_EQ(out.failed.size(), 1u);
  EXPECT_EQ(out.failed[0], "bs-abc123-s-101");
}

TEST(StartBarrier, CancelStopsReleasingFurtherStarts) {
  test::FakeBehaviour b;
  CancelSignal cancel;
  int starts = 0;
  b.on_start = [&](const std::string&) {
    if (++starts == 3) cancel.cancel();
  };
  auto rec = std::make_shared<test::FakeRecord>();
  BarrierOptions opts;
  opts.ramp = true;
  opts.per_second = 100;
  auto out = fire(b, rec, 10, opts, cancel);
  ASSERT_TRUE(out.report);
  EXPECT_EQ(out.report->released, 3u);
  EXPECT_EQ(out.report->not_released, 7u);
  EXPECT_EQ(out.failed.size(), 7u);  // reported as cancelled
  EXPECT_EQ(rec->written.size(), 3u);
}

}  // namespace
}  // namespace bootstorm::engine
