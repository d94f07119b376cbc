// SOAP framing of vim25 calls (see soap.hpp).
#include "protocol/vim25/soap.hpp"

#include "protocol/vim25/decode.hpp"

namespace bootstorm::vsphere::vim25 {
namespace {

SoapFault decode_fault(const XmlNode& fault) {
  SoapFault f;
  f.code = fault.child_text("faultcode").value_or("");
  f.message = fault.child_text("faultstring").value_or("");
  XmlNode detail = fault.child("detail").first_child();
  if (!detail) return f;
  f.type = detail.type_name();
  if (f.type.empty()) {
    // Without xsi:type the element name says it: <InvalidLoginFault> is an InvalidLogin.
    std::string name(detail.name());
    constexpr std::string_view kSuffix = "Fault";
    if (name.size() > kSuffix.size() &&
        name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
      name.resize(name.size() - kSuffix.size());
    f.type = name;
  }
  read_fault_fields(decode_value(detail), f);
  return f;
}

}  // namespace

void read_fault_fields(const Value& fault, SoapFault& f) {
  f.privilege = fault.field_text("privilegeId");
  if (f.privilege.empty()) {
    // vSphere 7+ also lists missingPrivileges: [{entity, privileges[]}].
    if (const Value* mp = fault.field("missingPrivileges")) f.privilege = mp->field_text("privileges");
  }
  for (const char* field : {"object", "obj", "task", "entity"}) {
    if (const Value* o = fault.field(field)) {
      f.object = o->moref_type.empty() ? o->text : o->moref_type + ":" + o->text;
      break;
    }
  }
  f.name = fault.field_text("name");
  f.state = fault.field_text("existingState");
}

std::string soap_envelope(std::string_view method_element) {
  std::string out;
  out.reserve(method_element.size() + 200);
  out.append(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
      "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\"><soapenv:Body>");
  out.append(method_element);
  out.append("</soapenv:Body></soapenv:Envelope>");
  return out;
}

Expected<SoapReply> SoapReply::parse(int http_status, std::string_view body, std::string_view what) {
  auto not_soap = [&](const std::string& reason) {
    if (http_status != 200 && http_status != 500) {
      return make_error(
          ErrorKind::http_status,
          std::string(what) + " failed: HTTP " + std::to_string(http_status) + ", and " + reason,
          "the endpoint has no vim25 service at /sdk; check platform.endpoint, or set "
          "platform.api: rest",
          http_status);
    }
    return make_error(ErrorKind::protocol, std::string(what) + " failed: " + reason,
                      "the endpoint does not answer as vCenter's /sdk does; check platform.endpoint",
                      http_status);
  };
  auto doc = XmlDocument::parse(body, what);
  if (!doc) return not_soap("the body is not a SOAP envelope (" + doc.error().message + ")");
  SoapReply reply;
  reply.doc_ = std::move(*doc);
  XmlNode envelope = reply.doc_.root();
  if (!envelope.is(kSoapEnvelopeNs, "Envelope")) {
    return not_soap("the answer is <" + std::string(envelope.name()) + ">, not a SOAP 1.1 envelope");
  }
  XmlNode body_node;
  for (XmlNode c = envelope.first_child(); c; c = c.next_sibling()) {
    if (c.is(kSoapEnvelopeNs, "Body")) body_node = c;
  }
  if (!body_node) return not_soap("the SOAP envelope has no Body");
  XmlNode first = body_node.first_child();
  if (!first) return not_soap("the SOAP Body is empty");
  if (first.is(kSoapEnvelopeNs, "Fault")) {
    reply.fault_ = decode_fault(first);
    return reply;
  }
  if (http_status != 200) {
    return not_soap("the answer is <" + std::string(first.name()) + "> instead of a SOAP fault");
  }
  reply.response_ = first;
  return reply;
}

}  // namespace bootstorm::vsphere::vim25
