#pragma once
// Answers of the lab's vim25 endpoint (/sdk), shared by its session and PropertyCollector parts: a method's
// response element in a SOAP envelope, and a SOAP fault as vCenter writes it (HTTP 500, ServerFaultCode,
// <detail> with one <TypeFault xsi:type="Type"> holding `detail_fields`).
#include <string>
#include <string_view>

#include "providers/http/server.hpp"

namespace bootstorm::sim::vcenter {

http::ServerResponse sdk_ok(std::string response_element);
http::ServerResponse sdk_fault(std::string_view type, std::string_view message,
                               std::string_view detail_fields = {});

}  // namespace bootstorm::sim::vcenter
