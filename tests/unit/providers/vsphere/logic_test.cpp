// Unit tests of the provider's pure logic: resolution bookkeeping, error mapping, the /api <-> /rest
// translation layer, base64 and the run-id safety interlock.
#include <gtest/gtest.h>

#include "providers/api/provider.hpp"
#include "providers/vsphere/dialect.hpp"
#include "providers/vsphere/milestone_tracker.hpp"
#include "providers/vsphere/session.hpp"
#include "providers/vsphere/vcenter_error.hpp"

using namespace bootstorm;
using namespace bootstorm::vsphere;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

Probe probe_at(Clock::time_point sent, Clock::time_point arrived) {
  return Probe{sent, arrived, std::chrono::system_clock::now()};
}

TEST(MilestoneTracker, ResolutionIsGapBetweenLastNegativeSentAndPositiveArrival) {
  const auto t0 = Clock::now();
  MilestoneTracker tracker({api::Milestone::running, api::Milestone::guest_agent}, t0);
  tracker.add_vm("vm1");
  tracker.negative("vm1", api::Milestone::running, probe_at(t0 + 100ms, t0 + 110ms));
  tracker.negative("vm1", api::Milestone::running, probe_at(t0 + 300ms, t0 + 310ms));
  auto events = tracker.positive("vm1", api::Milestone::running, probe_at(t0 + 500ms, t0 + 520ms));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].milestone, api::Milestone::running);
  EXPECT_EQ(events[0].observed_mono, t0 + 520ms);
  EXPECT_NEAR(events[0].resolution_s, 0.220, 1e-9);
  EXPECT_EQ(events[0].source, api::Source::poll);
  // Reached milestones never fire twice.
  EXPECT_TRUE(tracker.positive("vm1", api::Milestone::running, probe_at(t0 + 600ms, t0 + 610ms)).empty());
}

TEST(MilestoneTracker, WithoutANegativeTheBaselineBoundsTheInterval) {
  const auto t0 = Clock::now();
  MilestoneTracker tracker({api::Milestone::running}, t0);
  tracker.add_vm("vm1");
  auto events = tracker.positive("vm1", api::Milestone::running, probe_at(t0 + 2s, t0 + 2s + 5ms));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NEAR(events[0].resolution_s, 2.005, 1e-9);
}

TEST(MilestoneTracker, AKnownStartTimeIsTheVmsBaseline) {
  const auto t0 = std::chrono::steady_clock::now();
  MilestoneTracker tracker({api::Milestone::running}, t0 + 5s);  // observe began after the start
  tracker.add_vm("vm1", t0 + 1s);
  tracker.add_vm("vm2");
  auto e1 = tracker.positive("vm1", api::Milestone::running, probe_at(t0 + 6s, t0 + 6s));
  auto e2 = tracker.positive("vm2", api::Milestone::running, probe_at(t0 + 6s, t0 + 6s));
  ASSERT_EQ(e1.size(), 1u);
  ASSERT_EQ(e2.size(), 1u);
  EXPECT_NEAR(e1[0].resolution_s, 5.0, 1e-9);
  EXPECT_NEAR(e2[0].resolution_s, 1.0, 1e-9);
}

TEST(MilestoneTracker, NegativeCascadesToLaterMilestonesAndPositiveToEarlierOnes) {
  const auto t0 = Clock::now();
  MilestoneTracker tracker(
      {api::Milestone::running, api::Milestone::guest_agent, api::Milestone::ip_assigned}, t0);
  tracker.add_vm("vm1");
  // A powered-off answer at 1 s means neither Tools nor an IP yet either.
  tracker.negative("vm1", api::Milestone::running, probe_at(t0 + 1s, t0 + 1s + 1ms));
  // Tools RUNNING seen first (the list poll lagged): running is implied, with the same bound.
  auto events =
      tracker.positive("vm1", api::Milestone::guest_agent, probe_at(t0 + 3s, t0 + 3s + 2ms), "RUNNING");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].milestone, api::Milestone::running);
  EXPECT_EQ(events[1].milestone, api::Milestone::guest_agent);
  EXPECT_NEAR(events[1].resolution_s, 2.002, 1e-9);
  EXPECT_EQ(events[1].detail, "RUNNING");
  EXPECT_EQ(tracker.next_pending("vm1"), api::Milestone::ip_assigned);
  // The IP's lower bound is the running negative until a later negative of its own.
  tracker.negative("vm1", api::Milestone::ip_assigned, probe_at(t0 + 3500ms, t0 + 3510ms));
  events = tracker.positive("vm1", api::Milestone::ip_assigned, probe_at(t0 + 4s, t0 + 4010ms), "10.0.0.7");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NEAR(events[0].resolution_s, 0.510, 1e-9);
  EXPECT_EQ(events[0].detail, "10.0.0.7");
  EXPECT_TRUE(tracker.all_reached());
}

