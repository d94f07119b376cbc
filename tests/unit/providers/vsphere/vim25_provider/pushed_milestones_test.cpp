// PushedMilestones: pushed VM changes become milestones stamped at the answer's arrival, with the resolution
// the protocol allows (back to the call before, or the VM's start), earlier milestones implied by later
// ones, each reported once, and runs on another host than planned reported once.
#include "providers/vsphere/vim25_provider/pushed_milestones.hpp"

#include <gtest/gtest.h>

namespace {

using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

Value text(std::string xsi_type, std::string value) {
  Value v;
  v.xsi_type = std::move(xsi_type);
  v.text = std::move(value);
  return v;
}

Value moref(std::string type, std::string value) {
  Value v = text("ManagedObjectReference", std::move(value));
  v.moref_type = std::move(type);
  return v;
}

ObjectUpdate update(std::string kind, std::string vm, std::vector<std::pair<std::string, Value>> changes) {
  ObjectUpdate u;
  u.kind = std::move(kind);
  u.obj = {"VirtualMachine", std::move(vm)};
  for (auto& [name, value] : changes) u.changes.push_back({name, "assign", std::move(value)});
  return u;
}

UpdateSet set_of(std::vector<ObjectUpdate> objects) {
  UpdateSet s;
  s.version = "1";
  s.filters.push_back({{"PropertyFilter", "f"}, std::move(objects), {}});
  return s;
}

class PushedMilestonesTest : public ::testing::Test {
 protected:
  steady::time_point t0 = steady::now();
  steady::time_point at(int ms) { return t0 + milliseconds(ms); }
  UpdateWindow window(int previous_sent_ms, int arrived_ms) {
    return {at(previous_sent_ms), at(arrived_ms), std::chrono::system_clock::now()};
  }
};

TEST_F(PushedMilestonesTest, AChangeIsBoundedByTheCallBeforeAndTheVmsStart) {
  PushedMilestones p(at(0));
  p.add_vm("bs-1-a", "vm-1", "host-1", at(100));
  p.add_vm("bs-1-b", "vm-2", "host-1", at(100));
  // vm-1 on: the call before was sent at 500 ms, after its start: the resolution reaches back to 500.
  auto events =
      p.apply(set_of({update("modify", "vm-1",
                             {{"runtime.powerState", text("VirtualMachinePowerState", "poweredOn")}})}),
              window(500, 620));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].vm, "bs-1-a");
  EXPECT_EQ(events[0].milestone, api::Milestone::running);
  EXPECT_EQ(events[0].observed_mono, at(620));
  EXPECT_NEAR(events[0].resolution_s, 0.120, 1e-9);
  EXPECT_EQ(events[0].source, api::Source::watch);
  // vm-2's start was written later than the call before was sent: the start bounds it.
  p.start_written("vm-2", at(700));
  events = p.apply(set_of({update("modify", "vm-2",
                                  {{"runtime.powerState", text("VirtualMachinePowerState", "poweredOn")}})}),
                   window(600, 750));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NEAR(events[0].resolution_s, 0.050, 1e-9);
}

TEST_F(PushedMilestonesTest, AnAddressImpliesToolsAndPowerAndEachIsReportedOnce) {
  PushedMilestones p(at(0));
  p.add_vm("bs-1-a", "vm-1", "", at(10));
  auto events =
      p.apply(set_of({update("modify", "vm-1", {{"guest.ipAddress", text("xsd:string", "10.0.0.7")}})}),
              window(200, 300));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].milestone, api::Milestone::running);
  EXPECT_EQ(events[1].milestone, api::Milestone::guest_agent);
  EXPECT_EQ(events[2].milestone, api::Milestone::ip_assigned);
  EXPECT_EQ(events[2].detail, "10.0.0.7");
  EXPECT_TRUE(p.all_reached());
  // The same state again (a repeat after a reconnect) reports nothing.
  EXPECT_TRUE(
      p.apply(set_of({update("enter", "vm-1",
                             {{"guest.ipAddress", text("xsd:string", "10.0.0.7")},
                              {"runtime.powerState", text("VirtualMachinePowerState", "poweredOn")}})}),
              window(400, 500))
          .empty());
}

