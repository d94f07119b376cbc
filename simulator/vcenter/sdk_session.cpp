// The lab's vim25 endpoint, /sdk: the documents a SOAP client reads first (vimServiceVersions.xml, which
// pyVmomi's SmartConnect uses to agree on a version, and vimService.wsdl), RetrieveServiceContent, and the
// session: Login answers a `vmware_soap_session` cookie (the same session store and idle timeout as the REST
// API's sessions), Logout ends it. Every other method needs a session (NotAuthenticated without one); a
// method this front does not serve answers MethodNotFound naming it, as vCenter does for an unknown method.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "common/lab_identity.hpp"
#include "common/xml_text.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/soap.hpp"
#include "protocol/vim25/xml.hpp"
#include "protocol/vim25/xml_writer.hpp"
#include "simulator/vcenter/detail/sdk_faults.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

using http::ServerRequest;
using http::ServerResponse;
namespace vim25 = vsphere::vim25;

namespace {

constexpr std::string_view kApiVersion = kVcenterVersion;
constexpr std::string_view kCookie = "vmware_soap_session";

ServerResponse xml_response(int status, std::string body) {
  ServerResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "text/xml; charset=utf-8"}};
  r.body = std::move(body);
  return r;
}

// The session cookie's value in a request's Cookie header (quotes kept, as the server set it).
std::string cookie_token(const ServerRequest& req) {
  auto header = req.header("Cookie");
  if (!header) return {};
  std::string_view h = *header;
  for (std::size_t pos = h.find(kCookie); pos != std::string_view::npos; pos = h.find(kCookie, pos + 1)) {
    if (pos > 0 && h[pos - 1] != ' ' && h[pos - 1] != ';') continue;
    std::string_view value = h.substr(pos + kCookie.size());
    if (value.empty() || value.front() != '=') continue;
    value.remove_prefix(1);
    value = value.substr(0, value.find(';'));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    return std::string(value);
  }
  return {};
}

std::string versions_document() {
  return fmt::format(R"(<?xml version="1.0" encoding="UTF-8" ?>
<namespaces version="1.0">
 <namespace>
  <name>urn:vim25</name>
  <version>{}</version>
  <priorVersions>
   <version>7.0.2.0</version>
   <version>7.0.1.0</version>
   <version>7.0.0.0</version>
   <version>6.7.3</version>
   <version>6.7.2</version>
   <version>6.7.1</version>
   <version>6.7</version>
   <version>6.5</version>
   <version>6.0</version>
   <version>5.5</version>
  </priorVersions>
 </namespace>
</namespaces>
)",
                     kApiVersion);
}

// The service description clients fetch to find the endpoint: the binding is vim.wsdl's.
std::string service_wsdl(const ServerRequest& req) {
  const std::string host = std::string(req.header("Host").value_or("localhost"));
  return fmt::format(R"(<?xml version="1.0" encoding="UTF-8" ?>
<definitions targetNamespace="urn:vim25Service"
   xmlns="http://schemas.xmlsoap.org/wsdl/"
   xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
   xmlns:interface="urn:vim25"
>
   <import location="vim.wsdl" namespace="urn:vim25" />
   <service name="VimService">
      <port binding="interface:VimBinding" name="VimPort">
         <soap:address location="https://{}/sdk" />
      </port>
   </service>
</definitions>
)",
                     escape_xml(host));
}

}  // namespace

ServerResponse sdk_ok(std::string response_element) {
  return xml_response(200, vim25::soap_envelope(response_element));
}

ServerResponse sdk_fault(std::string_view type, std::string_view message, std::string_view detail_fields) {
  std::string detail = fmt::format(
      R"(<{0}Fault xmlns="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="{0}">{1}</{0}Fault>)",
      type, detail_fields);
  return xml_response(
      500, fmt::format(R"(<?xml version="1.0" encoding="UTF-8"?>)"
                       R"(<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">)"
                       R"(<soapenv:Body><soapenv:Fault><faultcode>ServerFaultCode</faultcode>)"
                       R"(<faultstring>{}</faultstring><detail>{}</detail></soapenv:Fault>)"
                       R"(</soapenv:Body></soapenv:Envelope>)",
                       escape_xml(message), detail));
}

