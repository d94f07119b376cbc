// Two vim25 sessions watching the same lab with two filter shapes see each VM's change in the same update
// round: a plain client (a ContainerView of the VMs, name, power state and Tools status) and bootstorm's
// shape (a ListView of its VMs with five properties, and a second collector following the power-on tasks).
// A real vCenter publishes a change to every filter that holds the object when it happens; the lab must not
// publish it later because a filter also watches tasks, nor make one shape wait for the other. Rounds are
// made deterministic here: the test lets the lab reach a state (the truth says every VM's milestone
// happened), then asks each session once with maxWaitSeconds 0; each answer must carry every change.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "providers/vsphere/vim25/updates.hpp"
#include "tests/support/run_task.hpp"
#include "tests/support/served_lab_vcenter.hpp"
#include "tests/support/vim25_driver.hpp"

namespace {

using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using bootstorm::testing::run_task;
using nlohmann::json;

constexpr int kVms = 24;

class FilterShapes : public test_support::ServedLabVcenter {
 protected:
  void SetUp() override {
    ServedLabVcenter::SetUp();
    if (HasFatalFailure()) return;
    for (auto* s : {&plain_, &shaped_}) {
      *s = std::make_unique<Session>(io_.get_executor(), *transport_,
                                     vsphere::SessionSettings{config_.endpoint, admin_user(),
                                                              admin_password(), std::chrono::seconds(30)});
      ASSERT_TRUE(run_task(io_, (*s)->login()));
    }
  }
  void TearDown() override {
    plain_.reset();
    shaped_.reset();
    ServedLabVcenter::TearDown();
  }

  // VM id -> the values of `path` one immediate WaitForUpdatesEx (maxWaitSeconds 0) carried.
  std::map<std::string, std::string> one_round(UpdateStream& stream, const std::string& path) {
    std::map<std::string, std::string> out;
    auto set = run_task(io_, stream.next(WaitOptions{0, std::nullopt}));
    EXPECT_TRUE(set) << (set ? "" : set.error().what());
    if (!set) return out;
    EXPECT_FALSE(set->truncated);
    for (const auto& f : set->filters)
      for (const auto& o : f.objects)
        for (const auto& c : o.changes)
          if (c.name == path && c.value) out[o.obj.value] = c.value->text;
    return out;
  }

  // Polls the lab's truth until every VM of `ids` has `milestone` visible (applied to what the fronts serve).
  void until_every(const std::vector<std::string>& ids, const std::string& milestone) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::set<std::string> reached;
      const json truth = lab_get("/_lab/truth");
      for (const auto& vm : truth.at("vms"))
        if (vm.contains("visible") && vm.at("visible").contains(milestone))
          reached.insert(vm.at("id").get<std::string>());
      bool all = true;
      for (const auto& id : ids) all = all && reached.count(id);
      if (all) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const json vms = lab_get("/_lab/truth").at("vms");
    ADD_FAILURE() << "not every VM reached " << milestone << " in 30 s; the truth has " << vms.size()
                  << " VMs started" << (vms.empty() ? std::string() : ", e.g. " + vms.front().dump());
  }

  std::unique_ptr<Session> plain_, shaped_;
};

