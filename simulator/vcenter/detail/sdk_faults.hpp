#pragma once
// Answers of the lab's vim25 endpoint (/sdk), shared by its session and PropertyCollector parts: a method's
// response element in a SOAP envelope, and a SOAP fault as vCenter writes it (HTTP 500, ServerFaultCode,
// <detail> with one <TypeFault xsi:type="Type"> holding `detail_fields`).
#include <string>
#include <string_view>

#include "protocol/http/server.hpp"
#include "protocol/vim25/types.hpp"
#include "simulator/vcenter/detail/sdk_objects.hpp"

namespace bootstorm::sim::vcenter {

http::ServerResponse sdk_ok(std::string response_element);
// <name xmlns="urn:vim25" xmlns:xsi=... xmlns:xsd=...>content</name>: a response element around XML already
// written (content may use the xsi: and xsd: prefixes).
std::string response_element(std::string_view name, std::string_view content);
http::ServerResponse sdk_fault(std::string_view type, std::string_view message,
                               std::string_view detail_fields = {});
http::ServerResponse sdk_fault(const SdkFaultInfo& fault);
// vCenter's answer for a reference to an object that does not (or no longer) exist.
SdkFaultInfo object_not_found_fault(const vsphere::vim25::MoRef& ref);
http::ServerResponse sdk_object_not_found(const vsphere::vim25::MoRef& ref);
// InvalidProperty: a property path of `type` the front does not serve.
http::ServerResponse sdk_invalid_property(std::string_view path, std::string_view type);
// The fault's <fault xsi:type=...>fields</fault><localizedMessage>...</localizedMessage>: the content of a
// LocalizedMethodFault (a task's info.error, PowerOnMultiVM's notAttempted).
std::string localized_fault(const SdkFaultInfo& fault);
// A <val> or any element of a simple type: <name xsi:type="T">text</name>, text escaped.
std::string typed_element(std::string_view name, std::string_view xsi_type, std::string_view text);
// <name type="T">value</name>
std::string moref_element(std::string_view name, const vsphere::vim25::MoRef& ref);
// A *_Task method's answer: <MethodResponse><returnval type="Task">task-N</returnval></MethodResponse>.
http::ServerResponse task_response(std::string_view method, const vsphere::vim25::MoRef& task);

}  // namespace bootstorm::sim::vcenter
