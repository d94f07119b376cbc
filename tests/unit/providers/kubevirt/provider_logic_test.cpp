// The KubeVirt provider's decisions over a FakeKubeApi, without sockets: conflicts on create, 409s on start,
// the run-label interlock on stop and delete, DataVolume failures, the pipelined start burst and milestones
// from the VMI watch.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <ctime>

#include "providers/kubevirt/detail/datavolume_waiter.hpp"
#include "providers/kubevirt/kube_objects.hpp"
#include "providers/kubevirt/kubevirt_provider.hpp"
#include "providers/kubevirt/settings.hpp"
#include "tests/support/run_task.hpp"
#include "tests/unit/protocol/kube/fake_kube_api.hpp"

namespace bootstorm::kubevirt {
namespace {
using bootstorm::testing::run_task;
using kube::testing::fake_response;
using kube::testing::FakeKubeApi;
using nlohmann::json;

constexpr const char* kRun = "3f9a2c";
constexpr const char* kNs = "desktops";

api::ProviderConfig config() {
  api::ProviderConfig c;
  c.kind = "kubevirt";
  c.run_id = kRun;
  Settings settings;
  settings.namespace_ = kNs;
  settings.datasource_name = "win10";
  settings.datasource_namespace = "golden";
  c.settings = api::make_settings(settings);
  c.max_concurrent = 64;
  return c;
}

std::string vm_object(const std::string& name, const std::string& run) {
  return json{{"kind", "VirtualMachine"},
              {"metadata", {{"name", name}, {"namespace", kNs}, {"labels", {{kRunLabel, run}}}}}}
      .dump();
}

std::string status(int code, const std::string& reason, const std::string& message) {
  return json{
      {"kind", "Status"}, {"status", "Failure"}, {"reason", reason}, {"message", message}, {"code", code}}
      .dump();
}

struct Fixture : ::testing::Test {
  boost::asio::io_context io;
  std::shared_ptr<FakeKubeApi> api = std::make_shared<FakeKubeApi>(io.get_executor());
  std::unique_ptr<api::Provider> provider;

  void make(api::ProviderConfig c = config()) {
    provider = make_provider(io.get_executor(), c, api);
    auto connected = run_task(io, provider->connect());
    ASSERT_TRUE(connected) << connected.error().what();
  }
  api::VmHandle handle(const std::string& name) { return {name, std::string(kNs) + "/" + name, "", "s"}; }
};

using KubevirtProviderLogic = Fixture;

TEST_F(KubevirtProviderLogic, ConnectProbesTheKubevirtApiGroup) {
  make();
  EXPECT_EQ(api->connect_probes, (std::vector<std::string>{"/apis/kubevirt.io/v1"}));
}

TEST_F(KubevirtProviderLogic, ACreateMeetingAForeignVmIsAConflictThatNamesTheRun) {
  api->on("GET", "/api/v1/namespaces/desktops", 200, R"({"kind":"Namespace"})");
  api->on("POST", vms_path(kNs), 409, status(409, "AlreadyExists", "virtualmachines \"vm1\" already exists"));
  api->on("GET", vm_path(kNs, "vm1"), 200, vm_object("vm1", "other0"));
  make();
  auto created = run_task(io, provider->provision({"vm1", "s", "", 1}));
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().kind, ErrorKind::conflict);
  EXPECT_NE(created.error().message.find("does not belong to run 3f9a2c"), std::string::npos)
      << created.error().message;
  EXPECT_EQ(api->budget_waits, 1);  // the create waited for its turn before building its body
}

TEST_F(KubevirtProviderLogic, ACreateRetriedAfterItWentThroughFindsItsOwnVm) {
  api->on("GET", "/api/v1/namespaces/desktops", 200, R"({"kind":"Namespace"})");
  api->on("POST", vms_path(kNs), 409, status(409, "AlreadyExists", "exists"));
  api->on("GET", vm_path(kNs, "vm1"), 200, vm_object("vm1", kRun));
  make();
  auto created = run_task(io, provider->provision({"vm1", "s", "node-1", 1}));
  ASSERT_TRUE(created) << created.error().what();
  EXPECT_EQ(created->id, "desktops/vm1");
}

TEST_F(KubevirtProviderLogic, AMissingNamespaceIsCreatedOnceAndNamesTheRunThatCreatedIt) {
  api->on("GET", "/api/v1/namespaces/desktops", 404,
          status(404, "NotFound", "namespaces \"desktops\" not found"));
  api->on("POST", "/api/v1/namespaces", 201, "{}");
  api->on("POST", vms_path(kNs), 201, "{}");
  make();
  ASSERT_TRUE(run_task(io, provider->provision({"vm1", "s", "", 1})));
  ASSERT_TRUE(run_task(io, provider->provision({"vm2", "s", "", 2})));
  auto creates = api->calls_to("POST", "/api/v1/namespaces");
  ASSERT_EQ(creates.size(), 1u);
  const json created = json::parse(creates[0].body);
  EXPECT_EQ(created["metadata"]["annotations"]["bootstorm.io/created-by-run"], kRun);
  EXPECT_EQ(created["metadata"]["labels"]["app.kubernetes.io/managed-by"], "bootstorm");
}

TEST_F(KubevirtProviderLogic, AStartAnsweredAlreadyRunningCountsAsStarted) {
  api->on("PUT", vm_subresource_path(kNs, "vm1", "start"), 409,
          status(409, "Conflict", "Operation cannot be fulfilled: VM is already running"));
  make();
  auto started = run_task(io, provider->start(handle("vm1")));
  ASSERT_TRUE(started) << started.error().what();
  EXPECT_EQ(api->calls_to("PUT", vm_subresource_path(kNs, "vm1", "start"))[0].budget, kube::Budget::unpaced);
}

TEST_F(KubevirtProviderLogic, AStartRefusedByRunStrategyOnTheFirstAttemptSaysWhatChanged) {
  api->on("PUT", vm_subresource_path(kNs, "vm1", "start"), 409,
          status(409, "Conflict", "RunStrategy Always does not support manual start requests"));
  make();
  auto started = run_task(io, provider->start(handle("vm1")));
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().kind, ErrorKind::conflict);
  EXPECT_NE(started.error().message.find("refuses start requests"), std::string::npos);
  EXPECT_NE(started.error().hint.find("runStrategy Halted"), std::string::npos);
}

