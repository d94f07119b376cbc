// VMI watch reconciliation: milestones from watch events stamped at arrival, recovery after a 410 re-list
// from the API's one-second timestamps (flagged recovered), catch-up after a reconnect, completeness.
#include "providers/kubevirt/vmi_tracker.hpp"

#include <gtest/gtest.h>

#include "protocol/kube/kube_config.hpp"
#include "providers/kubevirt/kube_objects.hpp"

namespace bootstorm::kubevirt {
namespace {
using api::Milestone;
using api::Source;
using nlohmann::json;
using namespace std::chrono_literals;

// A fixed client instant: wall 2026-11-30T10:00:10.400Z, mono derived.
ClientInstant at(double offset_s) {
  ClientInstant base{std::chrono::steady_clock::time_point(std::chrono::hours(1000)),
                     *parse_rfc3339("2026-11-30T10:00:10.400Z")};
  auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(offset_s));
  return {base.mono + d, base.wall + std::chrono::duration_cast<std::chrono::system_clock::duration>(d)};
}

json vmi(const std::string& name, const std::string& phase, const std::string& node = "",
         const std::vector<std::pair<std::string, std::string>>& transitions = {}, bool agent = false,
         const std::string& agent_time = "", const std::string& ip = "") {
  json v = {{"apiVersion", "kubevirt.io/v1"},
            {"kind", "VirtualMachineInstance"},
            {"metadata", {{"name", name}, {"namespace", "bootstorm"}, {"resourceVersion", "1"}}},
            {"status", {{"phase", phase}}}};
  if (!node.empty()) v["status"]["nodeName"] = node;
  json pts = json::array();
  for (const auto& [p, t] : transitions) pts.push_back({{"phase", p}, {"phaseTransitionTimestamp", t}});
  if (!pts.empty()) v["status"]["phaseTransitionTimestamps"] = pts;
  if (agent) {
    v["status"]["conditions"] =
        json::array({{{"type", "Ready"}, {"status", "True"}},
                     {{"type", "AgentConnected"}, {"status", "True"}, {"lastTransitionTime", agent_time}}});
  }
  if (!ip.empty()) v["status"]["interfaces"] = json::array({{{"name", "default"}, {"ipAddress", ip}}});
  return v;
}

double wall_s(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

TEST(VmiStatus, ViewDecodesMilestones) {
  auto v = view_vmi(vmi("a", "Running", "node-1",
                        {{"Scheduled", "2026-11-30T10:00:03Z"}, {"Running", "2026-11-30T10:00:05Z"}}, true,
                        "2026-11-30T10:00:08Z", "10.128.0.7"));
  EXPECT_EQ(v.name, "a");
  EXPECT_TRUE(v.scheduled);
  EXPECT_TRUE(v.running);
  EXPECT_TRUE(v.agent_connected);
  EXPECT_EQ(v.ip, "10.128.0.7");
  EXPECT_EQ(v.node, "node-1");
  EXPECT_EQ(*v.running_at, *parse_rfc3339("2026-11-30T10:00:05Z"));
  auto pending = view_vmi(vmi("a", "Scheduling"));
  EXPECT_FALSE(pending.scheduled);
  EXPECT_FALSE(pending.running);
  // AgentConnected=False is not connected.
  json off = vmi("a", "Running", "n");
  off["status"]["conditions"] = json::array({{{"type", "AgentConnected"}, {"status", "False"}}});
  EXPECT_FALSE(view_vmi(off).agent_connected);
}

TEST(VmiTracker, WatchEventsAreStampedAtArrival) {
  VmiTracker tracker({"a", "b"}, at(-10));
  EXPECT_TRUE(tracker.on_watch_object(vmi("a", "Pending"), at(0), false).empty());
  auto sched = tracker.on_watch_object(vmi("a", "Scheduled", "node-1"), at(1.25), false);
  ASSERT_EQ(sched.size(), 1u);
  EXPECT_EQ(sched[0].milestone, Milestone::scheduled);
  EXPECT_EQ(sched[0].source, Source::watch);
  EXPECT_EQ(sched[0].detail, "node-1");
  EXPECT_EQ(sched[0].observed_mono, at(1.25).mono);
  EXPECT_EQ(sched[0].observed_wall, at(1.25).wall);
  EXPECT_DOUBLE_EQ(sched[0].resolution_s, kWatchResolutionS);
  // Repeated states emit nothing new.
  EXPECT_TRUE(tracker.on_watch_object(vmi("a", "Scheduled", "node-1"), at(1.5), false).empty());
  auto all = tracker.on_watch_object(
      vmi("a", "Running", "node-1", {}, true, "2026-11-30T10:00:12Z", "10.0.0.9"), at(3), false);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].milestone, Milestone::running);
  EXPECT_EQ(all[1].milestone, Milestone::guest_agent);
  EXPECT_EQ(all[2].milestone, Milestone::ip_assigned);
  EXPECT_EQ(all[2].detail, "10.0.0.9");
  EXPECT_EQ(tracker.reached("a"), 4u);
  EXPECT_FALSE(tracker.complete());
  // VMIs of other runs/scenarios are ignored.
  EXPECT_TRUE(tracker.on_watch_object(vmi("zzz", "Running", "n"), at(3), false).empty());
  tracker.on_watch_object(vmi("b", "Running", "n", {}, true, "2026-11-30T10:00:12Z", "10.0.0.10"), at(4),
                          false);
  EXPECT_TRUE(tracker.complete());
}

