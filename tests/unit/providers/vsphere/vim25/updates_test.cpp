// UpdateStream and wait_for_tasks over a scripted /sdk: the version is kept and resent (so a call that failed
// is repeated from where it was, nothing lost or doubled), and tasks end in success or a fault explained.
#include "providers/vsphere/vim25/updates.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

#include "protocol/vim25/messages.hpp"
#include "tests/support/run_task.hpp"
#include "tests/unit/providers/vsphere/vim25/scripted_sdk.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using namespace bootstorm::test_support::scripted_sdk;
using bootstorm::testing::run_task;

class Vim25Updates : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(run_task(io, session.login())); }
  asio::io_context io;
  ScriptedSdk sdk;
  Session session{io.get_executor(), sdk,
                  vsphere::SessionSettings{"https://vc", "u", "p", std::chrono::seconds(5)}};
};

TEST_F(Vim25Updates, TheVersionIsKeptAndAFailedCallIsRepeatedFromIt) {
  sdk.script = {collector_created(), filter_created(),
                update("1", ""),     "",
                update("2", ""),     R"(<WaitForUpdatesExResponse xmlns="urn:vim25"/>)"};
  UpdateStream stream(session);
  ASSERT_TRUE(run_task(io, stream.create(objects_filter_spec({{"VirtualMachine", "vm-1"}}, "VirtualMachine",
                                                             {"runtime.powerState"}))));
  EXPECT_EQ(stream.filter().value, "session[1]f1");
  ASSERT_TRUE(run_task(io, stream.next(WaitOptions{10, std::nullopt})));
  EXPECT_EQ(stream.version(), "1");
  auto dropped = run_task(io, stream.next(WaitOptions{10, std::nullopt}));
  ASSERT_FALSE(dropped);
  EXPECT_EQ(stream.version(), "1");  // nothing was lost: the repeat asks from 1 again
  ASSERT_TRUE(run_task(io, stream.next(WaitOptions{10, std::nullopt})));
  EXPECT_EQ(stream.version(), "2");
  auto idle = run_task(io, stream.next(WaitOptions{0, std::nullopt}));  // nothing new: same version
  ASSERT_TRUE(idle);
  EXPECT_TRUE(idle->filters.empty());
  EXPECT_EQ(stream.version(), "2");
  ASSERT_EQ(sdk.bodies.size(), 6u);
  // The filter and the waits address the stream's own collector, not the session's.
  EXPECT_NE(sdk.bodies[0].find("<CreatePropertyCollector "), std::string::npos) << sdk.bodies[0];
  EXPECT_NE(sdk.bodies[1].find(">session[1]c1</_this>"), std::string::npos) << sdk.bodies[1];
  EXPECT_NE(sdk.bodies[2].find(">session[1]c1</_this><version></version>"), std::string::npos)
      << sdk.bodies[2];
  EXPECT_NE(sdk.bodies[3].find("<version>1</version>"), std::string::npos) << sdk.bodies[3];
  EXPECT_NE(sdk.bodies[4].find("<version>1</version>"), std::string::npos) << sdk.bodies[4];
  EXPECT_NE(sdk.bodies[5].find("<version>2</version><options><maxWaitSeconds>0</maxWaitSeconds></options>"),
            std::string::npos)
      << sdk.bodies[5];
}

TEST_F(Vim25Updates, AForgottenVersionStartsOverFromTheFullStateAndSaysSo) {
  const std::string on =
      change("runtime.powerState", "<val xsi:type=\"VirtualMachinePowerState\">poweredOn</val>");
  sdk.script = {collector_created(),
                filter_created(),
                update("1", vm_change("vm-1", on, "enter")),
                fault("InvalidCollectorVersion"),
                update("1", vm_change("vm-1", on, "enter") + vm_change("vm-2", on, "enter")),
                update("2", vm_change("vm-2", on))};
  UpdateStream stream(session);
  ASSERT_TRUE(run_task(io, stream.create(objects_filter_spec({{"VirtualMachine", "vm-1"}}, "VirtualMachine",
                                                             {"runtime.powerState"}))));
  auto first = run_task(io, stream.next(WaitOptions{1, std::nullopt}));
  ASSERT_TRUE(first) << first.error().what();
  EXPECT_FALSE(first->restarted);
  auto again = run_task(io, stream.next(WaitOptions{1, std::nullopt}));
  ASSERT_TRUE(again) << again.error().what();
  EXPECT_TRUE(again->restarted);
  ASSERT_EQ(again->filters.size(), 1u);
  EXPECT_EQ(again->filters[0].objects.size(), 2u);  // the whole state, not only what changed
  auto next = run_task(io, stream.next(WaitOptions{1, std::nullopt}));
  ASSERT_TRUE(next);
  EXPECT_FALSE(next->restarted);
  EXPECT_EQ(stream.version(), "2");
  ASSERT_EQ(sdk.bodies.size(), 6u);
  EXPECT_NE(sdk.bodies[3].find("<version>1</version>"), std::string::npos) << sdk.bodies[3];
  EXPECT_NE(sdk.bodies[4].find("<version></version>"), std::string::npos) << sdk.bodies[4];
  EXPECT_NE(sdk.bodies[5].find("<version>1</version>"), std::string::npos) << sdk.bodies[5];
}