TEST_F(KubevirtProviderLogic, StartsReleasedTogetherArePipelinedInBatchesOfTheConfiguredDepth) {
  for (int i = 1; i <= 5; ++i) {
    api->on("PUT", vm_subresource_path(kNs, "vm" + std::to_string(i), "start"), 202, "{}");
  }
  auto c = config();
  c.starts_per_connection = 2;
  make(c);
  ASSERT_TRUE(run_task(io, provider->prepare_storm(5)));
  EXPECT_EQ(api->prewarmed, 3u);  // five starts, two per connection
  // Five starts released in one turn of the loop, as the StartBarrier does.
  std::vector<std::optional<Expected<api::StartResult>>> results(5);
  for (int i = 0; i < 5; ++i) {
    boost::asio::co_spawn(
        io,
        [&, i]() -> boost::asio::awaitable<void> {
          results[i] = co_await provider->start(handle("vm" + std::to_string(i + 1)));
        },
        boost::asio::detached);
  }
  io.restart();
  io.run();
  for (const auto& r : results) {
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(*r);
  }
  EXPECT_EQ(api->pipeline_sizes, (std::vector<std::size_t>{2, 2, 1}));
}

TEST_F(KubevirtProviderLogic, StopAndDeleteRefuseAVmWithoutThisRunsLabel) {
  api->on("GET", vm_path(kNs, "vm1"), 200, vm_object("vm1", "other0"));
  make();
  auto stopped = run_task(io, provider->stop(handle("vm1")));
  ASSERT_FALSE(stopped);
  EXPECT_NE(stopped.error().message.find("refusing to stop VirtualMachine desktops/vm1"), std::string::npos)
      << stopped.error().message;
  auto deleted = run_task(io, provider->destroy(handle("vm1")));
  ASSERT_FALSE(deleted);
  EXPECT_NE(deleted.error().message.find("not this run's \"3f9a2c\""), std::string::npos);
  EXPECT_TRUE(api->calls_to("PUT", vm_subresource_path(kNs, "vm1", "stop")).empty());
  EXPECT_TRUE(api->calls_to("DELETE", vm_path(kNs, "vm1")).empty());
}

TEST_F(KubevirtProviderLogic, AFailedDataVolumeFailsTheWaitWithCdisOwnReason) {
  const std::string dv = datavolume_name("vm1");
  api->on("GET", datavolumes_path(kNs), 200,
          json{{"kind", "DataVolumeList"},
               {"metadata", {{"resourceVersion", "5"}}},
               {"items",
                {{{"metadata", {{"name", dv}, {"resourceVersion", "5"}}},
                  {"status",
                   {{"phase", "Failed"},
                    {"conditions",
                     {{{"type", "Running"},
                       {"status", "False"},
                       {"reason", "Error"},
                       {"message", "clone source golden/win10 not found"}}}}}}}}}}
              .dump());
  make();
  auto ready = run_task(io, provider->wait_startable(handle("vm1"), std::chrono::seconds(5)));
  ASSERT_FALSE(ready);
  EXPECT_NE(ready.error().message.find("clone source golden/win10 not found"), std::string::npos)
      << ready.error().message;
  EXPECT_NE(ready.error().hint.find("kubectl describe dv " + dv), std::string::npos);
  run_task(io, provider->disconnect());
}

