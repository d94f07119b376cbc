// The lab's vCenter users, roles and privileges (simulator/README.md, "Users and privileges"), through both
// APIs of `bootstorm lab serve` on the small lab, whose users are: the administrator; `no-power-on`, whose
// role lacks VirtualMachine.Interact.PowerOn; and `golden-admin`, ReadOnly everywhere but Admin on the golden
// VM. A missing privilege is a SOAP NoPermission naming it (and a not-attempted VM of PowerOnMultiVM) and a
// REST 403; AuthorizationManager.HasPrivilegeOnEntities answers what each user holds where.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base64.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "tests/support/lab_process.hpp"
#include "tests/support/run_task.hpp"
#include "tests/support/served_lab_vcenter.hpp"
#include "tests/support/vim25_driver.hpp"

namespace {

using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using bootstorm::testing::run_task;
using nlohmann::json;

constexpr const char* kPowerOn = "VirtualMachine.Interact.PowerOn";
constexpr const char* kClone = "VirtualMachine.Provisioning.Clone";

class LabAccess : public test_support::ServedLabVcenter {
 protected:
  void SetUp() override {
    ServedLabVcenter::SetUp();
    if (HasFatalFailure()) return;
    admin_ = login(admin_user(), admin_password());
    ASSERT_TRUE(admin_);
  }
  void TearDown() override {
    sessions_.clear();
    ServedLabVcenter::TearDown();
  }

  Session* login(const std::string& user, const std::string& password) {
    sessions_.push_back(std::make_unique<Session>(
        io_.get_executor(), *transport_,
        vsphere::SessionSettings{config_.endpoint, user, password, std::chrono::seconds(30)}));
    auto in = run_task(io_, sessions_.back()->login());
    EXPECT_TRUE(in) << user << ": " << (in ? "" : in.error().what());
    return in ? sessions_.back().get() : nullptr;
  }
  test_support::Vim25Driver driver(Session& s) { return test_support::Vim25Driver(io_, s); }

  // HasPrivilegeOnEntities for `session`'s own user: entity id -> privilege -> granted.
  std::map<std::string, std::map<std::string, bool>> privileges(Session& s,
                                                                const std::vector<MoRef>& entities,
                                                                const std::vector<std::string>& ids) {
    auto reply = driver(s).call(
        "HasPrivilegeOnEntities",
        has_privilege_on_entities(s.service_content().authorization_manager, entities, s.session_key(), ids));
    EXPECT_TRUE(reply) << (reply ? "" : reply.error().what());
    std::map<std::string, std::map<std::string, bool>> out;
    if (!reply) return out;
    auto decoded = decode_entity_privileges(reply->response());
    EXPECT_TRUE(decoded);
    if (!decoded) return out;
    for (const auto& e : *decoded)
      for (const auto& [id, granted] : e.granted) out[e.entity.value][id] = granted;
    return out;
  }

  // A REST call as `user` (a session made with Basic auth first).
  http::Response rest(const std::string& user, const std::string& password, std::string method,
                      std::string target) {
    http::Request create("POST", "/api/session");
    create.headers.emplace_back("Authorization", "Basic " + base64_encode(user + ":" + password));
    auto session = run_task(io_, transport_->send(std::move(create)));
    EXPECT_TRUE(session && session->status == 201) << (session ? session->body : session.error().what());
    http::Request req(std::move(method), std::move(target));
    if (session && session->status == 201)
      req.headers.emplace_back("vmware-api-session-id", json::parse(session->body).get<std::string>());
    auto resp = run_task(io_, transport_->send(std::move(req)));
    EXPECT_TRUE(resp) << (resp ? "" : resp.error().what());
    return resp ? *resp : http::Response{};
  }

  json stats() { return lab_get("/_lab/stats"); }

