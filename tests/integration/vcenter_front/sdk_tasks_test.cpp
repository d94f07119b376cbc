// The lab's vim25 tasks and pushed updates, driven by bootstorm's vim25 client against `bootstorm lab serve`:
// a snapshot, linked and full clones priced by the physics (the lab's truth counts the bytes each moved),
// custom attributes, PowerOnMultiVM with a VM it cannot attempt, the simulated guests' milestones pushed
// through WaitForUpdatesEx and stamped as delivered in the truth, the faults of tasks that cannot run, and
// cleanup. Then WaitForUpdatesEx's contract: truncated sets, the repeat of a lost answer, a stale version
// refused, an empty answer at maxWaitSeconds 0, and a waiting call woken by a model change.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "providers/vsphere/vim25/updates.hpp"
#include "tests/support/lab_process.hpp"
#include "tests/support/run_task.hpp"
#include "tests/support/served_lab_vcenter.hpp"
#include "tests/support/vim25_driver.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using bootstorm::testing::run_task;
using nlohmann::json;

class LabSdkTasks : public test_support::ServedLabVcenter {
 protected:
  void SetUp() override {
    ServedLabVcenter::SetUp();
    if (HasFatalFailure()) return;
    session_ = std::make_unique<Session>(
        io_.get_executor(), *transport_,
        vsphere::SessionSettings{config_.endpoint, admin_user(), admin_password(), std::chrono::seconds(30)});
    ASSERT_TRUE(run_task(io_, session_->login()));
  }
  void TearDown() override {
    session_.reset();
    ServedLabVcenter::TearDown();
  }
  test_support::Vim25Driver driver() { return test_support::Vim25Driver(io_, *session_); }
  json truth() { return lab_get("/_lab/truth"); }
  MoRef only(const std::string& type) {
    auto objects = driver().objects(type, {"name"});
    EXPECT_FALSE(objects.empty()) << type;
    return objects.empty() ? MoRef{} : objects.front().obj;
  }

  std::unique_ptr<Session> session_;
};

