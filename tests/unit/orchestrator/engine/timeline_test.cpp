#include "orchestrator/engine/timeline.hpp"

#include <gtest/gtest.h>

namespace bootstorm::engine {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

api::MilestoneEvent ev(const std::string& vm, api::Milestone m, Clock::time_point at,
                       api::Source src = api::Source::watch, double res = 0.5) {
  api::MilestoneEvent e;
  e.vm = vm;
  e.milestone = m;
  e.observed_mono = at;
  e.observed_wall = std::chrono::system_clock::now();
  e.source = src;
  e.resolution_s = res;
  return e;
}

struct Recorded {
  std::string vm;
  TimelineEntry entry;
};

TEST(Timeline, FirstObservationWinsAndOffsetsAreFromStartRequested) {
  std::vector<Recorded> seen;
  MilestoneTimeline t(api::Milestone::guest_agent, [&](const std::string& vm, const TimelineEntry& e) {
    seen.push_back({vm, e});
  });
  t.add_vm("a");
  auto t0 = Clock::now();
  t.set_started("a", t0, std::chrono::system_clock::now());
  EXPECT_TRUE(t.observe(ev("a", api::Milestone::running, t0 + milliseconds(1500))));
  EXPECT_FALSE(t.observe(ev("a", api::Milestone::running, t0 + milliseconds(1700), api::Source::poll)));
  auto running = t.entry("a", api::Milestone::running);
  ASSERT_TRUE(running);
  EXPECT_NEAR(running->offset_s, 1.5, 1e-9);
  EXPECT_EQ(running->source, api::Source::watch);
  EXPECT_EQ(t.state("a"), VmState::started);
  ASSERT_EQ(seen.size(), 2u);  // start_requested + running
  EXPECT_EQ(seen[0].entry.milestone, api::Milestone::start_requested);
  EXPECT_EQ(seen[0].entry.offset_s, 0.0);
  EXPECT_EQ(seen[0].entry.source, api::Source::client);
}

TEST(Timeline, ImpliedMilestonesAreNotInvented) {
  MilestoneTimeline t(api::Milestone::guest_agent, nullptr);
  t.add_vm("a");
  auto t0 = Clock::now();
  t.set_started("a", t0, std::chrono::system_clock::now());
  t.observe(ev("a", api::Milestone::guest_agent, t0 + milliseconds(3000)));
  EXPECT_EQ(t.state("a"), VmState::ready);
  EXPECT_FALSE(t.entry("a", api::Milestone::running));
  EXPECT_FALSE(t.entry("a", api::Milestone::scheduled));
}

TEST(Timeline, ObservationsBeforeStartRequestedAreHeldAndResolved) {
  std::vector<Recorded> seen;
  MilestoneTimeline t(api::Milestone::running, [&](const std::string& vm, const TimelineEntry& e) {
    seen.push_back({vm, e});
  });
  t.add_vm("a");
  auto t0 = Clock::now();
  // vCenter: the watch reports POWERED_ON before the blocking power start call returned.
  EXPECT_TRUE(t.observe(ev("a", api::Milestone::running, t0 + milliseconds(800))));
  EXPECT_FALSE(t.observe(ev("a", api::Milestone::running, t0 + milliseconds(900))));
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(t.state("a"), VmState::waiting);
  t.set_started("a", t0 + milliseconds(100), std::chrono::system_clock::now());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].entry.milestone, api::Milestone::running);
  EXPECT_NEAR(seen[1].entry.offset_s, 0.7, 1e-9);
  EXPECT_EQ(t.state("a"), VmState::ready);
}

TEST(Timeline, TimeoutMarksFailedWithReasonAndLastSeen) {
  MilestoneTimeline t(api::Milestone::guest_agent, nullptr);
  t.add_vm("slow");
  t.add_vm("fast");
  t.add_vm("never-started");
  auto t0 = Clock::now();
  t.set_started("slow", t0, std::chrono::system_clock::now());
  t.set_started("fast", t0, std::chrono::system_clock::now());
  t.observe(ev("slow", api::Milestone::running, t0 + milliseconds(12300)));
  t.observe(ev("fast", api::Milestone::guest_agent, t0 + milliseconds(2000)));
  EXPECT_TRUE(t.expire(t0 + std::chrono::seconds(599), std::chrono::seconds(600)).empty());
  auto failed = t.expire(t0 + std::chrono::seconds(600), std::chrono::seconds(600));
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].first, "slow");
  EXPECT_EQ(failed[0].second, "timeout waiting for guest_agent after 600 s (last seen: running at 12.3 s)");
  EXPECT_EQ(t.state("slow"), VmState::failed);
  EXPECT_EQ(t.reason("slow"), failed[0].second);
  // A late observation of a failed VM changes nothing.
  EXPECT_FALSE(t.observe(ev("slow", api::Milestone::guest_agent, t0 + std::chrono::seconds(601))));
  EXPECT_EQ(t.state("slow"), VmState::failed);
  EXPECT_EQ(t.state("fast"), VmState::ready);
  // Not started: not expired by the storm timeout (the engine fails it when the start call fails).
  EXPECT_FALSE(t.finished());
  t.fail("never-started", "start failed: refused");
  EXPECT_TRUE(t.finished());
  EXPECT_EQ(t.count(VmState::failed), 2u);
  EXPECT_EQ(t.count(VmState::ready), 1u);
}

TEST(Timeline, UnknownVmsAreIgnoredAndFailIsFinal) {
  MilestoneTimeline t(api::Milestone::running, nullptr);
  t.add_vm("a");
  EXPECT_FALSE(t.observe(ev("other", api::Milestone::running, Clock::now())));
  auto t0 = Clock::now();
  t.set_started("a", t0, std::chrono::system_clock::now());
  t.observe(ev("a", api::Milestone::running, t0 + milliseconds(10)));
  t.fail("a", "late");  // no effect once ready
  EXPECT_EQ(t.state("a"), VmState::ready);
  EXPECT_EQ(t.last_seen("a"), "running at 0.0 s");
  EXPECT_EQ(t.last_seen("missing"), "nothing");
}

}  // namespace
}  // namespace bootstorm::engine
