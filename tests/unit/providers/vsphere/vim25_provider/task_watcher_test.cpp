// TaskWatcher over a scripted /sdk: a task's end that a lost answer carried, or that a forgotten collector
// version took with it, is read directly instead of being waited for until the deadline.
#include "providers/vsphere/vim25_provider/task_watcher.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>

#include "tests/support/run_task.hpp"
#include "tests/unit/providers/vsphere/vim25/scripted_sdk.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using namespace bootstorm::test_support::scripted_sdk;
using bootstorm::testing::run_task;

std::string task_read(const std::string& task, const std::string& state) {
  return R"(<RetrievePropertiesExResponse xmlns="urn:vim25"><returnval><objects><obj type="Task">)" + task +
         R"(</obj><propSet><name>info.state</name><val xsi:type="TaskInfoState">)" + state +
         "</val></propSet></objects></returnval></RetrievePropertiesExResponse>";
}

class TaskWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(run_task(io, session.login())); }
  Expected<TaskOutcome> follow(const std::string& task) {
    TaskWatcher watcher(io.get_executor(), session);
    auto outcome = run_task(io, watcher.wait({"Task", task}, std::chrono::seconds(20), "clone " + task));
    run_task(io, watcher.close());
    return outcome;
  }
  asio::io_context io;
  ScriptedSdk sdk;
  Session session{io.get_executor(), sdk,
                  vsphere::SessionSettings{"https://vc", "u", "p", std::chrono::seconds(5)}};
};

TEST_F(TaskWatcherTest, AnEndCarriedByALostAnswerIsReadDirectly) {
  sdk.script = {collector_created(), filter_created(),
                update("1", task_change("task-1", task_state("running"))),
                // The connection failed and the wait was sent again: a server that keeps no versions may
                // have spent the task's end on the answer that never came.
                Answer(R"(<WaitForUpdatesExResponse xmlns="urn:vim25"/>)", 2), task_read("task-1", "success"),
                R"(<DestroyPropertyFilterResponse xmlns="urn:vim25"/>)", collector_destroyed()};
  auto outcome = follow("task-1");
  ASSERT_TRUE(outcome) << outcome.error().what();
  EXPECT_EQ(outcome->state, "success");
  ASSERT_GE(sdk.bodies.size(), 5u);
  EXPECT_NE(sdk.bodies[4].find("<RetrievePropertiesEx "), std::string::npos) << sdk.bodies[4];
  EXPECT_NE(sdk.bodies[4].find(">task-1</obj>"), std::string::npos) << sdk.bodies[4];
}

TEST_F(TaskWatcherTest, AForgottenCollectorVersionFollowsTheTasksFromTheStart) {
  sdk.script = {
      collector_created(), filter_created(), update("1", task_change("task-1", task_state("running"))),
      fault("InvalidCollectorVersion"),
      // From the start, a server may still leave out what it reported before (govmomi's simulator
      // does): the task is read directly.
      R"(<WaitForUpdatesExResponse xmlns="urn:vim25"><returnval><version>9</version></returnval></WaitForUpdatesExResponse>)",
      task_read("task-1", "success"), R"(<DestroyPropertyFilterResponse xmlns="urn:vim25"/>)",
      collector_destroyed()};
  auto outcome = follow("task-1");
  ASSERT_TRUE(outcome) << outcome.error().what();
  EXPECT_EQ(outcome->state, "success");
  ASSERT_GE(sdk.bodies.size(), 6u);
  EXPECT_NE(sdk.bodies[3].find("<version>1</version>"), std::string::npos) << sdk.bodies[3];
  EXPECT_NE(sdk.bodies[4].find("<version></version>"), std::string::npos) << sdk.bodies[4];
  EXPECT_NE(sdk.bodies[5].find("<RetrievePropertiesEx "), std::string::npos) << sdk.bodies[5];
}

TEST_F(TaskWatcherTest, ARunningTaskReadWithAnErrorPropertyWithoutValueHasNotFailed) {
  // The direct read lists info.result and info.error of the running task with no <val> (unset): no outcome.
  const std::string running_read =
      R"(<RetrievePropertiesExResponse xmlns="urn:vim25"><returnval><objects><obj type="Task">task-1</obj>)"
      R"(<propSet><name>info.state</name><val xsi:type="TaskInfoState">running</val></propSet>)"
      R"(<propSet><name>info.result</name></propSet><propSet><name>info.error</name></propSet>)"
      "</objects></returnval></RetrievePropertiesExResponse>";
  sdk.script = {collector_created(),
                filter_created(),
                update("1", task_change("task-1", task_state("running"))),
                Answer(R"(<WaitForUpdatesExResponse xmlns="urn:vim25"/>)", 2),
                running_read,
                update("2", task_change("task-1", task_state("success"))),
                R"(<DestroyPropertyFilterResponse xmlns="urn:vim25"/>)",
                collector_destroyed()};
  auto outcome = follow("task-1");
  ASSERT_TRUE(outcome) << outcome.error().what();
  EXPECT_EQ(outcome->state, "success");
  EXPECT_FALSE(outcome->error) << outcome->error->what();
}

TEST_F(TaskWatcherTest, ASeenTaskIsNotReadAgainWhileAnswersArrive) {
  sdk.script = {collector_created(),
                filter_created(),
                update("1", task_change("task-1", task_state("running"))),
                update("2", task_change("task-1", task_state("success"))),
                R"(<DestroyPropertyFilterResponse xmlns="urn:vim25"/>)",
                collector_destroyed()};
  auto outcome = follow("task-1");
  ASSERT_TRUE(outcome) << outcome.error().what();
  EXPECT_EQ(outcome->state, "success");
  for (const auto& body : sdk.bodies)
    EXPECT_EQ(body.find("<RetrievePropertiesEx "), std::string::npos) << body;
}

// The tasks of one wait_all share its callback: PowerOnMultiVM's 10,000 tasks once made 10,000 copies of a
// callback that held a map of 10,000 entries (10 GB and 30 s on the loop while the storm was observed).
TEST_F(TaskWatcherTest, TheTasksOfOneWaitShareItsCallback) {
  struct CountsCopies {
    int* copies;
    int* calls;
    CountsCopies(int* c, int* n) : copies(c), calls(n) {}
    CountsCopies(const CountsCopies& o) : copies(o.copies), calls(o.calls) { ++*copies; }
    CountsCopies& operator=(const CountsCopies&) = default;
    void operator()(const TaskOutcome&) const { ++*calls; }
  };
  int copies = 0, calls = 0;
  sdk.script = {
      collector_created(), filter_created(),
      update("1",
             task_change("task-1", task_state("success")) + task_change("task-2", task_state("success")) +
                 task_change("task-3", task_state("success")) + task_change("task-4", task_state("success"))),
      R"(<DestroyPropertyFilterResponse xmlns="urn:vim25"/>)", collector_destroyed()};
  TaskWatcher watcher(io.get_executor(), session);
  auto all = run_task(
      io, watcher.wait_all({{"Task", "task-1"}, {"Task", "task-2"}, {"Task", "task-3"}, {"Task", "task-4"}},
                           std::chrono::seconds(20), "power on", CountsCopies(&copies, &calls)));
  run_task(io, watcher.close());
  ASSERT_TRUE(all) << all.error().what();
  EXPECT_EQ(all->size(), 4u);
  EXPECT_EQ(calls, 4);
  EXPECT_LE(copies, 1) << "the callback was copied per task";
}

}  // namespace
