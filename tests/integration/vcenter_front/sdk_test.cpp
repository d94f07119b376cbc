// The lab's vim25 endpoint (/sdk) driven by bootstorm's vim25 client over verified TLS, against `bootstorm
// lab serve`: login with the session cookie, InvalidLogin, a session ended by the lab's expiry fault
// recovered by one re-login, MethodNotFound for a method the front does not serve, Logout. (pyVmomi drives
// the same endpoint in tests/conformance/test_pyvmomi.py.)
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "simulator/model/lab.hpp"
#include "tests/support/lab_process.hpp"
#include "tests/support/run_task.hpp"
#include "tests/support/served_lab_vcenter.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using bootstorm::testing::run_task;

std::string vim25_logout(const MoRef& session_manager) {
  return bootstorm::vsphere::vim25::logout(session_manager);
}

class LabSdk : public test_support::ServedLabVcenter {
 protected:
  vsphere::SessionSettings settings(std::string password = {}) {
    return {config_.endpoint, admin_user(), password.empty() ? admin_password() : password,
            std::chrono::seconds(10)};
  }
  void expire_sessions() { set_faults(R"({"expireSessions": true})"); }
};

TEST_F(LabSdk, LoginServiceContentExpiryReloginAndLogout) {
  Session session(io_.get_executor(), *transport_, settings());
  auto login = run_task(io_, session.login());
  ASSERT_TRUE(login) << login.error().what();
  EXPECT_EQ(session.service_content().about.api_type, "VirtualCenter");
  EXPECT_EQ(session.api_version(), std::string(kClientApiVersion));  // the lab says 7.0.3.0
  EXPECT_EQ(session.service_content().root_folder, (MoRef{"Folder", "group-d1"}));

  // A method the front does not serve: MethodNotFound, naming it.
  auto unserved = run_task(
      io_, session.call("MarkAsTemplate", R"(<MarkAsTemplate xmlns="urn:vim25"><_this type="VirtualMachine">)"
                                          R"(vm-1001</_this></MarkAsTemplate>)"));
  ASSERT_FALSE(unserved);
  EXPECT_NE(unserved.error().message.find("MethodNotFound"), std::string::npos) << unserved.error().what();
  EXPECT_NE(unserved.error().message.find("MarkAsTemplate"), std::string::npos) << unserved.error().what();

  // The lab ends every session: the next call logs in once more and goes through.
  expire_sessions();
  auto logout =
      run_task(io_, session.call("Logout", vim25_logout(session.service_content().session_manager)));
  ASSERT_TRUE(logout) << logout.error().what();
  EXPECT_EQ(session.logins(), 2u);
}

TEST_F(LabSdk, AWrongPasswordIsInvalidLoginAndNothingElseWorksWithoutASession) {
  Session wrong(io_.get_executor(), *transport_, settings("not-the-password"));
  auto login = run_task(io_, wrong.login());
  ASSERT_FALSE(login);
  EXPECT_EQ(login.error().kind, ErrorKind::auth);
  EXPECT_NE(login.error().message.find("rejected the user name or password"), std::string::npos);
  // Without the session cookie, a call is NotAuthenticated (with the object and privilege, as vCenter says).
  http::Request raw("POST", "/sdk", soap_envelope(vim25_logout({"SessionManager", "SessionManager"})));
  raw.headers.emplace_back("Content-Type", "text/xml; charset=utf-8");
  auto resp = run_task(io_, transport_->send(std::move(raw)));
  ASSERT_TRUE(resp) << resp.error().what();
  EXPECT_EQ(resp->status, 500);
  auto reply = SoapReply::parse(resp->status, resp->body, "raw Logout");
  ASSERT_TRUE(reply) << reply.error().what();
  ASSERT_TRUE(reply->is_fault());
  EXPECT_EQ(reply->fault().type, "NotAuthenticated");
  EXPECT_EQ(reply->fault().object, "SessionManager:SessionManager");
  EXPECT_EQ(reply->fault().privilege, "System.View");
}