TEST(VmiTracker, WatchResolutionCoversTheMeasuredLateness) {
  VmiTracker tracker({"a"}, at(-1));
  // The provider measured that the line may have waited 37 ms in the process: that is the resolution.
  auto events = tracker.on_watch_object(vmi("a", "Scheduled", "node-1"), at(0.5), false, 0.037);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_DOUBLE_EQ(events[0].resolution_s, 0.037);
  EXPECT_EQ(events[0].observed_mono, at(0.5).mono);  // the stamp stays the arrival: never moved earlier
  // Below the clock's own 1 ms, the floor applies.
  auto running = tracker.on_watch_object(vmi("a", "Running", "node-1"), at(0.6), false, 0.0002);
  ASSERT_EQ(running.size(), 1u);
  EXPECT_DOUBLE_EQ(running[0].resolution_s, kWatchResolutionS);
}

TEST(VmiTracker, RelistAfter410RecoversMissedTransitionsFromTimestamps) {
  VmiTracker tracker({"a"}, at(-20));
  tracker.on_watch_object(vmi("a", "Scheduling"), at(-8), false);
  tracker.note_stream_alive(at(-6));  // last line before the watch broke
  // The 410 re-list at 10:00:10.400 shows the VMI running with the agent connected and an IP.
  json listed = vmi("a", "Running", "node-2",
                    {{"Pending", "2026-11-30T10:00:00Z"},
                     {"Scheduled", "2026-11-30T10:00:05Z"},
                     {"Running", "2026-11-30T10:00:07Z"}},
                    true, "2026-11-30T10:00:10Z", "10.0.0.1");
  auto events = tracker.on_listed_object(listed, at(0));
  ASSERT_EQ(events.size(), 4u);
  for (const auto& ev : events) EXPECT_EQ(ev.source, Source::recovered) << api::to_string(ev.milestone);
  // Scheduled at 10:00:05 (1 s precision): reported at the latest possible instant, 10:00:06, resolution 1 s.
  EXPECT_EQ(events[0].milestone, Milestone::scheduled);
  EXPECT_DOUBLE_EQ(wall_s(events[0].observed_wall), wall_s(*parse_rfc3339("2026-11-30T10:00:06Z")));
  EXPECT_NEAR(events[0].resolution_s, 1.0, 1e-9);
  // mono follows wall: 4.4 s before the list answered.
  EXPECT_NEAR(std::chrono::duration<double>(at(0).mono - events[0].observed_mono).count(), 4.4, 1e-6);
  EXPECT_EQ(events[1].milestone, Milestone::running);
  EXPECT_DOUBLE_EQ(wall_s(events[1].observed_wall), wall_s(*parse_rfc3339("2026-11-30T10:00:08Z")));
  // The agent connected at 10:00:10 (truncated) and the list answered at 10:00:10.400: it happened in
  // [10:00:10, 10:00:10.400] — reported at the list time with a 0.4 s resolution.
  EXPECT_EQ(events[2].milestone, Milestone::guest_agent);
  EXPECT_EQ(events[2].observed_wall, at(0).wall);
  EXPECT_NEAR(events[2].resolution_s, 0.4, 1e-6);
  // No timestamp for the IP: bounded by the last moment the stream was healthy (6 s before).
  EXPECT_EQ(events[3].milestone, Milestone::ip_assigned);
  EXPECT_EQ(events[3].observed_mono, at(0).mono);
  EXPECT_NEAR(events[3].resolution_s, 6.0, 1e-6);
  EXPECT_TRUE(tracker.complete());
  // A later watch event repeating the state adds nothing.
  EXPECT_TRUE(tracker.on_watch_object(listed, at(1), false).empty());
}

TEST(VmiTracker, CatchUpEventsAfterAReconnectAreRecovered) {
  VmiTracker tracker({"a"}, at(-20));
  tracker.note_stream_alive(at(-5));
  auto events = tracker.on_watch_object(
      vmi("a", "Running", "n", {{"Scheduled", "2026-11-30T10:00:06Z"}, {"Running", "2026-11-30T10:00:07Z"}}),
      at(0),
      /*catch_up=*/true);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].source, Source::recovered);
  EXPECT_DOUBLE_EQ(wall_s(events[1].observed_wall), wall_s(*parse_rfc3339("2026-11-30T10:00:08Z")));
}

TEST(VmiTracker, FailedVmisAreReported) {
  VmiTracker tracker({"a"}, at(0));
  tracker.on_watch_object(vmi("a", "Failed", "n"), at(1), false);
  EXPECT_EQ(tracker.failed().count("a"), 1u);
  EXPECT_FALSE(tracker.complete());
}

TEST(VmiTracker, UnschedulableVmisAreListedUntilScheduled) {
  VmiTracker tracker({"a", "b"}, at(0));
  json stuck = vmi("a", "Scheduling");
  stuck["status"]["conditions"] =
      json::array({{{"type", "PodScheduled"},
                    {"status", "False"},
                    {"reason", "Unschedulable"},
                    {"message", "0/3 nodes are available: 3 Insufficient memory."}}});
  tracker.on_watch_object(stuck, at(1), false);
  json other = vmi("b", "Scheduling");
  other["status"]["conditions"] =
      json::array({{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "SomethingElse"}}});
  tracker.on_watch_object(other, at(1), false);
  ASSERT_EQ(tracker.unschedulable().size(), 1u);
  EXPECT_EQ(tracker.unschedulable().at("a"), "0/3 nodes are available: 3 Insufficient memory.");
  // Capacity freed up: the VMI is scheduled and leaves the list.
  tracker.on_watch_object(vmi("a", "Scheduled", "n", {{"Scheduled", "2026-11-30T10:00:12Z"}}), at(2), false);
  EXPECT_TRUE(tracker.unschedulable().empty());
}

}  // namespace
}  // namespace bootstorm::kubevirt
