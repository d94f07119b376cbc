#pragma once
// SOAP 1.1 framing of vim25 calls: the envelope around a method element, and the answer split into the
// method's response element or a fault with its vim25 fault type and the fields a user needs.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.hpp"
#include "protocol/vim25/types.hpp"
#include "protocol/vim25/xml.hpp"

namespace bootstorm::vsphere::vim25 {

// The request body for one call: <soapenv:Envelope><soapenv:Body>method_element</soapenv:Body>...
std::string soap_envelope(std::string_view method_element);

// A SOAP fault as vim25 sends it: faultstring, and in <detail> one element (e.g. <InvalidLoginFault
// xsi:type="InvalidLogin">) whose xsi:type names the fault.
struct SoapFault {
  std::string code;     // faultcode, e.g. "ServerFaultCode"
  std::string message;  // faultstring
  std::string type;     // vim25 fault type ("InvalidLogin", "NoPermission", ...); "" when the detail had none
  // Fields of the faults the client explains (empty when absent):
  std::string privilege;  // NoPermission.privilegeId (the first missing privilege)
  std::string object;     // NoPermission.object, ManagedObjectNotFound.obj, TaskInProgress.task: "Type:value"
  std::string name;       // DuplicateName.name
  std::string state;      // InvalidPowerState.existingState / requestedState
  bool is(std::string_view t) const { return type == t; }
};

// The fields of a fault object (the detail's <TypeFault>, or a task's info.error.fault) that SoapFault keeps:
// privilege, object, name, state. Its type and message are the caller's to set.
void read_fault_fields(const Value& fault, SoapFault& f);

// One answer: either the method's response element (e.g. <RetrieveServiceContentResponse>) or a fault.
class SoapReply {
 public:
  // `what` names the call for errors, e.g. "vim25 Login at https://vc.example.com/sdk". A body that is not a
  // SOAP envelope is ErrorKind::protocol, or ErrorKind::http_status when the status was not 200/500 (a web
  // server that is not vCenter's /sdk answers 404 with HTML).
  static Expected<SoapReply> parse(int http_status, std::string_view body, std::string_view what);

  bool is_fault() const { return fault_.has_value(); }
  const SoapFault& fault() const { return *fault_; }
  // The response element; absent for a fault.
  XmlNode response() const { return response_; }
  // response().child("returnval").
  XmlNode returnval() const { return response_.child("returnval"); }

  // When the request was completely written and when the answer's headers were read (the session sets them;
  // a storm's start_requested is `written_at`).
  struct Timing {
    std::chrono::steady_clock::time_point written_at{};
    std::chrono::system_clock::time_point written_at_wall{};
    std::chrono::steady_clock::time_point received_at{};
  };
  Timing timing;
  // How many times the request was written: more than 1 when the connection failed and the call, being
  // idempotent, was sent again (or vCenter's proxy answered 503).
  int attempts = 1;

 private:
  XmlDocument doc_;
  XmlNode response_;
  std::optional<SoapFault> fault_;
};

}  // namespace bootstorm::vsphere::vim25