std::string response_element(std::string_view name, std::string_view content) {
  return fmt::format(R"(<{0} xmlns="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" )"
                     R"(xmlns:xsd="http://www.w3.org/2001/XMLSchema">{1}</{0}>)",
                     name, content);
}

ServerResponse sdk_fault(const SdkFaultInfo& fault) {
  return sdk_fault(fault.type, fault.message, fault.fields);
}

SdkFaultInfo object_not_found_fault(const vim25::MoRef& ref) {
  return {"ManagedObjectNotFound", "The object has already been deleted or has not been completely created",
          moref_element("obj", ref)};
}

ServerResponse sdk_object_not_found(const vim25::MoRef& ref) {
  return sdk_fault(object_not_found_fault(ref));
}

ServerResponse sdk_invalid_property(std::string_view path, std::string_view type) {
  return sdk_fault("InvalidProperty",
                   fmt::format("The simulated lab does not know property '{}' of {}.", path, type),
                   "<name>" + escape_xml(path) + "</name>");
}

std::string localized_fault(const SdkFaultInfo& fault) {
  return fmt::format(R"(<fault xsi:type="{}">{}</fault><localizedMessage>{}</localizedMessage>)", fault.type,
                     fault.fields, escape_xml(fault.message));
}

std::string typed_element(std::string_view name, std::string_view xsi_type, std::string_view text) {
  return fmt::format(R"(<{0} xsi:type="{1}">{2}</{0}>)", name, xsi_type, escape_xml(text));
}

ServerResponse task_response(std::string_view method, const vim25::MoRef& task) {
  vim25::XmlWriter w(std::string(method) + "Response");
  w.moref("returnval", task);
  return sdk_ok(w.finish());
}

std::string moref_element(std::string_view name, const vim25::MoRef& ref) {
  return fmt::format(R"(<{0} type="{1}">{2}</{0}>)", name, escape_xml(ref.type), escape_xml(ref.value));
}

std::string VcenterFront::Impl::sdk_service_content(std::string_view element,
                                                    std::string_view xsi_type) const {
  vim25::XmlWriter w = vim25::XmlWriter::fragment(element, xsi_type);
  w.moref("rootFolder", {"Folder", std::string(kRootFolderId)});
  w.moref("propertyCollector", {"PropertyCollector", "propertyCollector"});
  w.moref("viewManager", {"ViewManager", "ViewManager"});
  w.open("about")
      .leaf("name", "VMware vCenter Server")
      .leaf("fullName", fmt::format("VMware vCenter Server {} build-lab ({})", kApiVersion,
                                    lab_simulator_name(lab.spec().name)))
      .leaf("vendor", "VMware, Inc.")
      .leaf("version", kApiVersion)
      .leaf("build", "lab")
      .leaf("localeVersion", "INTL")
      .leaf("localeBuild", "000")
      .leaf("osType", "linux-x64")
      .leaf("productLineId", "vpx")
      .leaf("apiType", "VirtualCenter")
      .leaf("apiVersion", kApiVersion)
      .leaf("instanceUuid", "bootstorm-lab-" + lab.spec().name)
      .close();
  w.moref("setting", {"OptionManager", "VpxSettings"});
  w.moref("sessionManager", {"SessionManager", "SessionManager"});
  w.moref("authorizationManager", {"AuthorizationManager", "AuthorizationManager"});
  w.moref("perfManager", {"PerformanceManager", "PerfMgr"});
  w.moref("taskManager", {"TaskManager", "TaskManager"});
  w.moref("customFieldsManager", {"CustomFieldsManager", "CustomFieldsManager"});
  return w.finish();
}