TEST_F(LabSdkTasks, LinkedAndFullClonesPoweredOnTogetherWatchedAndCleanedUp) {
  auto d = driver();
  const ServiceContent& sc = session_->service_content();
  auto vms = d.vms({"parent", "resourcePool"});
  ASSERT_TRUE(vms.count("tiny-golden"));
  const MoRef golden = vms["tiny-golden"].obj;
  const MoRef folder = vms["tiny-golden"].prop("parent")->moref();
  const MoRef pool = vms["tiny-golden"].prop("resourcePool")->moref();
  const MoRef datacenter = only("Datacenter");

  auto snap =
      d.wait({d.task_of("CreateSnapshot_Task", create_snapshot_task(golden, "bs-1-base", "", false, false))},
             "snapshot");
  ASSERT_EQ(snap.size(), 1u);
  ASSERT_EQ(snap[0].state, "success");
  const MoRef snapshot = snap[0].result->moref();
  EXPECT_EQ(snapshot.type, "VirtualMachineSnapshot");

  auto def = d.call("AddCustomFieldDef",
                    add_custom_field_def(sc.custom_fields_manager, "bootstorm.run", "VirtualMachine"));
  ASSERT_TRUE(def) << def.error().what();
  const int key = std::stoi(def->returnval().child_text("key").value_or("-1"));
  auto again = d.call("AddCustomFieldDef",
                      add_custom_field_def(sc.custom_fields_manager, "bootstorm.run", "VirtualMachine"));
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("already"), std::string::npos) << again.error().what();

  // Eight linked clones of the snapshot, two full copies.
  constexpr int kLinked = 8, kFull = 2;
  std::vector<MoRef> tasks;
  for (int i = 0; i < kLinked + kFull; ++i) {
    CloneSpec spec;
    spec.location.pool = pool;
    if (i < kLinked) {
      spec.location.disk_move_type = "createNewChildDiskBacking";
      spec.snapshot = snapshot;
    }
    tasks.push_back(
        d.task_of("CloneVM_Task", clone_vm_task(golden, folder, "bs-1-vm-" + std::to_string(i), spec)));
  }
  // A linked clone without a snapshot is refused before any task exists.
  CloneSpec no_snapshot;
  no_snapshot.location.disk_move_type = "createNewChildDiskBacking";
  auto refused = d.call("CloneVM_Task", clone_vm_task(golden, folder, "bs-1-nosnap", no_snapshot));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("spec.snapshot"), std::string::npos) << refused.error().what();
  // A name taken: the task ends in DuplicateName.
  tasks.push_back(d.task_of("CloneVM_Task", clone_vm_task(golden, folder, "tiny-golden", CloneSpec{})));
  auto cloned = d.wait(tasks, "clone");
  ASSERT_EQ(cloned.size(), tasks.size());
  std::vector<MoRef> clones;
  for (int i = 0; i < kLinked + kFull; ++i) {
    ASSERT_EQ(cloned[i].state, "success") << (cloned[i].error ? cloned[i].error->what() : "");
    clones.push_back(cloned[i].result->moref());
    ASSERT_TRUE(d.call("SetField", set_field(sc.custom_fields_manager, clones.back(), key, "bs-1")));
  }
  EXPECT_EQ(cloned.back().state, "error");
  ASSERT_TRUE(cloned.back().error);
  EXPECT_EQ(cloned.back().error->kind, ErrorKind::conflict) << cloned.back().error->what();

  // The truth counts what each clone moved: a linked clone writes its delta, a full one copies the disk.
  const json t = truth();
  double linked_mb = 0, full_mb = 0;
  for (const auto& c : t.at("clones")) {
    const std::string name = c.at("name");
    if (!name.starts_with("bs-1-vm-")) continue;
    (std::stoi(name.substr(8)) < kLinked ? linked_mb : full_mb) += c.at("datastoreMB").get<double>();
    EXPECT_EQ(c.at("kind"), std::stoi(name.substr(8)) < kLinked ? "linked" : "full") << name;
  }
  EXPECT_GT(full_mb, 0);
  EXPECT_LE(linked_mb / kLinked, 0.1 * (full_mb / kFull))
      << linked_mb << " MB linked, " << full_mb << " MB full";

  // One filter over a list view of the clones, then one power-on call for all, one of them already on.
  auto view = d.call("CreateListView", create_list_view(sc.view_manager, clones));
  ASSERT_TRUE(view);
  UpdateStream stream(*session_);
  ASSERT_TRUE(run_task(io_, stream.create(view_filter_spec(
                                decode_moref(view->returnval()), "VirtualMachine",
                                {"runtime.powerState", "guest.toolsRunningStatus", "guest.ipAddress"}))));
  auto first = d.wait({d.task_of("PowerOnVM_Task", power_on_vm_task(clones[0]))}, "power on");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].state, "success");
  auto multi =
      d.wait({d.task_of("PowerOnMultiVM_Task", power_on_multi_vm_task(datacenter, clones))}, "multi");
  ASSERT_EQ(multi.size(), 1u);
  ASSERT_EQ(multi[0].state, "success");
  ASSERT_TRUE(multi[0].result);
  EXPECT_EQ(multi[0].result->xsi_type, "ClusterPowerOnVmResult");
  const auto attempted = multi[0].result->all("attempted");
  const auto not_attempted = multi[0].result->all("notAttempted");
  EXPECT_EQ(attempted.size(), clones.size() - 1);
  ASSERT_EQ(not_attempted.size(), 1u);
  EXPECT_EQ(not_attempted[0]->field("vm")->moref(), clones[0]);
  EXPECT_EQ(not_attempted[0]->field("fault")->field("fault")->xsi_type, "InvalidPowerState");
  std::vector<MoRef> power_tasks;
  for (const Value* a : attempted) power_tasks.push_back(a->field("task")->moref());
  for (const auto& o : d.wait(power_tasks, "power on")) EXPECT_EQ(o.state, "success");

  std::set<std::string> on, tools, ip;
  for (int round = 0; round < 200 && ip.size() < clones.size(); ++round) {
    auto set = run_task(io_, stream.next(WaitOptions{10, std::nullopt}));
    ASSERT_TRUE(set) << set.error().what();
    for (const auto& f : set->filters)
      for (const auto& o : f.objects)
        for (const auto& c : o.changes) {
          if (!c.value) continue;
          if (c.name == "runtime.powerState" && c.value->text == "poweredOn") on.insert(o.obj.value);
          if (c.name == "guest.toolsRunningStatus" && c.value->text == "guestToolsRunning")
            tools.insert(o.obj.value);
          if (c.name == "guest.ipAddress" && !c.value->text.empty()) ip.insert(o.obj.value);
        }
  }
  EXPECT_EQ(on.size(), clones.size());
  EXPECT_EQ(tools.size(), clones.size());
  EXPECT_EQ(ip.size(), clones.size());
  run_task(io_, stream.destroy());

  // The truth saw the pushed milestones delivered, never before they happened.
  int delivered = 0;
  const json after_boot = truth();
  for (const auto& vm : after_boot.at("vms")) {
    if (!vm.at("name").get<std::string>().starts_with("bs-1-vm-") || !vm.contains("delivered")) continue;
    for (const auto& [milestone, at] : vm.at("delivered").items()) {
      EXPECT_GE(at.get<double>(), vm.at("milestones").at(milestone).get<double>()) << milestone;
      ++delivered;
    }
    EXPECT_TRUE(vm.at("delivered").contains("guest_agent")) << vm.dump();
  }
  EXPECT_GE(delivered, 3 * (kLinked + kFull) - 3);  // clone 0's power-on may precede the first wait

  // Read back: every clone on, tagged with the run id; the golden VM has the snapshot.
  auto state = d.vms({"runtime.powerState", "customValue", "snapshot"});
  for (int i = 0; i < kLinked + kFull; ++i) {
    const std::string name = "bs-1-vm-" + std::to_string(i);
    ASSERT_TRUE(state.count(name)) << name;
    EXPECT_EQ(state[name].prop("runtime.powerState")->text, "poweredOn");
    const auto values = state[name].prop("customValue")->all("CustomFieldValue");
    ASSERT_EQ(values.size(), 1u) << name;
    EXPECT_EQ(values[0]->field_text("key"), std::to_string(key));
    EXPECT_EQ(values[0]->field_text("value"), "bs-1");
  }
  EXPECT_EQ(state["tiny-golden"].prop("snapshot")->field("currentSnapshot")->moref(), snapshot);

  // A powered-on VM is neither powered on again nor destroyed: both tasks end in InvalidPowerState.
  auto twice = d.wait({d.task_of("PowerOnVM_Task", power_on_vm_task(clones[1])),
                       d.task_of("Destroy_Task", destroy_task(clones[1]))},
                      "refused");
  ASSERT_EQ(twice.size(), 2u);
  for (const auto& o : twice) {
    EXPECT_EQ(o.state, "error");
    ASSERT_TRUE(o.error);
    EXPECT_EQ(o.error->kind, ErrorKind::conflict);
    EXPECT_NE(o.error->message.find("refused failed: the VM is powered on"), std::string::npos)
        << o.error->what();
  }

  std::vector<MoRef> off, gone;
  for (const MoRef& c : clones) off.push_back(d.task_of("PowerOffVM_Task", power_off_vm_task(c)));
  for (const auto& o : d.wait(off, "power off")) EXPECT_EQ(o.state, "success");
  for (const MoRef& c : clones) gone.push_back(d.task_of("Destroy_Task", destroy_task(c)));
  for (const auto& o : d.wait(gone, "destroy")) EXPECT_EQ(o.state, "success");
  auto removed = d.wait({d.task_of("RemoveSnapshot_Task", remove_snapshot_task(snapshot, false))}, "remove");
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].state, "success");
  auto after = d.vms({"snapshot"});
  EXPECT_EQ(after.size(), 1u);
  ASSERT_TRUE(after.count("tiny-golden"));
  EXPECT_EQ(after["tiny-golden"].prop("snapshot")->xsi_type, "");  // unset: no snapshot left
}