// A clone the watch shows in progress for longer than the fallback poll interval waits for the watch, not in
// a loop: the waiter once spun there, burning a core and piling up timers (gigabytes within minutes of a slow
// CSI clone).
TEST_F(KubevirtProviderLogic, ADataVolumeSeenInProgressPastThePollIntervalIsWaitedForWithoutSpinning) {
  const std::string dv = datavolume_name("vm1");
  api->on("GET", datavolumes_path(kNs), 200,
          json{{"kind", "DataVolumeList"},
               {"metadata", {{"resourceVersion", "5"}}},
               {"items",
                {{{"metadata", {{"name", dv}, {"resourceVersion", "5"}}},
                  {"status", {{"phase", "CSICloneInProgress"}, {"progress", "N/A"}}}}}}}
              .dump());
  auto waiter = std::make_shared<detail::DataVolumeWaiter>(io.get_executor(), api, kNs, kRun,
                                                           std::chrono::milliseconds(20));
  const std::clock_t cpu_before = std::clock();
  auto state = run_task(io, waiter->wait("vm1", std::chrono::milliseconds(600)));
  const double cpu_s = static_cast<double>(std::clock() - cpu_before) / CLOCKS_PER_SEC;
  waiter->shutdown();
  ASSERT_FALSE(state);
  EXPECT_EQ(state.error().kind, ErrorKind::timeout) << state.error().what();
  EXPECT_LT(cpu_s, 0.3) << "580 ms past the poll interval, waiting must not cost a core";
  EXPECT_TRUE(api->calls_to("GET", datavolumes_path(kNs) + "/" + dv).empty()) << "the watch has shown it";
}

TEST_F(KubevirtProviderLogic, MilestonesComeFromTheVmiListAndWatch) {
  api->on("GET", vmis_path(kNs), 200,
          json{{"kind", "VirtualMachineInstanceList"},
               {"metadata", {{"resourceVersion", "7"}}},
               {"items", json::array()}}
              .dump());
  auto vmi = [](const std::string& phase, const std::string& rv) {
    json obj = {{"kind", "VirtualMachineInstance"},
                {"metadata", {{"name", "vm1"}, {"namespace", kNs}, {"resourceVersion", rv}}},
                {"status",
                 {{"phase", phase},
                  {"nodeName", "node-1"},
                  {"phaseTransitionTimestamps", json::array()},
                  {"interfaces", json::array({{{"ipAddress", "10.0.0.7"}}})},
                  {"conditions", json::array({{{"type", "AgentConnected"}, {"status", "True"}}})}}}};
    return json{{"type", "MODIFIED"}, {"object", obj}}.dump();
  };
  api->add_watch({200, {vmi("Scheduled", "8"), vmi("Running", "9")}});
  make();
  std::vector<api::Milestone> seen;
  // observe() returns once every milestone is seen; the cancel only bounds a failing test.
  CancelSignal give_up;
  boost::asio::steady_timer bound(io, std::chrono::seconds(5));
  bound.async_wait([give_up](boost::system::error_code ec) mutable {
    if (!ec) give_up.cancel();
  });
  run_task(io, provider->observe(
                   {handle("vm1")}, [&](api::MilestoneEvent ev) { seen.push_back(ev.milestone); }, give_up));
  bound.cancel();
  EXPECT_FALSE(give_up.cancelled());
  EXPECT_NE(std::find(seen.begin(), seen.end(), api::Milestone::scheduled), seen.end());
  EXPECT_NE(std::find(seen.begin(), seen.end(), api::Milestone::running), seen.end());
  EXPECT_NE(std::find(seen.begin(), seen.end(), api::Milestone::ip_assigned), seen.end());
  EXPECT_NE(std::find(seen.begin(), seen.end(), api::Milestone::guest_agent), seen.end());
  ASSERT_EQ(api->watch_targets.size(), 1u);
  EXPECT_NE(api->watch_targets[0].find("labelSelector=bootstorm.io%2Frun%3D3f9a2c"), std::string::npos)
      << api->watch_targets[0];
  EXPECT_NE(api->watch_targets[0].find("resourceVersion=7"), std::string::npos);
}

TEST_F(KubevirtProviderLogic, ListRunVmsFollowsPagesAndKeepsOnlyThisRunsVms) {
  api->on("GET", vms_path(kNs), [](const kube::ApiCall& call) -> Expected<http::Response> {
    json page = {{"kind", "VirtualMachineList"}, {"metadata", json::object()}, {"items", json::array()}};
    if (call.target.find("continue=") == std::string::npos) {
      page["metadata"]["continue"] = "next";
      page["items"].push_back(json::parse(vm_object("vm1", kRun)));
      page["items"].push_back(json::parse(vm_object("intruder", "other0")));
    } else {
      page["items"].push_back(json::parse(vm_object("vm2", kRun)));
    }
    return fake_response(200, page.dump());
  });
  make();
  auto listed = run_task(io, provider->list_run_vms(kRun));
  ASSERT_TRUE(listed) << listed.error().what();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].id, "desktops/vm1");
  EXPECT_EQ((*listed)[1].id, "desktops/vm2");
  EXPECT_EQ(api->calls_to("GET", vms_path(kNs)).size(), 2u);
}

}  // namespace
}  // namespace bootstorm::kubevirt