TEST_F(PushedMilestonesTest, AnEnteringObjectIsBoundedOnlyByTheStart) {
  PushedMilestones p(at(0));
  p.add_vm("bs-1-a", "vm-1", "", at(50));
  // The first answer shows Tools already running: it may have happened right after the start.
  auto events = p.apply(
      set_of(
          {update("enter", "vm-1", {{"guest.toolsRunningStatus", text("xsd:string", "guestToolsRunning")}})}),
      window(900, 1000));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_NEAR(events[1].resolution_s, 0.950, 1e-9);
  EXPECT_EQ(p.pending_vms(), 1u);  // no address yet
}

TEST_F(PushedMilestonesTest, AVmOnBeforeTheStormsStartsIsNeverMeasuredNorWaitedFor) {
  PushedMilestones p(at(0));
  p.add_vm("bs-1-a", "vm-1", "");
  p.add_vm("bs-1-b", "vm-2", "");
  // The filter's initial state, read before any start was sent: vm-1 is on already, vm-2 off.
  UpdateWindow initial = window(0, 40);
  initial.before_starts = true;
  auto events = p.apply(
      set_of(
          {update("enter", "vm-1", {{"runtime.powerState", text("VirtualMachinePowerState", "poweredOn")}}),
           update("enter", "vm-2",
                  {{"runtime.powerState", text("VirtualMachinePowerState", "poweredOff")}})}),
      initial);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(p.take_already_on(), std::vector<std::string>{"bs-1-a"});
  EXPECT_TRUE(p.take_already_on().empty()) << "each is named once";
  EXPECT_EQ(p.pending_vms(), 1u) << "vm-1 is not waited for";
  // Its Tools and address later: still not its storm's boot.
  events = p.apply(set_of({update("modify", "vm-1", {{"guest.ipAddress", text("xsd:string", "10.0.0.9")}}),
                           update("modify", "vm-2",
                                  {{"runtime.powerState", text("VirtualMachinePowerState", "poweredOn")}})}),
                   window(100, 200));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].vm, "bs-1-b");
  EXPECT_FALSE(p.reached("vm-1", api::Milestone::running));
  // After the starts went out, a VM found on in a first answer (a collector made again) is measured.
  PushedMilestones q(at(0));
  q.add_vm("bs-1-c", "vm-3", "", at(10));
  events = q.apply(set_of({update("enter", "vm-3",
                                  {{"runtime.powerState", text("VirtualMachinePowerState", "poweredOn")}})}),
                   window(0, 40));
  EXPECT_EQ(events.size(), 1u);
  EXPECT_TRUE(q.take_already_on().empty());
}

TEST_F(PushedMilestonesTest, GuestNetAddressesAndUnrelatedChangesAndUnknownVms) {
  PushedMilestones p(at(0));
  p.add_vm("bs-1-a", "vm-1", "", at(0));
  Value nic;
  nic.xsi_type = "GuestNicInfo";
  nic.fields.push_back({"ipAddress", text("xsd:string", "10.1.2.3")});
  Value net;
  net.xsi_type = "ArrayOfGuestNicInfo";
  net.fields.push_back({"GuestNicInfo", nic});
  auto events =
      p.apply(set_of({update("modify", "vm-9", {{"guest.ipAddress", text("xsd:string", "10.9.9.9")}}),
                      update("modify", "vm-1",
                             {{"guest.toolsRunningStatus", text("xsd:string", "guestToolsNotRunning")}}),
                      update("modify", "vm-1", {{"guest.net", net}})}),
              window(0, 10));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].detail, "10.1.2.3");
  EXPECT_FALSE(p.reached("vm-9", api::Milestone::running));
}

TEST_F(PushedMilestonesTest, ARunOnAnotherHostThanPlannedIsReportedOnce) {
  PushedMilestones p(at(0));
  p.add_vm("bs-1-a", "vm-1", "host-1", at(0));
  p.add_vm("bs-1-b", "vm-2", "host-2", at(0));
  (void)p.apply(set_of({update("enter", "vm-1", {{"runtime.host", moref("HostSystem", "host-3")}}),
                        update("enter", "vm-2", {{"runtime.host", moref("HostSystem", "host-2")}})}),
                window(0, 10));
  auto moves = p.take_moves();
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].vm, "bs-1-a");
  EXPECT_EQ(moves[0].planned_host_id, "host-1");
  EXPECT_EQ(moves[0].host_id, "host-3");
  (void)p.apply(set_of({update("modify", "vm-1", {{"runtime.host", moref("HostSystem", "host-4")}})}),
                window(10, 20));
  EXPECT_TRUE(p.take_moves().empty());
}

}  // namespace