TEST(MilestoneTracker, AnOlderNegativeNeverWidensALaterBound) {
  const auto t0 = Clock::now();
  MilestoneTracker tracker({api::Milestone::running, api::Milestone::guest_agent}, t0);
  tracker.add_vm("vm1");
  tracker.negative("vm1", api::Milestone::guest_agent, probe_at(t0 + 2s, t0 + 2s));
  tracker.negative("vm1", api::Milestone::running, probe_at(t0 + 1s, t0 + 1s));  // arrives late, sent earlier
  auto events = tracker.positive("vm1", api::Milestone::guest_agent, probe_at(t0 + 3s, t0 + 3s));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_NEAR(events[1].resolution_s, 1.0, 1e-9);
  EXPECT_EQ(tracker.pending_vms(), 0u);
}

TEST(VcenterError, ParsesApiErrorBody) {
  auto e = parse_vcenter_error(
      404,
      R"({"error_type":"NOT_FOUND","messages":[{"id":"x","default_message":"VM vm-9 not found","args":[]}]})");
  EXPECT_EQ(e.status, 404);
  EXPECT_EQ(e.error_type, "NOT_FOUND");
  EXPECT_EQ(e.default_message, "VM vm-9 not found");
  Error err = to_error(e, "reading VM vm-9", "https://vc.example.com");
  EXPECT_EQ(err.kind, ErrorKind::not_found);
  EXPECT_EQ(err.status, 404);
  EXPECT_NE(err.message.find("VM vm-9 not found"), std::string::npos);
  EXPECT_NE(err.message.find("https://vc.example.com"), std::string::npos);
  EXPECT_NE(err.message.find("HTTP 404 NOT_FOUND"), std::string::npos);
}

TEST(VcenterError, ParsesLegacyRestErrorBody) {
  auto e = parse_vcenter_error(400, R"({"type":"com.vmware.vapi.std.errors.already_in_desired_state",
               "value":{"messages":[{"id":"y","default_message":"already on","args":[]}]}})");
  EXPECT_EQ(e.error_type, "ALREADY_IN_DESIRED_STATE");
  EXPECT_EQ(e.default_message, "already on");
  EXPECT_EQ(to_error(e, "start", "u").kind, ErrorKind::conflict);
}

TEST(VcenterError, MapsKindsByErrorType) {
  EXPECT_EQ(to_error({500, "RESOURCE_BUSY", "busy"}, "op", "u").kind, ErrorKind::conflict);
  EXPECT_EQ(to_error({401, "UNAUTHENTICATED", ""}, "op", "u").kind, ErrorKind::auth);
  EXPECT_EQ(to_error({504, "TIMED_OUT", ""}, "op", "u").kind, ErrorKind::timeout);
  EXPECT_EQ(to_error({400, "INVALID_ARGUMENT", "bad"}, "op", "u").kind, ErrorKind::api);
  auto unavailable = to_error({503, "SERVICE_UNAVAILABLE", "down"}, "op", "u");
  EXPECT_EQ(unavailable.kind, ErrorKind::api);
  EXPECT_FALSE(unavailable.hint.empty());
}

