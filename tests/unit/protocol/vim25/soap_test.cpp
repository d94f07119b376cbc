// vim25 answers: SOAP replies and faults, the user-facing errors of faults, and the decoders.
#include "protocol/vim25/soap.hpp"

#include <gtest/gtest.h>

#include <string>

#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/fault.hpp"

namespace {

using namespace bootstorm::vsphere::vim25;
using bootstorm::ErrorKind;

// As vCenter writes it (prefixes soapenv/xsd/xsi).
std::string vcenter(const std::string& body) {
  return R"(<?xml version="1.0" encoding="UTF-8"?>)"
         R"(<soapenv:Envelope xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" )"
         R"(xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" )"
         R"(xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">)"
         R"(<soapenv:Body>)" +
         body + "</soapenv:Body></soapenv:Envelope>";
}

// As govmomi's simulator writes it (prefix XMLSchema-instance, soap envelope prefix "soapenv").
std::string vcsim(const std::string& body) {
  return R"(<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope )"
         R"(xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" )"
         R"(xmlns:xsd="http://www.w3.org/2001/XMLSchema" )"
         R"(xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>)" +
         body + "</soapenv:Body></soapenv:Envelope>";
}

std::string fault(const std::string& detail, const std::string& message = "msg") {
  return "<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>" + message +
         "</faultstring><detail>" + detail + "</detail></soapenv:Fault>";
}

TEST(Vim25Reply, TheResponseElementAndItsReturnval) {
  auto reply = SoapReply::parse(
      200,
      vcenter(
          R"(<LoginResponse xmlns="urn:vim25"><returnval><key>52a</key><userName>VSPHERE.LOCAL\Administrator</userName>)"
          R"(<fullName>Administrator vsphere.local</fullName></returnval></LoginResponse>)"),
      "vim25 Login at https://vc/sdk");
  ASSERT_TRUE(reply) << reply.error().what();
  ASSERT_FALSE(reply->is_fault());
  EXPECT_EQ(reply->response().name(), "LoginResponse");
  auto session = decode_user_session(reply->returnval());
  ASSERT_TRUE(session);
  EXPECT_EQ(session->user_name, "VSPHERE.LOCAL\\Administrator");
}

TEST(Vim25Reply, FaultsCarryTheirTypeAndFieldsUnderEitherPrefix) {
  for (auto wrap : {vcenter, vcsim}) {
    const bool sim = wrap == vcsim;
    const std::string xsi = sim ? "XMLSchema-instance" : "xsi";
    auto reply = SoapReply::parse(
        500,
        wrap(fault("<NoPermissionFault xmlns=\"urn:vim25\" " + xsi +
                       ":type=\"NoPermission\"><object type=\"Datacenter\">datacenter-2</object>"
                       "<privilegeId>VirtualMachine.Interact.PowerOn</privilegeId></NoPermissionFault>",
                   "Permission to perform this operation was denied.")),
        "vim25 PowerOnMultiVM_Task at https://vc/sdk");
    ASSERT_TRUE(reply) << reply.error().what();
    ASSERT_TRUE(reply->is_fault());
    const SoapFault& f = reply->fault();
    EXPECT_EQ(f.type, "NoPermission") << xsi;
    EXPECT_EQ(f.privilege, "VirtualMachine.Interact.PowerOn");
    EXPECT_EQ(f.object, "Datacenter:datacenter-2");
    auto e = fault_error(f, "vim25 PowerOnMultiVM_Task at https://vc/sdk");
    EXPECT_EQ(e.kind, ErrorKind::auth);
    EXPECT_NE(e.message.find("lacks privilege VirtualMachine.Interact.PowerOn on Datacenter:datacenter-2"),
              std::string::npos)
        << e.message;
    EXPECT_NE(e.hint.find("role"), std::string::npos);
  }
}