boost::asio::awaitable<ServerResponse> VcenterFront::Impl::serve_sdk(const ServerRequest& req) {
  // The lab's front faults apply here as on the REST API; an injected error is a SOAP SystemError fault
  // with the configured HTTP status.
  if (co_await inject_front_faults(req.path)) {
    ServerResponse injected =
        sdk_fault("SystemError", "Injected fault (simulated lab).", "<reason>injected</reason>");
    injected.status = lab.faults().error_status;
    co_return injected;
  }
  co_return co_await sdk_call(req);
}

boost::asio::awaitable<ServerResponse> VcenterFront::Impl::sdk_call(const ServerRequest& req) {
  if (req.method == "GET" && req.path == "/sdk/vimServiceVersions.xml") {
    count_request("GET /sdk/vimServiceVersions.xml");
    co_return xml_response(200, versions_document());
  }
  if (req.method == "GET" && req.path == "/sdk/vimService.wsdl") {
    count_request("GET /sdk/vimService.wsdl");
    co_return xml_response(200, service_wsdl(req));
  }
  if (req.method != "POST" || req.path != "/sdk") {
    ServerResponse r;
    r.status = 404;
    r.headers = {{"Content-Type", "text/plain"}};
    r.body = "404 Not Found";
    co_return r;
  }
  auto doc = vim25::XmlDocument::parse(req.body, "the request");
  if (!doc) co_return sdk_fault("InvalidRequest", doc.error().message);
  vim25::XmlNode envelope = doc->root();
  vim25::XmlNode body;
  if (envelope.is(vim25::kSoapEnvelopeNs, "Envelope")) {
    for (vim25::XmlNode c = envelope.first_child(); c; c = c.next_sibling()) {
      if (c.is(vim25::kSoapEnvelopeNs, "Body")) body = c;
    }
  }
  const vim25::XmlNode call = body.first_child();
  if (!call)
    co_return sdk_fault("InvalidRequest",
                        "The request is not a SOAP 1.1 envelope with a method in its Body.");
  const std::string method(call.name());
  // The statistics key: a method name as vim25 spells them, so that no request can grow the table at will.
  const bool plausible = method.size() <= 64 && std::all_of(method.begin(), method.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                         });
  count_request("POST /sdk " + (plausible ? method : std::string("(not a vim25 method name)")));
  const vim25::MoRef self{call.child("_this").attribute("type").value_or(""),
                          call.child_text("_this").value_or("")};

  // A method this lab plays a vCenter without (an older release, or a proxy that filters it).
  const auto& unserved = lab.spec().vcenter.unserved_methods;
  if (std::find(unserved.begin(), unserved.end(), method) != unserved.end()) {
    co_return sdk_fault("MethodNotFound", fmt::format("Method {} is not served by this vCenter.", method),
                        moref_element("receiver", self) + "<method>" + escape_xml(method) + "</method>");
  }
  if (method == "RetrieveServiceContent") {
    co_return sdk_ok(
        response_element("RetrieveServiceContentResponse", sdk_service_content("returnval", "")));
  }

  apply_session_expiry_fault();
  apply_collector_version_fault();
  const std::string token = cookie_token(req);
  const double now = lab.now();
  auto session = sessions.find(token);
  if (session != sessions.end() && now - session->second.last_used > config().session_idle_timeout_s) {
    sdk_end_session(session->first);
    sessions.erase(session);
    session = sessions.end();
  }
  if (method == "Login") co_return sdk_login(call, req, session != sessions.end());
  if (session == sessions.end()) {
    co_return sdk_fault("NotAuthenticated", "The session is not authenticated.",
                        moref_element("object", self) + "<privilegeId>System.View</privilegeId>");
  }
  session->second.last_used = now;
  const std::string session_key = session->first;
  const std::string user = session->second.user;
  co_return co_await sdk_session_call(call, method, self, session_key, user);
}