TEST(VcenterError, NonVcenterBodyKeepsStatusAndText) {
  auto e = parse_vcenter_error(502, "<html>Bad Gateway</html>");
  EXPECT_TRUE(e.error_type.empty());
  EXPECT_EQ(e.default_message, "<html>Bad Gateway</html>");
  EXPECT_EQ(to_error(e, "op", "u").kind, ErrorKind::http_status);
  EXPECT_EQ(to_error(e, "op", "u").status, 502);
}

TEST(Dialect, ApiPaths) {
  Paths p(Dialect::api);
  EXPECT_EQ(p.session(), "/api/session");
  EXPECT_EQ(p.vm_list({{"names", {"a b", "c"}}, {"power_states", {"POWERED_ON"}}}),
            "/api/vcenter/vm?names=a%20b&names=c&power_states=POWERED_ON");
  EXPECT_EQ(p.clone(false), "/api/vcenter/vm?action=clone");
  EXPECT_EQ(p.clone(true), "/api/vcenter/vm?action=instant-clone");
  EXPECT_EQ(p.power_action("vm-1", "start"), "/api/vcenter/vm/vm-1/power?action=start");
  EXPECT_EQ(p.tools("vm-1"), "/api/vcenter/vm/vm-1/tools");
  EXPECT_EQ(p.guest_identity("vm-1"), "/api/vcenter/vm/vm-1/guest/identity");
  EXPECT_EQ(p.guest_customization("vm-1"), "/api/vcenter/vm/vm-1/guest/customization");
  EXPECT_EQ(p.wrap_spec({{"name", "x"}}), (nlohmann::json{{"name", "x"}}));
  EXPECT_EQ(p.unwrap(nlohmann::json("tok")), nlohmann::json("tok"));
}

TEST(Dialect, LegacyRestPaths) {
  Paths p(Dialect::rest);
  EXPECT_EQ(p.session(), "/rest/com/vmware/cis/session");
  EXPECT_EQ(p.vm_list({{"names", {"g"}}}), "/rest/vcenter/vm?filter.names.1=g");
  EXPECT_EQ(p.vm_list({{"vms", {"vm-1", "vm-2"}}, {"power_states", {"POWERED_ON"}}}),
            "/rest/vcenter/vm?filter.vms.1=vm-1&filter.vms.2=vm-2&filter.power_states.1=POWERED_ON");
  EXPECT_EQ(p.guest_customization("vm-1"), "/rest/vcenter/vm/vm-1/guest/customization");
  EXPECT_EQ(p.host_list(), "/rest/vcenter/host");
  EXPECT_EQ(p.clone(false), "/rest/vcenter/vm?action=clone");
  EXPECT_EQ(p.power_action("vm-1", "start"), "/rest/vcenter/vm/vm-1/power/start");
  EXPECT_EQ(p.power("vm-1"), "/rest/vcenter/vm/vm-1/power");
  EXPECT_EQ(p.wrap_spec({{"name", "x"}}), (nlohmann::json{{"spec", {{"name", "x"}}}}));
  EXPECT_EQ(p.unwrap(nlohmann::json{{"value", "tok"}}), nlohmann::json("tok"));
  EXPECT_TRUE(p.unwrap(nlohmann::json("bare")).is_null());
}

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode("Aladdin:open sesame"), "QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
}

TEST(NameSafety, OnlyNamesWithThisRunsPrefixQualify) {
  EXPECT_TRUE(api::name_carries_run_id("bs-3f9a2c-4x-r740-001", "3f9a2c"));
  EXPECT_FALSE(api::name_carries_run_id("bs-3f9a2d-4x-r740-001", "3f9a2c"));
  EXPECT_FALSE(api::name_carries_run_id("prod-db-01", "3f9a2c"));
  EXPECT_FALSE(api::name_carries_run_id("bs-3f9a2c-", "3f9a2c"));
  EXPECT_FALSE(api::name_carries_run_id("xbs-3f9a2c-001", "3f9a2c"));
  EXPECT_FALSE(api::name_carries_run_id("bs--001", ""));
}

}  // namespace