  std::vector<std::unique_ptr<Session>> sessions_;
  Session* admin_ = nullptr;
};

TEST_F(LabAccess, AMissingPrivilegeIsRefusedThroughBothApisNamingIt) {
  auto vms = driver(*admin_).vms({"parent", "runtime.powerState"});
  ASSERT_TRUE(vms.count("tiny-golden"));
  const MoRef golden = vms["tiny-golden"].obj;
  ASSERT_EQ(vms["tiny-golden"].prop("runtime.powerState")->text, "poweredOff");
  const auto denials_before = stats().at("permissionDenials").get<std::uint64_t>();

  Session* weak = login("no-power-on@vsphere.local", "no-power-on-lab-password");
  ASSERT_TRUE(weak);
  auto held = privileges(*weak, {golden}, {kPowerOn, kClone, "System.View"});
  EXPECT_FALSE(held[golden.value][kPowerOn]);
  EXPECT_TRUE(held[golden.value][kClone]);
  EXPECT_TRUE(held[golden.value]["System.View"]) << "every role holds System.View";

  // SOAP: NoPermission, which the client explains with the privilege and the object.
  auto on = driver(*weak).call("PowerOnVM_Task", power_on_vm_task(golden));
  ASSERT_FALSE(on);
  EXPECT_EQ(on.error().kind, ErrorKind::auth) << on.error().what();
  EXPECT_NE(on.error().message.find(kPowerOn), std::string::npos) << on.error().what();
  // PowerOnMultiVM: the datacenter's task succeeds; the VM is not attempted, for want of the privilege.
  auto d = driver(*weak);
  const MoRef datacenter = d.objects("Datacenter", {"name"}).at(0).obj;
  auto multi =
      d.wait({d.task_of("PowerOnMultiVM_Task", power_on_multi_vm_task(datacenter, {golden}))}, "multi");
  ASSERT_EQ(multi.size(), 1u);
  ASSERT_EQ(multi[0].state, "success");
  ASSERT_TRUE(multi[0].result);
  EXPECT_TRUE(multi[0].result->all("attempted").empty());
  const auto not_attempted = multi[0].result->all("notAttempted");
  ASSERT_EQ(not_attempted.size(), 1u);
  const Value* fault = not_attempted[0]->field("fault")->field("fault");
  EXPECT_EQ(fault->xsi_type, "NoPermission");
  EXPECT_EQ(fault->field_text("privilegeId"), kPowerOn);

  // REST: 403 UNAUTHORIZED for the user, not for the administrator (who may, and does, power it on).
  const std::string power = "/api/vcenter/vm/" + golden.value + "/power?action=start";
  const http::Response refused = rest("no-power-on@vsphere.local", "no-power-on-lab-password", "POST", power);
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_EQ(json::parse(refused.body, nullptr, false).value("error_type", ""), "UNAUTHORIZED")
      << refused.body;
  EXPECT_EQ(driver(*admin_).vms({"runtime.powerState"})["tiny-golden"].prop("runtime.powerState")->text,
            "poweredOff")
      << "a refused call changed nothing";
  const http::Response allowed = rest(admin_user(), admin_password(), "POST", power);
  EXPECT_EQ(allowed.status, 204) << allowed.body;
  EXPECT_EQ(stats().at("permissionDenials").get<std::uint64_t>(), denials_before + 3);
}

TEST_F(LabAccess, APermissionOnAnObjectWinsOverTheOnesItWouldInherit) {
  auto vms = driver(*admin_).vms({"parent"});
  ASSERT_TRUE(vms.count("tiny-golden"));
  const MoRef golden = vms["tiny-golden"].obj;
  const MoRef folder = vms["tiny-golden"].prop("parent")->moref();
  const MoRef root = admin_->service_content().root_folder;

  // The administrator holds everything everywhere.
  auto all = privileges(*admin_, {golden, folder, root}, {kPowerOn, "Global.ManageCustomFields"});
  for (const MoRef& e : {golden, folder, root}) {
    EXPECT_TRUE(all[e.value][kPowerOn]) << e.value;
    EXPECT_TRUE(all[e.value]["Global.ManageCustomFields"]) << e.value;
  }
  // ReadOnly on the root, Admin on the golden VM: every privilege there, none on its folder.
  Session* golden_admin = login("golden-admin@vsphere.local", "golden-admin-lab-password");
  ASSERT_TRUE(golden_admin);
  auto held = privileges(*golden_admin, {golden, folder}, {kPowerOn, kClone, "System.Read"});
  EXPECT_TRUE(held[golden.value][kPowerOn]);
  EXPECT_TRUE(held[golden.value][kClone]);
  EXPECT_FALSE(held[folder.value][kPowerOn]);
  EXPECT_FALSE(held[folder.value][kClone]);
  EXPECT_TRUE(held[folder.value]["System.Read"]);
  // A session's key names whose privileges are asked: an unknown one is refused.
  auto unknown = driver(*admin_).call(
      "HasPrivilegeOnEntities", has_privilege_on_entities(admin_->service_content().authorization_manager,
                                                          {golden}, "not-a-session", {kPowerOn}));
  EXPECT_FALSE(unknown);
  // A user who may not log in with another's password.
  Session wrong(io_.get_executor(), *transport_,
                vsphere::SessionSettings{config_.endpoint, "golden-admin@vsphere.local", "storm-lab-password",
                                         std::chrono::seconds(10)});
  auto in = run_task(io_, wrong.login());
  ASSERT_FALSE(in);
  EXPECT_EQ(in.error().kind, ErrorKind::auth);
}

}  // namespace