TEST_F(Vim25Updates, AnotherFaultOfTheWaitIsAnErrorNamingIt) {
  sdk.script = {collector_created(), filter_created(), fault("InvalidCollectorVersion")};
  UpdateStream stream(session);
  ASSERT_TRUE(run_task(io, stream.create(objects_filter_spec({{"VirtualMachine", "vm-1"}}, "VirtualMachine",
                                                             {"runtime.powerState"}))));
  // From the empty version there is nothing to start over from: the fault is the answer.
  auto failed = run_task(io, stream.next(WaitOptions{1, std::nullopt}));
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("InvalidCollectorVersion"), std::string::npos)
      << failed.error().what();
  EXPECT_NE(failed.error().message.find("WaitForUpdatesEx"), std::string::npos) << failed.error().what();
}

TEST_F(Vim25Updates, AWaitSentTwiceIsMarkedResent) {
  sdk.script = {collector_created(), filter_created(), Answer(update("1", ""), 2)};
  UpdateStream stream(session);
  ASSERT_TRUE(run_task(io, stream.create(objects_filter_spec({{"VirtualMachine", "vm-1"}}, "VirtualMachine",
                                                             {"runtime.powerState"}))));
  auto set = run_task(io, stream.next(WaitOptions{1, std::nullopt}));
  ASSERT_TRUE(set);
  EXPECT_TRUE(set->resent);
}

TEST_F(Vim25Updates, TasksEndInSuccessOrAnExplainedFault) {
  sdk.script = {
      collector_created(),
      filter_created(),
      update("1",
             task_change("task-1", change("info.state", "<val xsi:type=\"TaskInfoState\">running</val>")) +
                 task_change("task-2", change("info.state", "<val xsi:type=\"TaskInfoState\">queued</val>"))),
      update("2",
             task_change("task-1", change("info.state", "<val xsi:type=\"TaskInfoState\">success</val>") +
                                       change("info.result",
                                              "<val type=\"VirtualMachine\" "
                                              "xsi:type=\"ManagedObjectReference\">vm-7</val>"))),
      update("3",
             task_change(
                 "task-2",
                 change("info.state", "<val xsi:type=\"TaskInfoState\">error</val>") +
                     change("info.error",
                            "<val xsi:type=\"LocalizedMethodFault\"><fault xsi:type=\"DuplicateName\">"
                            "<name>bs-1-a</name><object type=\"Folder\">group-v3</object></fault>"
                            "<localizedMessage>The name 'bs-1-a' already exists.</localizedMessage></val>"))),
      collector_destroyed()};
  auto outcomes = run_task(io, wait_for_tasks(session, {{"Task", "task-1"}, {"Task", "task-2"}},
                                              std::chrono::seconds(30), "clone bs-1-a"));
  ASSERT_TRUE(outcomes) << outcomes.error().what();
  ASSERT_EQ(outcomes->size(), 2u);
  EXPECT_EQ((*outcomes)[0].state, "success");
  ASSERT_TRUE((*outcomes)[0].result);
  EXPECT_EQ((*outcomes)[0].result->moref(), (MoRef{"VirtualMachine", "vm-7"}));
  EXPECT_EQ((*outcomes)[1].state, "error");
  ASSERT_TRUE((*outcomes)[1].error);
  EXPECT_EQ((*outcomes)[1].error->kind, ErrorKind::conflict);
  EXPECT_NE((*outcomes)[1].error->message.find("clone bs-1-a failed: the name 'bs-1-a' is already taken"),
            std::string::npos)
      << (*outcomes)[1].error->message;
  EXPECT_NE(sdk.bodies.back().find("<DestroyPropertyCollector "),
            std::string::npos);  // the collector and its filter are not left behind
}

TEST_F(Vim25Updates, TasksStillRunningAtTheDeadlineAreATimeoutNamingHowMany) {
  sdk.script = {collector_created(), filter_created(),
                update("1", task_change("task-1", change("info.state",
                                                         "<val xsi:type=\"TaskInfoState\">running</val>"))),
                collector_destroyed()};
  auto outcomes =
      run_task(io, wait_for_tasks(session, {{"Task", "task-1"}}, std::chrono::milliseconds(0), "power on"));
  ASSERT_FALSE(outcomes);
  EXPECT_EQ(outcomes.error().kind, ErrorKind::timeout);
  EXPECT_NE(outcomes.error().message.find("power on: 1 of 1 vCenter tasks still running"), std::string::npos)
      << outcomes.error().message;
}

}  // namespace