ServerResponse VcenterFront::Impl::sdk_login(const vim25::XmlNode& call, const ServerRequest& req,
                                             bool logged_in) {
  const double now = lab.now();
  const std::string user = call.child_text("userName").value_or("");
  const std::string password = call.child_text("password").value_or("");
  if (!authenticate(user, password)) {
    return sdk_fault("InvalidLogin", "Cannot complete login due to an incorrect user name or password.");
  }
  if (logged_in) {
    // vCenter refuses a second Login on a logged-in session.
    return sdk_fault("InvalidLogin", "This session is already logged in.");
  }
  const std::string key = new_token();
  sessions[key] = Session{user, now, now};
  ++stats.sessions_created;
  vim25::XmlWriter w("LoginResponse");
  w.open("returnval")
      .leaf("key", key)
      .leaf("userName", user)
      .leaf("fullName", user)
      .leaf("loginTime", "1970-01-01T00:00:00Z")
      .leaf("lastActiveTime", "1970-01-01T00:00:00Z")
      .leaf("locale", "en")
      .leaf("messageLocale", "en")
      .leaf("extensionSession", false)
      .leaf("ipAddress", req.remote_address.substr(0, req.remote_address.rfind(':')))
      .leaf("userAgent", std::string(req.header("User-Agent").value_or("")))
      .leaf("callCount", 0)
      .close();
  ServerResponse r = xml_response(200, vim25::soap_envelope(w.finish()));
  r.headers.emplace_back("Set-Cookie", fmt::format("{}=\"{}\"; Path=/; HttpOnly; Secure;", kCookie, key));
  return r;
}

// A method of a logged-in session.
boost::asio::awaitable<ServerResponse> VcenterFront::Impl::sdk_session_call(const vim25::XmlNode& call,
                                                                            const std::string& method,
                                                                            const vim25::MoRef& self,
                                                                            const std::string& session_key,
                                                                            const std::string& user) {
  if (method == "Logout") {
    sdk_end_session(session_key);
    sessions.erase(session_key);
    co_return xml_response(200, vim25::soap_envelope(vim25::XmlWriter("LogoutResponse").finish()));
  }
  if (method == "CreateContainerView" || method == "CreateListView")
    co_return sdk_create_view(call, session_key);
  if (method == "DestroyView") co_return sdk_destroy_view(self);
  if (method == "RetrievePropertiesEx") co_return sdk_retrieve(call, true);
  if (method == "RetrieveProperties") co_return sdk_retrieve(call, false);
  if (method == "ContinueRetrievePropertiesEx") co_return sdk_continue(call);
  if (method == "Fetch") co_return sdk_fetch(call, self);
  // The PropertyCollector's filters and waits, on the session's collector or one it created.
  if (self.type == "PropertyCollector" &&
      (method == "CreatePropertyCollector" || method == "DestroyPropertyCollector" ||
       method == "CreateFilter" || method == "WaitForUpdatesEx" || method == "WaitForUpdates" ||
       method == "CancelWaitForUpdates")) {
    co_return co_await sdk_collector_call(call, method, self, session_key);
  }
  if (method == "DestroyPropertyFilter") co_return sdk_destroy_filter(session_key, self);
  if (method == "HasPrivilegeOnEntities" || method == "HasPrivilegeOnEntity")
    co_return sdk_has_privilege(call, method == "HasPrivilegeOnEntities");

  // Custom attributes.
  const vim25::MoRef root{"Folder", std::string(kRootFolderId)};
  if (method == "AddCustomFieldDef" || method == "RemoveCustomFieldDef") {
    if (auto denied = sdk_denied(user, "Global.ManageCustomFields", root)) co_return *denied;
    co_return method == "AddCustomFieldDef" ? sdk_add_field(call) : sdk_remove_field(call);
  }
  if (method == "SetField") {
    const vim25::MoRef entity = vim25::decode_moref(call.child("entity"));
    if (auto denied = sdk_denied(user, "Global.SetCustomField", entity)) co_return *denied;
    co_return sdk_set_field(call);
  }

  // Tasks on a VM, a snapshot or the datacenter.
  if (method == "PowerOnMultiVM_Task") co_return sdk_power_on_multi(call, user);
  if (method == "RemoveSnapshot_Task") {
    if (auto denied = sdk_denied(user, "VirtualMachine.State.RemoveSnapshot", self)) co_return *denied;
    co_return sdk_remove_snapshot(call, self, user);
  }
  if (method == "CreateSnapshot_Task" || method == "CloneVM_Task" || method == "InstantClone_Task" ||
      method == "PowerOnVM_Task" || method == "PowerOffVM_Task" || method == "Destroy_Task" ||
      method == "ReconfigVM_Task") {
    co_return sdk_vm_task_call(call, method, self, user);
  }
  if (self.type == "PerformanceManager") {
    if (auto answer = sdk_performance_call(method, call, self)) co_return std::move(*answer);
  }
  co_return sdk_fault("MethodNotFound",
                      fmt::format("Method {} is not served by the simulated lab's vim25 endpoint.", method),
                      moref_element("receiver", self) + "<method>" + escape_xml(method) + "</method>");
}