// Views and RetrievePropertiesEx, paged: the hosts and VMs the lab's profile says vCenter has, as bootstorm's
// provider will read them (a ContainerView and a ListView traversed by "view").
TEST_F(LabSdk, ViewsReadPageByPageMatchTheLabProfile) {
  Session session(io_.get_executor(), *transport_, settings());
  ASSERT_TRUE(run_task(io_, session.login()));
  const ServiceContent& sc = session.service_content();
  auto view = run_task(
      io_, session.call("CreateContainerView",
                        create_container_view(sc.view_manager, sc.root_folder, {"HostSystem"}, true)));
  ASSERT_TRUE(view) << view.error().what();
  const MoRef hosts_view = decode_moref(view->returnval());
  EXPECT_EQ(hosts_view.type, "ContainerView");
  auto spec = view_filter_spec(hosts_view, "HostSystem", {"name", "runtime.inMaintenanceMode", "parent"});
  std::vector<std::string> names;
  int pages = 0;
  auto reply = run_task(
      io_, session.call("RetrievePropertiesEx", retrieve_properties_ex(sc.property_collector, {spec}, 1)));
  while (reply) {
    ++pages;
    auto result = decode_retrieve_result(reply->response());
    ASSERT_TRUE(result) << result.error().what();
    for (const auto& o : result->objects) {
      ASSERT_TRUE(o.prop("name"));
      names.push_back(o.prop("name")->text);
      EXPECT_EQ(o.prop("runtime.inMaintenanceMode")->text, "false");
      EXPECT_EQ(o.prop("parent")->moref().type, "ClusterComputeResource");
    }
    if (result->token.empty()) break;
    reply =
        run_task(io_, session.call("ContinueRetrievePropertiesEx",
                                   continue_retrieve_properties_ex(sc.property_collector, result->token)));
  }
  ASSERT_TRUE(reply) << reply.error().what();
  std::vector<std::string> expected;
  auto lab_spec = sim::model::load_lab_spec("small");
  ASSERT_TRUE(lab_spec);
  for (const auto& h : lab_spec->hosts)
    if (h.inventory == "vcenter") expected.push_back(h.name);
  std::sort(names.begin(), names.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);
  EXPECT_EQ(pages, static_cast<int>(expected.size()));  // maxObjects 1: one page per host

  // A ListView of the golden VM, read through "view" too.
  auto vms = run_task(
      io_, session.call("CreateContainerView",
                        create_container_view(sc.view_manager, sc.root_folder, {"VirtualMachine"}, true)));
  ASSERT_TRUE(vms);
  auto all = run_task(
      io_, session.call("RetrievePropertiesEx",
                        retrieve_properties_ex(
                            sc.property_collector,
                            {view_filter_spec(decode_moref(vms->returnval()), "VirtualMachine", {"name"})})));
  ASSERT_TRUE(all);
  auto vm_list = decode_retrieve_result(all->response());
  ASSERT_TRUE(vm_list && !vm_list->objects.empty());
  const MoRef golden = vm_list->objects.front().obj;
  auto list = run_task(io_, session.call("CreateListView", create_list_view(sc.view_manager, {golden})));
  ASSERT_TRUE(list);
  auto one = run_task(
      io_,
      session.call("RetrievePropertiesEx",
                   retrieve_properties_ex(sc.property_collector,
                                          {view_filter_spec(decode_moref(list->returnval()), "VirtualMachine",
                                                            {"runtime.powerState", "runtime.host"})})));
  ASSERT_TRUE(one) << one.error().what();
  auto only = decode_retrieve_result(one->response());
  ASSERT_TRUE(only);
  ASSERT_EQ(only->objects.size(), 1u);
  EXPECT_EQ(only->objects[0].obj, golden);
  EXPECT_EQ(only->objects[0].prop("runtime.powerState")->text, "poweredOff");
  EXPECT_EQ(only->objects[0].prop("runtime.host")->moref().type, "HostSystem");
  // A data object whole, as a pathSet may ask: `guest`, its array field `net` repeated (none while off).
  auto guest =
      run_task(io_, session.call("RetrievePropertiesEx",
                                 retrieve_properties_ex(sc.property_collector,
                                                        {view_filter_spec(decode_moref(list->returnval()),
                                                                          "VirtualMachine", {"guest"})})));
  ASSERT_TRUE(guest) << guest.error().what();
  auto guest_info = decode_retrieve_result(guest->response());
  ASSERT_TRUE(guest_info && guest_info->objects.size() == 1u);
  EXPECT_EQ(guest_info->objects[0].prop("guest")->field_text("toolsRunningStatus"), "guestToolsNotRunning");
  // Destroyed views are gone; an unknown property is InvalidProperty.
  ASSERT_TRUE(run_task(io_, session.call("DestroyView", destroy_view(hosts_view))));
  EXPECT_FALSE(run_task(io_, session.call("DestroyView", destroy_view(hosts_view))));
  auto unknown =
      run_task(io_, session.call("RetrievePropertiesEx",
                                 retrieve_properties_ex(sc.property_collector,
                                                        {view_filter_spec(decode_moref(list->returnval()),
                                                                          "VirtualMachine", {"no.such"})})));
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("InvalidProperty"), std::string::npos) << unknown.error().what();
}