TEST_F(LabSdkTasks, WaitForUpdatesExTruncatesRepeatsALostAnswerAndWakesOnAChange) {
  auto d = driver();
  const ServiceContent& sc = session_->service_content();
  auto created = d.call("CreatePropertyCollector", create_property_collector(sc.property_collector));
  ASSERT_TRUE(created) << created.error().what();
  const MoRef pc = decode_moref(created->returnval());
  auto hosts_view = d.call("CreateContainerView",
                           create_container_view(sc.view_manager, sc.root_folder, {"HostSystem"}, true));
  ASSERT_TRUE(hosts_view);
  ASSERT_TRUE(d.call(
      "CreateFilter",
      create_filter(pc, view_filter_spec(decode_moref(hosts_view->returnval()), "HostSystem", {"name"}),
                    false)));
  auto wait = [&](const std::string& version, WaitOptions options) {
    return d.call("WaitForUpdatesEx", wait_for_updates_ex(pc, version, options));
  };
  // Four hosts in sets of at most 1, 2, 2: truncated until the last.
  std::vector<std::size_t> sizes;
  std::string version;
  std::string previous_version, last_answer_version;
  std::size_t last_answer_objects = 0;
  for (int i = 0; i < 3; ++i) {
    auto reply = wait(version, WaitOptions{0, i == 0 ? 1 : 2});
    ASSERT_TRUE(reply) << reply.error().what();
    auto set = decode_update_set(reply->response(), version);
    ASSERT_TRUE(set);
    ASSERT_EQ(set->filters.size(), 1u);
    sizes.push_back(set->filters[0].objects.size());
    EXPECT_EQ(set->truncated, i < 2) << i;
    for (const auto& o : set->filters[0].objects) EXPECT_EQ(o.kind, "enter");
    previous_version = version;
    last_answer_version = set->version;
    last_answer_objects = set->filters[0].objects.size();
    version = set->version;
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{1, 2, 1}));
  // The last answer again, as if it had been lost; a version never given is refused.
  auto repeat = wait(previous_version, WaitOptions{0, 2});
  ASSERT_TRUE(repeat) << repeat.error().what();
  auto repeated = decode_update_set(repeat->response(), previous_version);
  ASSERT_TRUE(repeated && repeated->filters.size() == 1);
  EXPECT_EQ(repeated->version, last_answer_version);
  EXPECT_EQ(repeated->filters[0].objects.size(), last_answer_objects);
  auto stale = wait("99", WaitOptions{0, std::nullopt});
  ASSERT_FALSE(stale);
  EXPECT_NE(stale.error().message.find("InvalidCollectorVersion"), std::string::npos) << stale.error().what();
  // Nothing new: an empty answer at once.
  auto idle = wait(version, WaitOptions{0, std::nullopt});
  ASSERT_TRUE(idle);
  EXPECT_FALSE(idle->response().child("returnval"));

  // A call waiting on the golden VM's power state wakes when a power-on changes it.
  auto vms = d.vms({"name"});
  const MoRef golden = vms.at("tiny-golden").obj;
  ASSERT_TRUE(d.call(
      "CreateFilter",
      create_filter(pc, objects_filter_spec({golden}, "VirtualMachine", {"runtime.powerState"}), false)));
  auto entered = wait(version, WaitOptions{0, std::nullopt});
  ASSERT_TRUE(entered);
  auto entered_set = decode_update_set(entered->response(), version);
  ASSERT_TRUE(entered_set && entered_set->filters.size() == 1);
  version = entered_set->version;
  std::optional<Expected<SoapReply>> woken;
  const auto started = std::chrono::steady_clock::now();
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        std::string element = wait_for_updates_ex(pc, version, WaitOptions{30, std::nullopt});
        woken = co_await session_->call("WaitForUpdatesEx", element);
      },
      asio::detached);
  io_.restart();
  const std::size_t ran = io_.run_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(woken) << "the wait answered before anything changed";
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(300)) << ran << " handlers";
  auto on = d.wait({d.task_of("PowerOnVM_Task", power_on_vm_task(golden))}, "power on");
  while (!woken && std::chrono::steady_clock::now() - started < std::chrono::seconds(20)) {
    io_.run_for(std::chrono::milliseconds(50));
    io_.restart();
  }
  ASSERT_TRUE(woken);
  ASSERT_TRUE(*woken) << woken->error().what();
  auto change = decode_update_set((*woken)->response(), version);
  ASSERT_TRUE(change);
  ASSERT_EQ(change->filters.size(), 1u);
  ASSERT_EQ(change->filters[0].objects.size(), 1u);
  EXPECT_EQ(change->filters[0].objects[0].kind, "modify");
  EXPECT_EQ(change->filters[0].objects[0].changes.at(0).value->text, "poweredOn");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  ASSERT_TRUE(d.call("DestroyPropertyCollector", destroy_property_collector(pc)));
  EXPECT_FALSE(d.call("WaitForUpdatesEx", wait_for_updates_ex(pc, version, WaitOptions{0, std::nullopt})));
}

}  // namespace