TEST_F(FilterShapes, TwoSessionsWithTwoFilterShapesSeeEachChangeInTheSameRound) {
  test_support::Vim25Driver d(io_, *plain_);
  const ServiceContent& sc = plain_->service_content();
  auto vms = d.vms({"parent", "resourcePool"});
  ASSERT_TRUE(vms.count("tiny-golden"));
  const MoRef golden = vms["tiny-golden"].obj;
  const MoRef folder = vms["tiny-golden"].prop("parent")->moref();
  std::vector<MoRef> tasks;
  for (int i = 0; i < kVms; ++i) {
    CloneSpec spec;
    spec.location.pool = vms["tiny-golden"].prop("resourcePool")->moref();
    tasks.push_back(
        d.task_of("CloneVM_Task", clone_vm_task(golden, folder, "bs-2-vm-" + std::to_string(i), spec)));
  }
  std::vector<MoRef> clones;
  std::vector<std::string> ids;
  for (const auto& o : d.wait(tasks, "clone")) {
    ASSERT_EQ(o.state, "success");
    clones.push_back(o.result->moref());
    ids.push_back(clones.back().value);
  }
  auto datacenter = d.objects("Datacenter", {"name"});
  ASSERT_EQ(datacenter.size(), 1u);

  // The plain client: a ContainerView of every VM of the datacenter, three properties.
  auto container = d.call("CreateContainerView",
                          create_container_view(sc.view_manager, sc.root_folder, {"VirtualMachine"}, true));
  ASSERT_TRUE(container) << container.error().what();
  UpdateStream plain(*plain_);
  ASSERT_TRUE(run_task(
      io_, plain.create(view_filter_spec(decode_moref(container->returnval()), "VirtualMachine",
                                         {"name", "runtime.powerState", "guest.toolsRunningStatus"}))));
  // bootstorm's shape, in the other session: a ListView of its VMs with five properties, and a collector of
  // its own over the power-on tasks (made below, once they exist).
  test_support::Vim25Driver b(io_, *shaped_);
  auto list = b.call("CreateListView", create_list_view(shaped_->service_content().view_manager, clones));
  ASSERT_TRUE(list) << list.error().what();
  UpdateStream shaped(*shaped_);
  ASSERT_TRUE(run_task(
      io_, shaped.create(view_filter_spec(decode_moref(list->returnval()), "VirtualMachine",
                                          {"runtime.powerState", "runtime.host", "guest.toolsRunningStatus",
                                           "guest.ipAddress", "guest.net"}))));
  // The initial state of each: every VM enters.
  EXPECT_GE(one_round(plain, "runtime.powerState").size(), ids.size());
  EXPECT_EQ(one_round(shaped, "runtime.powerState").size(), ids.size());

  auto multi =
      b.wait({b.task_of("PowerOnMultiVM_Task", power_on_multi_vm_task(datacenter[0].obj, clones))}, "multi");
  ASSERT_EQ(multi.size(), 1u);
  ASSERT_EQ(multi[0].state, "success");
  std::vector<MoRef> power_tasks;
  for (const Value* a : multi[0].result->all("attempted")) power_tasks.push_back(a->field("task")->moref());
  ASSERT_EQ(power_tasks.size(), clones.size());
  UpdateStream task_stream(*shaped_);
  const PropertyFilterSpec task_spec =
      objects_filter_spec(power_tasks, "Task", {"info.state", "info.result", "info.error"});
  ASSERT_TRUE(run_task(io_, task_stream.create(task_spec)));
  for (const auto& o : b.wait(power_tasks, "power on")) EXPECT_EQ(o.state, "success");

  // Every VM powered on: one round of each shape carries every change.
  until_every(ids, "running");
  const auto plain_on = one_round(plain, "runtime.powerState");
  const auto shaped_on = one_round(shaped, "runtime.powerState");
  for (const auto& id : ids) {
    EXPECT_EQ(plain_on.count(id) ? plain_on.at(id) : "", "poweredOn") << id << " (plain)";
    EXPECT_EQ(shaped_on.count(id) ? shaped_on.at(id) : "", "poweredOn") << id << " (bootstorm's shape)";
  }
  // Every guest's Tools running: again one round each, whatever the task filter saw meanwhile.
  (void)run_task(io_, task_stream.next(WaitOptions{0, std::nullopt}));
  until_every(ids, "guest_agent");
  const auto plain_tools = one_round(plain, "guest.toolsRunningStatus");
  const auto shaped_tools = one_round(shaped, "guest.toolsRunningStatus");
  for (const auto& id : ids) {
    EXPECT_EQ(plain_tools.count(id) ? plain_tools.at(id) : "", "guestToolsRunning") << id << " (plain)";
    EXPECT_EQ(shaped_tools.count(id) ? shaped_tools.at(id) : "", "guestToolsRunning")
        << id << " (bootstorm's shape)";
  }
  // Nothing is left over for either: the next round of each is empty.
  EXPECT_TRUE(one_round(plain, "guest.toolsRunningStatus").empty());
  EXPECT_TRUE(one_round(shaped, "guest.toolsRunningStatus").empty());
  run_task(io_, task_stream.destroy());
  run_task(io_, shaped.destroy());
  run_task(io_, plain.destroy());
}

}  // namespace