TEST(Vim25Reply, EveryExplainedFaultMapsToAClearError) {
  struct Case {
    std::string detail;
    ErrorKind kind;
    std::string says;
  };
  const Case cases[] = {
      {R"(<InvalidLoginFault xmlns="urn:vim25" xsi:type="InvalidLogin"></InvalidLoginFault>)",
       ErrorKind::auth, "rejected the user name or password"},
      {R"(<NotAuthenticatedFault xmlns="urn:vim25" xsi:type="NotAuthenticated"><object type="Folder">group-d1</object>)"
       R"(<privilegeId>System.View</privilegeId></NotAuthenticatedFault>)",
       ErrorKind::auth, "not (or no longer) logged in"},
      {R"(<InvalidPowerStateFault xmlns="urn:vim25" xsi:type="InvalidPowerState"><requestedState>poweredOn</requestedState>)"
       R"(<existingState>poweredOn</existingState></InvalidPowerStateFault>)",
       ErrorKind::conflict, "the VM is powered on (vCenter:"},
      {R"(<DuplicateNameFault xmlns="urn:vim25" xsi:type="DuplicateName"><name>bs-1-a</name><object type="Folder">group-v3</object></DuplicateNameFault>)",
       ErrorKind::conflict, "'bs-1-a' is already taken"},
      {R"(<TaskInProgressFault xmlns="urn:vim25" xsi:type="TaskInProgress"><task type="Task">task-7</task></TaskInProgressFault>)",
       ErrorKind::conflict, "another task is running on the object (Task:task-7)"},
      {R"(<ManagedObjectNotFoundFault xmlns="urn:vim25" xsi:type="ManagedObjectNotFound"><obj type="VirtualMachine">vm-9</obj></ManagedObjectNotFoundFault>)",
       ErrorKind::not_found, "VirtualMachine:vm-9 no longer exists"},
      // No xsi:type: the element's name says it.
      {R"(<InvalidLoginFault xmlns="urn:vim25"/>)", ErrorKind::auth, "rejected the user name or password"},
      {R"(<SystemErrorFault xmlns="urn:vim25" xsi:type="SystemError"><reason>x</reason></SystemErrorFault>)",
       ErrorKind::api, "SystemError: boom"},
  };
  for (const Case& c : cases) {
    auto reply = SoapReply::parse(500, vcenter(fault(c.detail, "boom")), "w");
    ASSERT_TRUE(reply) << c.detail;
    ASSERT_TRUE(reply->is_fault());
    auto e = fault_error(reply->fault(), "vim25 X at https://vc/sdk");
    EXPECT_EQ(e.kind, c.kind) << c.detail;
    EXPECT_NE(e.message.find(c.says), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("vim25 X at https://vc/sdk"), std::string::npos) << e.message;
  }
}

TEST(Vim25Reply, AServerThatIsNotVim25IsToldApart) {
  auto html = SoapReply::parse(404, "<html><body>Not Found</body></html>",
                               "vim25 RetrieveServiceContent at https://web/sdk");
  ASSERT_FALSE(html);
  EXPECT_EQ(html.error().kind, ErrorKind::http_status);
  EXPECT_EQ(html.error().status, 404);
  EXPECT_NE(html.error().hint.find("platform.api: rest"), std::string::npos);
  auto json = SoapReply::parse(200, R"({"value": 1})", "w");
  ASSERT_FALSE(json);
  EXPECT_EQ(json.error().kind, ErrorKind::protocol);
  auto other_root = SoapReply::parse(200, "<a/>", "w");
  ASSERT_FALSE(other_root);
  auto empty_body = SoapReply::parse(200, vcenter(""), "w");
  EXPECT_FALSE(empty_body);
  // A 500 must be a fault.
  EXPECT_FALSE(SoapReply::parse(500, vcenter("<XResponse xmlns=\"urn:vim25\"/>"), "w"));
}

