// Every request body the vim25 client sends validates against the vim25 schema: the <schema> inside
// vim.wsdl's <types> (where the message elements are declared; the *-messagetypes.xsd files hold only their
// types), plus instant-clone.xsd for InstantClone_Task (6.7, not in 5.5). The schema is read from the WSDL at
// test time with libxml2, so nothing generated from it can drift. Hand-written samples that must fail prove
// the validator is strict (element order, 5.5-only fields, unresolvable xsi:type).
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlschemas.h>

#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "protocol/vim25/messages.hpp"
#include "protocol/vim25/performance.hpp"
#include "protocol/vim25/soap.hpp"

namespace {

namespace fs = std::filesystem;
using namespace bootstorm::vsphere::vim25;

const fs::path kDir = fs::path(BOOTSTORM_TEST_DATA) / "vim25";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void collect(void* ctx, const char* format, ...) {
  va_list args;
  va_start(args, format);
  char buffer[1024];
  vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  static_cast<std::string*>(ctx)->append(buffer);
}

// The schema, loaded once for the whole test program (it is 2.5 MB of XSD).
class Vim25Schema {
 public:
  static Vim25Schema& get() {
    static Vim25Schema schema;
    return schema;
  }
  // "" when `element` validates, else libxml2's messages.
  std::string validate(const std::string& element) {
    std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)> doc(
        xmlReadMemory(element.data(), static_cast<int>(element.size()), "body.xml", nullptr, XML_PARSE_NONET),
        xmlFreeDoc);
    if (!doc) return "not well-formed: " + element;
    std::string errors;
    std::unique_ptr<xmlSchemaValidCtxt, decltype(&xmlSchemaFreeValidCtxt)> ctxt(
        xmlSchemaNewValidCtxt(schema_), xmlSchemaFreeValidCtxt);
    xmlSchemaSetValidErrors(ctxt.get(), collect, collect, &errors);
    const int rc = xmlSchemaValidateDoc(ctxt.get(), doc.get());
    if (rc == 0) return "";
    return errors.empty() ? "invalid (rc " + std::to_string(rc) + ")" : errors;
  }
  const std::string& load_error() const { return load_error_; }

 private:
  Vim25Schema() {
    const std::string wsdl_path = (kDir / "vim.wsdl").string();
    std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)> wsdl(
        xmlReadFile(wsdl_path.c_str(), nullptr, XML_PARSE_NONET), xmlFreeDoc);
    if (!wsdl) {
      load_error_ = "cannot read " + wsdl_path;
      return;
    }
    // definitions/types/schema
    xmlNode* schema = nullptr;
    for (xmlNode* t = xmlDocGetRootElement(wsdl.get())->children; t && !schema; t = t->next) {
      if (t->type != XML_ELEMENT_NODE || std::string(reinterpret_cast<const char*>(t->name)) != "types")
        continue;
      for (xmlNode* s = t->children; s; s = s->next) {
        if (s->type == XML_ELEMENT_NODE && std::string(reinterpret_cast<const char*>(s->name)) == "schema") {
          schema = s;
          break;
        }
      }
    }
    if (!schema) {
      load_error_ = "no types/schema in " + wsdl_path;
      return;
    }
    // The schema as a document of its own, in the same folder (its includes are relative), plus the 6.7
    // InstantClone declarations.
    xsd_ = xmlNewDoc(reinterpret_cast<const xmlChar*>("1.0"));
    xmlNode* copy = xmlDocCopyNode(schema, xsd_, 1);
    xmlDocSetRootElement(xsd_, copy);
    xmlReconciliateNs(xsd_, copy);
    xmlNode* include = xmlNewChild(copy, copy->ns, reinterpret_cast<const xmlChar*>("include"), nullptr);
    xmlNewProp(include, reinterpret_cast<const xmlChar*>("schemaLocation"),
               reinterpret_cast<const xmlChar*>("instant-clone.xsd"));
    // Includes must come first in a schema.
    xmlUnlinkNode(include);
    xmlAddPrevSibling(copy->children, include);
    xsd_->URL = xmlStrdup(reinterpret_cast<const xmlChar*>((kDir / "vim-wsdl-types.xsd").string().c_str()));
    xmlSchemaParserCtxtPtr parser = xmlSchemaNewDocParserCtxt(xsd_);
    xmlSchemaSetParserErrors(parser, collect, collect, &load_error_);
    schema_ = xmlSchemaParse(parser);
    xmlSchemaFreeParserCtxt(parser);
    if (!schema_ && load_error_.empty()) load_error_ = "xmlSchemaParse failed";
    if (schema_) load_error_.clear();
  }
  ~Vim25Schema() {
    if (schema_) xmlSchemaFree(schema_);
    if (xsd_) xmlFreeDoc(xsd_);
  }
  xmlDocPtr xsd_ = nullptr;
  xmlSchemaPtr schema_ = nullptr;
  std::string load_error_;
};

