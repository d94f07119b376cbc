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

#include "providers/vsphere/vim25/soap.hpp"
#include "providers/vsphere/vim25/xml.hpp"
#include "providers/vsphere/vim25/xml_writer.hpp"
#include "simulator/vcenter/detail/sdk_faults.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

using http::ServerRequest;
using http::ServerResponse;
namespace vim25 = vsphere::vim25;

namespace {

constexpr std::string_view kApiVersion = "7.0.3.0";
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
                     vim25::xml_escape(host));
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
                       vim25::xml_escape(message), detail));
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
  co_return sdk_call(req);
}

ServerResponse VcenterFront::Impl::sdk_call(const ServerRequest& req) {
  if (req.method == "GET" && req.path == "/sdk/vimServiceVersions.xml") {
    count_request("GET /sdk/vimServiceVersions.xml");
    return xml_response(200, versions_document());
  }
  if (req.method == "GET" && req.path == "/sdk/vimService.wsdl") {
    count_request("GET /sdk/vimService.wsdl");
    return xml_response(200, service_wsdl(req));
  }
  if (req.method != "POST" || req.path != "/sdk") {
    ServerResponse r;
    r.status = 404;
    r.headers = {{"Content-Type", "text/plain"}};
    r.body = "404 Not Found";
    return r;
  }
  auto doc = vim25::XmlDocument::parse(req.body, "the request");
  if (!doc) return sdk_fault("InvalidRequest", doc.error().message);
  vim25::XmlNode envelope = doc->root();
  vim25::XmlNode body;
  if (envelope.is(vim25::kSoapEnvelopeNs, "Envelope")) {
    for (vim25::XmlNode c = envelope.first_child(); c; c = c.next_sibling()) {
      if (c.is(vim25::kSoapEnvelopeNs, "Body")) body = c;
    }
  }
  const vim25::XmlNode call = body.first_child();
  if (!call)
    return sdk_fault("InvalidRequest", "The request is not a SOAP 1.1 envelope with a method in its Body.");
  const std::string method(call.name());
  // The statistics key: a method name as vim25 spells them, so that no request can grow the table at will.
  const bool plausible = method.size() <= 64 && std::all_of(method.begin(), method.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                         });
  count_request("POST /sdk " + (plausible ? method : std::string("(not a vim25 method name)")));
  const vim25::MoRef self{call.child("_this").attribute("type").value_or(""),
                          call.child_text("_this").value_or("")};
  auto self_as = [&](std::string_view element) {
    return fmt::format(R"(<{0} type="{1}">{2}</{0}>)", element, vim25::xml_escape(self.type),
                       vim25::xml_escape(self.value));
  };

  if (method == "RetrieveServiceContent") {
    vim25::XmlWriter w("RetrieveServiceContentResponse");
    w.open("returnval");
    w.moref("rootFolder", {"Folder", "group-d1"});
    w.moref("propertyCollector", {"PropertyCollector", "propertyCollector"});
    w.moref("viewManager", {"ViewManager", "ViewManager"});
    w.open("about")
        .leaf("name", "VMware vCenter Server")
        .leaf("fullName", fmt::format("VMware vCenter Server {} build-lab (simulated lab {})", kApiVersion,
                                      lab.spec().name))
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
    w.close();
    return xml_response(200, vim25::soap_envelope(w.finish()));
  }

  // The lab's session-expiry fault ends every session, SOAP and REST alike (they share the store).
  if (model::Faults& faults = lab.faults(); faults.expire_sessions) {
    faults.expire_sessions = false;
    stats.faults_injected += sessions.size();
    sessions.clear();
  }
  const std::string token = cookie_token(req);
  const double now = lab.now();
  auto session = sessions.find(token);
  if (session != sessions.end() && now - session->second.last_used > config().session_idle_timeout_s) {
    sessions.erase(session);
    session = sessions.end();
  }

  if (method == "Login") {
    const std::string user = call.child_text("userName").value_or("");
    const std::string password = call.child_text("password").value_or("");
    if (user != config().username || password != config().password) {
      return sdk_fault("InvalidLogin", "Cannot complete login due to an incorrect user name or password.");
    }
    if (session != sessions.end()) {
      // vCenter refuses a second Login on a logged-in session.
      return sdk_fault("InvalidLogin", "This session is already logged in.");
    }
    const std::string key = new_token();
    sessions[key] = Session{user, now, now};
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

  if (session == sessions.end()) {
    return sdk_fault("NotAuthenticated", "The session is not authenticated.",
                     self_as("object") + "<privilegeId>System.View</privilegeId>");
  }
  session->second.last_used = now;

  if (method == "Logout") {
    // The session's views go with it, as on vCenter.
    const std::string prefix = "session[" + session->first.substr(0, 8) + "]";
    std::erase_if(sdk_views, [&](const auto& view) { return view.first.rfind(prefix, 0) == 0; });
    sessions.erase(session);
    return xml_response(200, vim25::soap_envelope(vim25::XmlWriter("LogoutResponse").finish()));
  }
  if (method == "CreateContainerView" || method == "CreateListView")
    return sdk_create_view(call, session->first);
  if (method == "DestroyView") return sdk_destroy_view(self);
  if (method == "RetrievePropertiesEx") return sdk_retrieve(call);
  if (method == "ContinueRetrievePropertiesEx") return sdk_continue(call);
  return sdk_fault("MethodNotFound",
                   fmt::format("Method {} is not served by the simulated lab's vim25 endpoint.", method),
                   self_as("receiver") + "<method>" + vim25::xml_escape(method) + "</method>");
}

}  // namespace bootstorm::sim::vcenter