TEST(Vim25Decode, ServiceContent) {
  auto reply = SoapReply::parse(
      200,
      vcsim(
          R"(<RetrieveServiceContentResponse xmlns="urn:vim25"><returnval>)"
          R"(<rootFolder type="Folder">group-d1</rootFolder><propertyCollector type="PropertyCollector">propertyCollector</propertyCollector>)"
          R"(<viewManager type="ViewManager">ViewManager</viewManager><about><name>VMware vCenter Server</name>)"
          R"(<fullName>VMware vCenter Server 6.5.0 build-5973321</fullName><vendor>VMware, Inc.</vendor><version>6.5.0</version>)"
          R"(<build>5973321</build><apiType>VirtualCenter</apiType><apiVersion>6.5</apiVersion></about>)"
          R"(<sessionManager type="SessionManager">SessionManager</sessionManager>)"
          R"(<customFieldsManager type="CustomFieldsManager">CustomFieldsManager</customFieldsManager>)"
          R"(</returnval></RetrieveServiceContentResponse>)"),
      "w");
  ASSERT_TRUE(reply);
  auto sc = decode_service_content(reply->returnval());
  ASSERT_TRUE(sc) << sc.error().what();
  EXPECT_EQ(sc->root_folder, (MoRef{"Folder", "group-d1"}));
  EXPECT_EQ(sc->view_manager.value, "ViewManager");
  EXPECT_EQ(sc->custom_fields_manager.type, "CustomFieldsManager");
  EXPECT_EQ(sc->about.api_type, "VirtualCenter");
  EXPECT_EQ(sc->about.api_version, "6.5");
  EXPECT_EQ(sc->about.build, "5973321");
  // Without a session manager there is nothing to log in to.
  auto bad = SoapReply::parse(
      200,
      vcsim(
          R"(<RetrieveServiceContentResponse xmlns="urn:vim25"><returnval><rootFolder type="Folder">f</rootFolder><propertyCollector type="PropertyCollector">p</propertyCollector></returnval></RetrieveServiceContentResponse>)"),
      "w");
  ASSERT_TRUE(bad);
  auto missing = decode_service_content(bad->returnval());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("sessionManager"), std::string::npos);
}

TEST(Vim25Decode, UpdateSetWithTypedValues) {
  auto reply = SoapReply::parse(
      200,
      vcsim(
          R"(<WaitForUpdatesExResponse xmlns="urn:vim25"><returnval><version>3</version><truncated>true</truncated>)"
          R"(<filterSet><filter type="PropertyFilter">session[1]f</filter><objectSet><kind>modify</kind>)"
          R"(<obj type="VirtualMachine">vm-42</obj>)"
          R"(<changeSet><name>runtime.powerState</name><op>assign</op><val XMLSchema-instance:type="VirtualMachinePowerState">poweredOn</val></changeSet>)"
          R"(<changeSet><name>guest.net</name><op>assign</op><val XMLSchema-instance:type="ArrayOfGuestNicInfo">)"
          R"(<GuestNicInfo><network>VM Network</network><ipAddress>10.0.0.5</ipAddress><ipAddress>fe80::1</ipAddress><connected>true</connected></GuestNicInfo>)"
          R"(</val></changeSet><changeSet><name>runtime.host</name><op>assign</op><val type="HostSystem" XMLSchema-instance:type="ManagedObjectReference">host-12</val></changeSet>)"
          R"(<changeSet><name>guest.ipAddress</name><op>remove</op></changeSet>)"
          R"(<missingSet><path>guest.net</path><fault><fault XMLSchema-instance:type="NoPermission"/></fault></missingSet>)"
          R"(</objectSet><objectSet><kind>leave</kind><obj type="VirtualMachine">vm-41</obj></objectSet></filterSet>)"
          R"(</returnval></WaitForUpdatesExResponse>)"),
      "w");
  ASSERT_TRUE(reply) << reply.error().what();
  auto set = decode_update_set(reply->response(), "2");
  ASSERT_TRUE(set) << set.error().what();
  EXPECT_EQ(set->version, "3");
  EXPECT_TRUE(set->truncated);
  ASSERT_EQ(set->filters.size(), 1u);
  const auto& objects = set->filters[0].objects;
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[0].obj, (MoRef{"VirtualMachine", "vm-42"}));
  ASSERT_EQ(objects[0].changes.size(), 4u);
  EXPECT_EQ(objects[0].changes[0].value->text, "poweredOn");
  EXPECT_EQ(objects[0].changes[0].value->xsi_type, "VirtualMachinePowerState");
  const Value& net = *objects[0].changes[1].value;
  EXPECT_TRUE(net.is_array());
  ASSERT_EQ(net.all("GuestNicInfo").size(), 1u);
  const Value& nic = *net.all("GuestNicInfo")[0];
  ASSERT_EQ(nic.all("ipAddress").size(), 2u);
  EXPECT_EQ(nic.all("ipAddress")[0]->text, "10.0.0.5");
  EXPECT_EQ(nic.field_text("network"), "VM Network");
  EXPECT_EQ(objects[0].changes[2].value->moref(), (MoRef{"HostSystem", "host-12"}));
  EXPECT_FALSE(objects[0].changes[3].value);
  ASSERT_EQ(objects[0].missing.size(), 1u);
  EXPECT_EQ(objects[0].missing[0].fault_type, "NoPermission");
  EXPECT_EQ(objects[1].kind, "leave");
  // A wait that timed out answers without returnval: nothing new, same version.
  auto idle = SoapReply::parse(
      200, vcsim(R"(<WaitForUpdatesExResponse xmlns="urn:vim25"></WaitForUpdatesExResponse>)"), "w");
  ASSERT_TRUE(idle);
  auto empty = decode_update_set(idle->response(), "7");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->version, "7");
  EXPECT_TRUE(empty->filters.empty());
}