class Vim25SchemaTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(Vim25Schema::get().load_error(), "") << "the vim25 schema did not load"; }
  static void expect_valid(const std::string& element) {
    EXPECT_EQ(Vim25Schema::get().validate(element), "") << element;
  }
};

const MoRef kPc{"PropertyCollector", "propertyCollector"};
const MoRef kVm{"VirtualMachine", "vm-42"};

TEST_F(Vim25SchemaTest, SessionCalls) {
  expect_valid(retrieve_service_content());
  expect_valid(login({"SessionManager", "SessionManager"}, "administrator@vsphere.local", "p<a>ss&\"'"));
  expect_valid(logout({"SessionManager", "SessionManager"}));
}

TEST_F(Vim25SchemaTest, ViewsAndThePropertyCollector) {
  const MoRef vm_ = {"ViewManager", "ViewManager"};
  expect_valid(create_container_view(vm_, {"Folder", "group-d1"}, {"VirtualMachine"}, true));
  expect_valid(create_container_view(vm_, {"Folder", "group-d1"}, {}, false));
  expect_valid(create_list_view(vm_, {kVm, {"VirtualMachine", "vm-43"}}));
  expect_valid(destroy_view({"ContainerView", "session[1]view-1"}));
  auto spec = view_filter_spec(
      {"ContainerView", "session[1]view-1"}, "VirtualMachine",
      {"runtime.powerState", "runtime.bootTime", "guest.toolsRunningStatus", "guest.ipAddress", "guest.net"});
  expect_valid(create_filter(kPc, spec, true));
  spec.report_missing_objects = true;
  expect_valid(create_filter(kPc, spec, false));
  expect_valid(create_filter(
      kPc, objects_filter_spec({{"Task", "task-1"}, {"Task", "task-2"}}, "Task", {"info.state"}), false));
  expect_valid(destroy_property_filter({"PropertyFilter", "session[1]filter-1"}));
  expect_valid(create_property_collector(kPc));
  expect_valid(destroy_property_collector({"PropertyCollector", "session[1]collector-1"}));
  expect_valid(wait_for_updates_ex(kPc, "", {}));
  expect_valid(wait_for_updates_ex(kPc, "12", WaitOptions{30, 1000}));
  expect_valid(cancel_wait_for_updates(kPc));
  expect_valid(retrieve_properties_ex(kPc, {spec}));
  expect_valid(retrieve_properties_ex(kPc, {spec, spec}, 500));
  expect_valid(continue_retrieve_properties_ex(kPc, "token-1"));
}

TEST_F(Vim25SchemaTest, ProvisioningCalls) {
  CloneSpec linked;
  linked.location.datastore = MoRef{"Datastore", "datastore-11"};
  linked.location.disk_move_type = "createNewChildDiskBacking";
  linked.location.pool = MoRef{"ResourcePool", "resgroup-8"};
  linked.location.host = MoRef{"HostSystem", "host-12"};
  linked.snapshot = MoRef{"VirtualMachineSnapshot", "snapshot-3"};
  linked.extra_config = {{"guestinfo.bootstorm.run", "3f9a2c"}};
  expect_valid(clone_vm_task(kVm, {"Folder", "group-v3"}, "bs-3f9a2c-storm-0001", linked));
  expect_valid(clone_vm_task(kVm, {"Folder", "group-v3"}, "full", CloneSpec{}));
  InstantCloneSpec instant;
  instant.name = "bs-3f9a2c-storm-0002";
  instant.location.host = MoRef{"HostSystem", "host-12"};
  instant.config = {{"guestinfo.bootstorm.run", "3f9a2c"}, {"guestinfo.bootstorm.vm", "0002"}};
  expect_valid(instant_clone_task(kVm, instant));
  expect_valid(create_snapshot_task(kVm, "bootstorm-3f9a2c", "linked-clone base", false, false));
  expect_valid(create_snapshot_task(kVm, "s", "", false, true));
  expect_valid(remove_snapshot_task({"VirtualMachineSnapshot", "snapshot-3"}, false));
  expect_valid(destroy_task(kVm));
}