boost::asio::awaitable<ServerResponse> VcenterFront::Impl::sdk_collector_call(
    const vim25::XmlNode& call, const std::string& method, const vim25::MoRef& self,
    const std::string& session_key) {
  SdkCollector* collector = sdk_collector(session_key, self.value);
  if (!collector) co_return sdk_object_not_found(self);
  if (method == "CreatePropertyCollector") co_return sdk_create_collector(session_key);
  if (method == "DestroyPropertyCollector") co_return sdk_destroy_collector(*collector);
  if (method == "CreateFilter") co_return sdk_create_filter(*collector, call);
  if (method == "CancelWaitForUpdates") co_return sdk_cancel_wait(*collector);
  std::optional<int> max_wait, max_updates;
  const vim25::XmlNode options = call.child("options");
  if (auto v = options.child_text("maxWaitSeconds"); v && !v->empty()) max_wait = std::atoi(v->c_str());
  if (auto v = options.child_text("maxObjectUpdates"); v && !v->empty()) max_updates = std::atoi(v->c_str());
  std::string collector_id = collector->id;
  std::string version = call.child_text("version").value_or("");
  const bool legacy = method == "WaitForUpdates";
  co_return co_await sdk_wait_for_updates(std::move(collector_id), legacy, std::move(version), max_wait,
                                          max_updates);
}

// A task on a VM: its privileges checked first (vSphere's API reference), then the task started.
ServerResponse VcenterFront::Impl::sdk_vm_task_call(const vim25::XmlNode& call, const std::string& method,
                                                    const vim25::MoRef& self, const std::string& user) {
  if (self.type != "VirtualMachine" || sdk_type_of(self.value) != "VirtualMachine") {
    if (method == "Destroy_Task" && !sdk_type_of(self.value).empty()) {
      return sdk_fault("NotSupported",
                       "The simulated lab destroys only virtual machines, not " + self.type + ".");
    }
    return sdk_object_not_found(self);
  }
  // The privileges each call needs (vSphere's API reference), checked before anything happens.
  for (const auto& [privilege, entity] : sdk_privileges_needed(method, call, self)) {
    if (auto denied = sdk_denied(user, privilege, entity)) return *denied;
  }
  if (method == "CreateSnapshot_Task") return sdk_create_snapshot(call, self, user);
  if (method == "CloneVM_Task") return sdk_clone(call, self, user);
  if (method == "InstantClone_Task") return sdk_instant_clone(call, self, user);
  if (method == "PowerOnVM_Task") return sdk_power_on(self, user);
  if (method == "PowerOffVM_Task") return sdk_power_off(self, user);
  if (method == "Destroy_Task") return sdk_destroy(self, user);
  return sdk_reconfigure(call, self, user);
}

}  // namespace bootstorm::sim::vcenter