// Fetch: how pyVmomi 8.0.1 and later read each property accessor (vm.name, view.view): one property of one
// object, typed as RetrieveProperties types it.
TEST_F(LabSdk, FetchReadsOnePropertyOfAnyObjectAsPyVmomiAccessorsDo) {
  Session session(io_.get_executor(), *transport_, settings());
  ASSERT_TRUE(run_task(io_, session.login()));
  const ServiceContent& sc = session.service_content();
  auto fetch = [&](const MoRef& self, const std::string& prop) {
    return run_task(io_,
                    session.call("Fetch", "<Fetch xmlns=\"urn:vim25\"><_this type=\"" + self.type + "\">" +
                                              self.value + "</_this><prop>" + prop + "</prop></Fetch>"));
  };
  auto view = run_task(
      io_, session.call("CreateContainerView",
                        create_container_view(sc.view_manager, sc.root_folder, {"VirtualMachine"}, true)));
  ASSERT_TRUE(view) << view.error().what();
  auto members = fetch(decode_moref(view->returnval()), "view");
  ASSERT_TRUE(members) << members.error().what();
  EXPECT_EQ(members->returnval().type_name(), "ArrayOfManagedObjectReference");
  const std::vector<XmlNode> vms = members->returnval().children("ManagedObjectReference");
  ASSERT_EQ(vms.size(), 1u);  // the lab's golden VM
  const MoRef golden = decode_moref(vms.front());
  EXPECT_EQ(golden.type, "VirtualMachine");

  auto name = fetch(golden, "name");
  ASSERT_TRUE(name) << name.error().what();
  EXPECT_EQ(name->returnval().type_name(), "string");
  EXPECT_EQ(name->returnval().text(), "tiny-golden");
  auto power = fetch(golden, "runtime.powerState");
  ASSERT_TRUE(power) << power.error().what();
  EXPECT_EQ(power->returnval().text(), "poweredOff");
  // A property without a value (no snapshot yet): an answer without returnval, as pyVmomi reads None.
  auto snapshot = fetch(golden, "snapshot");
  ASSERT_TRUE(snapshot) << snapshot.error().what();
  EXPECT_FALSE(snapshot->returnval());

  // A property that holds a data object: the whole object, composed from the paths beneath it.
  auto runtime = fetch(golden, "runtime");
  ASSERT_TRUE(runtime) << runtime.error().what();
  EXPECT_EQ(runtime->returnval().type_name(), "VirtualMachineRuntimeInfo");
  EXPECT_EQ(runtime->returnval().child_text("powerState"), "poweredOff");
  EXPECT_EQ(decode_moref(runtime->returnval().child("host")).type, "HostSystem");
  EXPECT_FALSE(runtime->returnval().child("bootTime"));  // off: unset, so left out
  auto config = fetch(golden, "config");
  ASSERT_TRUE(config) << config.error().what();
  EXPECT_EQ(config->returnval().child_text("name"), "tiny-golden");
  EXPECT_EQ(config->returnval().child("hardware").type_name(), "VirtualHardware");
  EXPECT_NE(config->returnval().child("hardware").child_text("numCPU").value_or("0"), "0");

  auto unknown = fetch(golden, "no.such");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("InvalidProperty"), std::string::npos) << unknown.error().what();
  auto gone = fetch({"VirtualMachine", "vm-does-not-exist"}, "name");
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().message.find("no longer exists"), std::string::npos)
      << gone.error().what();  // ManagedObjectNotFound
}

TEST_F(LabSdk, TheLabsFrontFaultsApplyToSdkToo) {
  // Every /sdk call fails with an injected 503 SystemError: login says so, naming the call.
  set_faults(R"({"errorRate": 1.0, "errorStatus": 503, "paths": ["/sdk"]})");
  Session session(io_.get_executor(), *transport_, settings());
  auto failed = run_task(io_, session.login());
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("vim25 RetrieveServiceContent at " + config_.endpoint +
                                        "/sdk failed: SystemError"),
            std::string::npos)
      << failed.error().what();
  // The REST API is outside `paths`: untouched. With the fault cleared, /sdk answers again.
  http::Request rest("GET", "/api");
  auto untouched = run_task(io_, transport_->send(std::move(rest)));
  ASSERT_TRUE(untouched);
  EXPECT_NE(untouched->status, 503);
  set_faults(R"({"errorRate": 0})");
  auto login = run_task(io_, session.login());
  EXPECT_TRUE(login) << login.error().what();
}

}  // namespace