TEST_F(Vim25SchemaTest, PowerCustomFieldsAndReconfigure) {
  expect_valid(power_on_multi_vm_task({"Datacenter", "datacenter-2"}, {kVm, {"VirtualMachine", "vm-43"}}));
  expect_valid(
      power_on_multi_vm_task({"Datacenter", "datacenter-2"}, {kVm}, {{"OverrideAutomationLevel", "manual"}}));
  expect_valid(power_on_vm_task(kVm));
  expect_valid(power_on_vm_task(kVm, MoRef{"HostSystem", "host-12"}));
  expect_valid(power_off_vm_task(kVm));
  const MoRef cfm{"CustomFieldsManager", "CustomFieldsManager"};
  expect_valid(add_custom_field_def(cfm, "bootstorm.run", "VirtualMachine"));
  expect_valid(add_custom_field_def(cfm, "bootstorm.run", ""));
  expect_valid(set_field(cfm, kVm, 201, "3f9a2c"));
  expect_valid(has_privilege_on_entities({"AuthorizationManager", "AuthorizationManager"},
                                         {kVm, {"Folder", "group-v3"}}, "52b5a3c0-session",
                                         {"VirtualMachine.Interact.PowerOn", "Datastore.AllocateSpace"}));
  expect_valid(reconfig_vm_task_extra_config(
      kVm, {{"SET.guest.toolsRunningStatus", "guestToolsRunning"}, {"SET.guest.ipAddress", "10.0.0.5"}}));
}

TEST_F(Vim25SchemaTest, PerformanceManagerCalls) {
  const MoRef perf{"PerformanceManager", "PerfMgr"};
  PerfQuerySpec vm;
  vm.entity = kVm;
  vm.start_time = std::chrono::system_clock::time_point(std::chrono::seconds(1714558780));
  vm.end_time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1714559100250));
  vm.max_sample = 18;
  vm.metric_ids = {{173, "*"}, {174, "*"}, {175, ""}};
  PerfQuerySpec host;
  host.entity = {"HostSystem", "host-12"};
  host.metric_ids = {{164, "*"}, {180, "*"}};
  expect_valid(query_perf(perf, {vm, host}));
  PerfQuerySpec bare;
  bare.entity = kVm;
  bare.interval_id.reset();
  bare.format.clear();
  expect_valid(query_perf(perf, {bare}));
  expect_valid(query_perf_counter(perf, {6, 173}));
  expect_valid(retrieve_properties_ex(kPc, {perf_counter_spec(perf)}));
}

TEST_F(Vim25SchemaTest, TheValidatorIsStrict) {
  // Hand-written bodies that break the schema in the ways a client could: each must fail.
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kDir / "samples" / "invalid")) {
    EXPECT_NE(Vim25Schema::get().validate(read(entry.path())), "") << entry.path() << " validated";
    ++checked;
  }
  EXPECT_GE(checked, 5);
  for (const auto& entry : fs::directory_iterator(kDir / "samples" / "valid")) {
    EXPECT_EQ(Vim25Schema::get().validate(read(entry.path())), "") << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 10);
  // And the client's own output with one field moved fails too.
  std::string body = login({"SessionManager", "SessionManager"}, "u", "p");
  const auto user = body.find("<userName>");
  const auto pass = body.find("<password>");
  ASSERT_LT(user, pass);
  std::string swapped = body.substr(0, user) + body.substr(pass, body.find("</password>") + 11 - pass) +
                        body.substr(user, pass - user) + body.substr(body.find("</password>") + 11);
  EXPECT_NE(Vim25Schema::get().validate(swapped), "") << swapped;
}

TEST(Vim25Envelope, WrapsTheElementInASoap11Body) {
  const std::string env = soap_envelope(retrieve_service_content());
  EXPECT_EQ(env.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
  EXPECT_NE(env.find("<soapenv:Body><RetrieveServiceContent xmlns=\"urn:vim25\""), std::string::npos) << env;
  EXPECT_NE(env.find("<_this type=\"ServiceInstance\">ServiceInstance</_this>"), std::string::npos) << env;
}

}  // namespace
