// The vSphere provider on vim25 (platform.api vim25 and auto) against the lab simulator's /sdk: linked clones
// of the run's own snapshot, started with one PowerOnMultiVM_Task or one PowerOnVM_Task each, watched through
// WaitForUpdatesEx and checked against the simulator's truth within each milestone's stated resolution; the
// requests the lab counted; the run's snapshot removed; the ownership proof (a VM named for the run but
// without its custom attribute is refused); and the errors before anything is created.
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "tests/integration/vsphere/lab_fixture.hpp"
#include "tests/support/vim25_driver.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::testing::vsphere_lab;
using namespace std::chrono_literals;
using json = nlohmann::json;

class Vim25LabTest : public VsphereLabTest {
 protected:
  void SetUp() override { api = "vim25"; }
  void start_vim25_lab(const std::string& clone = "linked") {
    start_lab(slowed_small_lab());
    settings.clone = clone;
  }
  std::uint64_t route(const json& stats, const std::string& name) {
    const auto& by_route = stats["byRoute"];
    return by_route.contains(name) ? by_route[name].get<std::uint64_t>() : 0;
  }
};

TEST_F(Vim25LabTest, LinkedClonesStartedWithOneMultiCallMatchTheTruth) {
  start_vim25_lab();
  settings.power_on = "multi";
  auto p = make_provider();
  auto truth = storm_against_truth(*p, 8);
  EXPECT_EQ(truth.size(), 8u);
  const json stats = lab_call("GET", "/_lab/stats");
  EXPECT_EQ(route(stats, "POST /sdk PowerOnMultiVM_Task"), 1u);
  EXPECT_EQ(route(stats, "POST /sdk PowerOnVM_Task"), 0u);
  EXPECT_EQ(route(stats, "POST /sdk CloneVM_Task"), 8u);
  EXPECT_EQ(route(stats, "POST /sdk CreateSnapshot_Task"), 1u);
  EXPECT_EQ(route(stats, "POST /sdk SetField"), 8u);
  // No REST call at all.
  for (const auto& [name, count] : stats["byRoute"].items())
    EXPECT_TRUE(name.rfind("POST /sdk", 0) == 0) << name;
  // Every clone was linked; the run's snapshot is gone after remove_run_artifacts.
  const json t = lab_call("GET", "/_lab/truth");
  int linked = 0;
  for (const auto& c : t["clones"]) linked += c["kind"] == "linked";
  EXPECT_EQ(linked, 8);
  auto again = make_provider();
  ASSERT_TRUE(run(again->connect()));
  ASSERT_TRUE(run(again->remove_run_artifacts(kRun)));
  EXPECT_EQ(route(lab_call("GET", "/_lab/stats"), "POST /sdk RemoveSnapshot_Task"), 1u);
  run_void(again->disconnect());
}

TEST_F(Vim25LabTest, EachVmStartedWithItsOwnPowerOnTaskMatchesTheTruth) {
  start_vim25_lab("full");
  settings.power_on = "each";
  auto p = make_provider();
  auto truth = storm_against_truth(*p, 6);
  EXPECT_EQ(truth.size(), 6u);
  const json stats = lab_call("GET", "/_lab/stats");
  EXPECT_EQ(route(stats, "POST /sdk PowerOnVM_Task"), 6u);
  EXPECT_EQ(route(stats, "POST /sdk PowerOnMultiVM_Task"), 0u);
  EXPECT_EQ(route(stats, "POST /sdk CreateSnapshot_Task"), 0u);  // full clones need no snapshot
}

TEST_F(Vim25LabTest, AutoChoosesVim25WhenSdkAnswers) {
  start_vim25_lab();
  settings.api = "auto";
  auto p = make_provider();
  ASSERT_TRUE(run(p->connect()));
  const std::string chosen = p->capabilities().api;
  EXPECT_NE(chosen.find("vim25"), std::string::npos) << chosen;
  EXPECT_NE(chosen.find("platform.api auto: " + config.endpoint + "/sdk answered vim25"), std::string::npos)
      << chosen;
  run_void(p->disconnect());
}

TEST_F(Vim25LabTest, ANamedSnapshotThatDoesNotExistIsAnErrorBeforeAnythingIsCreated) {
  start_vim25_lab();
  settings.snapshot = "no-such-snapshot";
  auto p = make_provider();
  ASSERT_TRUE(run(p->connect()));
  auto inv = run(p->check_inventory(api::InventoryRequest{{"host-01"}, 1}));
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().kind, ErrorKind::conflict);
  EXPECT_NE(inv.error().message.find("golden VM tiny-golden in vCenter " + config.endpoint +
                                     " has no snapshot named no-such-snapshot (it has: (none))"),
            std::string::npos)
      << inv.error().what();
  const json stats = lab_call("GET", "/_lab/stats");
  EXPECT_EQ(route(stats, "POST /sdk CreateSnapshot_Task"), 0u);
  EXPECT_EQ(route(stats, "POST /sdk AddCustomFieldDef"), 0u);
  EXPECT_EQ(route(stats, "POST /sdk CloneVM_Task"), 0u);
  run_void(p->disconnect());
}

TEST_F(Vim25LabTest, AVmNamedForTheRunButTaggedForAnotherIsRefused) {
  start_vim25_lab("full");
  auto p = make_provider();
  ASSERT_TRUE(run(p->connect()));
  ASSERT_TRUE(run(p->check_inventory(api::InventoryRequest{{"host-01"}, 1})));
  auto made = run(p->provision(spec(1, "host-01")));
  ASSERT_TRUE(made) << made.error().what();

  // Someone tags the VM for another run, with vCenter's own API.
  auto transport = vsphere::make_http_transport(io.get_executor(), config);
  vsphere::vim25::Session session(
      io.get_executor(), *transport,
      vsphere::SessionSettings{config.endpoint, config.username, config.password, 10s});
  ASSERT_TRUE(run(session.login()));
  test_support::Vim25Driver driver(io, session);
  const auto cfm = session.service_content().custom_fields_manager;
  auto fields = driver.properties({cfm}, "CustomFieldsManager", {"field"});
  int key = -1;
  for (const auto& o : fields)
    for (const auto* def : o.prop("field")->all("CustomFieldDef"))
      if (def->field_text("name") == "bootstorm.run") key = std::stoi(def->field_text("key"));
  ASSERT_GE(key, 0);
  const vsphere::vim25::MoRef vm{"VirtualMachine", made->id};
  ASSERT_TRUE(driver.call("SetField", vsphere::vim25::set_field(cfm, vm, key, "0ther1")));

  auto refused = run(p->destroy(*made));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(refused.error().message.find("refusing to delete VM " + made->name +
                                         ": its custom attribute bootstorm.run is '0ther1'"),
            std::string::npos)
      << refused.error().what();
  auto stopped = run(p->stop(*made));
  EXPECT_FALSE(stopped);
  EXPECT_EQ(route(lab_call("GET", "/_lab/stats"), "POST /sdk Destroy_Task"), 0u);

  // Tagged for this run again: the owner deletes it, and nothing of the run is left.
  ASSERT_TRUE(driver.call("SetField", vsphere::vim25::set_field(cfm, vm, key, kRun)));
  EXPECT_TRUE(run(p->destroy(*made)));
  auto left = run(p->list_run_vms(kRun));
  ASSERT_TRUE(left);
  EXPECT_TRUE(left->empty());
  run_void(session.logout());
  run_void(p->disconnect());
}

}  // namespace