TEST(Vim25Decode, RetrieveResultWithToken) {
  auto reply = SoapReply::parse(
      200,
      vcenter(
          R"(<RetrievePropertiesExResponse xmlns="urn:vim25"><returnval><token>t-1</token>)"
          R"(<objects><obj type="VirtualMachine">vm-1</obj><propSet><name>name</name><val xsi:type="xsd:string">bs-a</val></propSet>)"
          R"(<propSet><name>customValue</name><val xsi:type="ArrayOfCustomFieldValue"><CustomFieldValue xsi:type="CustomFieldStringValue">)"
          R"(<key>201</key><value>3f9a2c</value></CustomFieldValue></val></propSet></objects>)"
          R"(<objects><obj type="VirtualMachine">vm-2</obj></objects></returnval></RetrievePropertiesExResponse>)"),
      "w");
  ASSERT_TRUE(reply);
  auto result = decode_retrieve_result(reply->response());
  ASSERT_TRUE(result);
  EXPECT_EQ(result->token, "t-1");
  ASSERT_EQ(result->objects.size(), 2u);
  ASSERT_TRUE(result->objects[0].prop("name"));
  EXPECT_EQ(result->objects[0].prop("name")->text, "bs-a");
  const Value* custom = result->objects[0].prop("customValue");
  ASSERT_TRUE(custom);
  ASSERT_EQ(custom->all("CustomFieldValue").size(), 1u);
  EXPECT_EQ(custom->all("CustomFieldValue")[0]->xsi_type, "CustomFieldStringValue");
  EXPECT_EQ(custom->all("CustomFieldValue")[0]->field_text("value"), "3f9a2c");
  EXPECT_FALSE(result->objects[1].prop("name"));
}

TEST(Vim25Decode, SnapshotsOfATreeDepthFirst) {
  auto reply = SoapReply::parse(
      200,
      vcenter(
          R"(<RetrievePropertiesExResponse xmlns="urn:vim25"><returnval><objects><obj type="VirtualMachine">vm-1</obj>)"
          R"(<propSet><name>snapshot</name><val xsi:type="VirtualMachineSnapshotInfo">)"
          R"(<currentSnapshot type="VirtualMachineSnapshot">snapshot-3</currentSnapshot>)"
          R"(<rootSnapshotList><snapshot type="VirtualMachineSnapshot">snapshot-1</snapshot><name>base</name>)"
          R"(<childSnapshotList><snapshot type="VirtualMachineSnapshot">snapshot-2</snapshot><name>bs-1-base</name>)"
          R"(</childSnapshotList></rootSnapshotList>)"
          R"(<rootSnapshotList><snapshot type="VirtualMachineSnapshot">snapshot-3</snapshot><name>other</name></rootSnapshotList>)"
          R"(</val></propSet></objects></returnval></RetrievePropertiesExResponse>)"),
      "w");
  ASSERT_TRUE(reply);
  auto result = decode_retrieve_result(reply->response());
  ASSERT_TRUE(result && result->objects.size() == 1);
  const auto snapshots = snapshots_of(*result->objects[0].prop("snapshot"));
  ASSERT_EQ(snapshots.size(), 3u);
  EXPECT_EQ(snapshots[0].name, "base");
  EXPECT_EQ(snapshots[1].name, "bs-1-base");
  EXPECT_EQ(snapshots[1].snapshot, (MoRef{"VirtualMachineSnapshot", "snapshot-2"}));
  EXPECT_EQ(snapshots[2].name, "other");
  EXPECT_TRUE(snapshots_of(Value{}).empty());
}

}  // namespace
