// Vim25Provider::observe over a scripted /sdk: after a wait whose answer never came, or came only to a
// resend, the VMs' state is read from the start by a new collector, so a change the lost answer carried is
// still seen (a server that keeps no history of versions, as govmomi's simulator, would not show it again
// from the kept version).
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "providers/vsphere/settings.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"
#include "tests/support/run_task.hpp"
#include "tests/unit/providers/vsphere/vim25/scripted_sdk.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using namespace bootstorm::test_support::scripted_sdk;
using bootstorm::testing::run_task;

const std::string kVm = "bs-3f9a2c-storm-001";

std::string power_state(const std::string& state, const std::string& kind) {
  return vm_change(
      "vm-1", change("runtime.powerState", "<val xsi:type=\"VirtualMachinePowerState\">" + state + "</val>"),
      kind);
}
std::string list_view_created() {
  return R"(<CreateListViewResponse xmlns="urn:vim25"><returnval type="ListView">session[1]v1</returnval></CreateListViewResponse>)";
}
std::string view_destroyed() {
  return R"(<DestroyViewResponse xmlns="urn:vim25"/>)";
}

class Vim25ObserveTest : public ::testing::Test {
 protected:
  Vim25ObserveTest() {
    auto transport = std::make_unique<ScriptedSdk>();
    sdk = transport.get();
    api::ProviderConfig config;
    config.endpoint = "https://vc";
    config.username = "u";
    config.password = "p";
    config.run_id = "3f9a2c";
    config.request_timeout = std::chrono::seconds(5);
    auto settings = std::make_shared<vsphere::Settings>();
    settings->power_on = "each";
    config.settings = api::PlatformSettings(settings);
    provider = std::make_unique<Vim25Provider>(io.get_executor(), config, std::move(transport));
  }
  // The VM's start, its task followed to success (the start is asked for before observation, so that the
  // state read after it is not taken for a VM that was on before the storm).
  void start() {
    sdk->script.insert(
        sdk->script.end(),
        {R"(<PowerOnVM_TaskResponse xmlns="urn:vim25"><returnval type="Task">task-1</returnval></PowerOnVM_TaskResponse>)",
         collector_created(), filter_created(), update("1", task_change("task-1", task_state("success"))),
         R"(<DestroyPropertyFilterResponse xmlns="urn:vim25"/>)"});
    auto started = run_task(io, provider->start(vm));
    ASSERT_TRUE(started) << started.error().what();
    first_observe_body = sdk->bodies.size();
  }
  // The milestones observe() reports until `running`.
  std::vector<api::MilestoneEvent> observe() {
    std::vector<api::MilestoneEvent> seen;
    CancelSignal stop;
    run_task(io, provider->observe(
                     {vm},
                     [&](api::MilestoneEvent ev) {
                       const bool running = ev.milestone == api::Milestone::running;
                       seen.push_back(std::move(ev));
                       if (running) stop.cancel();
                     },
                     stop));
    return seen;
  }

  asio::io_context io;
  ScriptedSdk* sdk = nullptr;
  std::unique_ptr<Vim25Provider> provider;
  api::VmHandle vm{kVm, "vm-1", "host-1", "storm"};
  // Where the observation's own requests begin (after the start's).
  std::size_t first_observe_body = 0;
};

TEST_F(Vim25ObserveTest, AWaitWhoseAnswerNeverCameIsFollowedByTheStateFromTheStart) {
  start();
  sdk->script.insert(
      sdk->script.end(),
      {list_view_created(), collector_created(), filter_created(),
       update("1", power_state("poweredOff", "enter")),
       // The connection failed: the server took the power-on for the answer that never came.
       Answer(""),
       // A new view and collector, their state from the start.
       collector_destroyed(), view_destroyed(), list_view_created(), collector_created(), filter_created(),
       update("1", power_state("poweredOn", "enter")), collector_destroyed(), view_destroyed()});
  auto seen = observe();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().milestone, api::Milestone::running);
  EXPECT_EQ(seen.back().vm, kVm);
  const auto& bodies = sdk->bodies;
  const std::size_t at = first_observe_body;
  ASSERT_GE(bodies.size(), at + 11);
  EXPECT_NE(bodies[at + 4].find("<version>1</version>"), std::string::npos) << bodies[at + 4];
  EXPECT_NE(bodies[at + 5].find("<DestroyPropertyCollector "), std::string::npos) << bodies[at + 5];
  EXPECT_NE(bodies[at + 7].find("<CreateListView "), std::string::npos) << bodies[at + 7];
  EXPECT_NE(bodies[at + 10].find("<version></version>"), std::string::npos) << bodies[at + 10];
}

TEST_F(Vim25ObserveTest, AnAnswerToAResendIsFollowedByTheStateFromTheStart) {
  start();
  sdk->script.insert(
      sdk->script.end(),
      {list_view_created(), collector_created(), filter_created(),
       update("1", power_state("poweredOff", "enter")),
       // Sent twice: the first answer, lost on the way, carried the power-on; the second,
       // from a server without versions, has nothing.
       Answer(R"(<WaitForUpdatesExResponse xmlns="urn:vim25"/>)", 2), collector_destroyed(), view_destroyed(),
       list_view_created(), collector_created(), filter_created(),
       update("1", power_state("poweredOn", "enter")), collector_destroyed(), view_destroyed()});
  auto seen = observe();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().milestone, api::Milestone::running);
  const auto& bodies = sdk->bodies;
  const std::size_t at = first_observe_body;
  ASSERT_GE(bodies.size(), at + 11);
  EXPECT_NE(bodies[at + 5].find("<DestroyPropertyCollector "), std::string::npos) << bodies[at + 5];
  EXPECT_NE(bodies[at + 10].find("<version></version>"), std::string::npos) << bodies[at + 10];
}

}  // namespace
