#pragma once
// vCenter error bodies -> bootstorm::Error.
//
// /api (7.0U2+):  {"error_type": "NOT_FOUND", "messages": [{"id": ..., "default_message": ..., "args": []}]}
// /rest (legacy): {"type": "com.vmware.vapi.std.errors.not_found", "value": {"messages": [...]}}
// Both are parsed into one VcenterError whose error_type is the /api spelling (NOT_FOUND, RESOURCE_BUSY,
// ...).
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace bootstorm::vsphere {

struct VcenterError {
  int status = 0;
  std::string error_type;       // "NOT_FOUND", "ALREADY_IN_DESIRED_STATE", ... ; empty when the body had none
  std::string default_message;  // first message's default_message (most specific to the operation)
};

// Never fails: a body that is not a vCenter error yields an empty error_type and the (truncated) body text.
VcenterError parse_vcenter_error(int status, std::string_view body);

// "com.vmware.vapi.std.errors.already_in_desired_state" -> "ALREADY_IN_DESIRED_STATE"
std::string legacy_type_to_error_type(std::string_view type);

// A user-facing Error for a failed call: "<operation> at <endpoint> failed: HTTP 404 NOT_FOUND: <message>",
// kind chosen from the error_type (NOT_FOUND -> not_found, UNAUTHENTICATED -> auth, busy/in-use/
// already-in-desired-state -> conflict, the rest -> api), status = HTTP status, hint = what to do.
Error to_error(const VcenterError& error, std::string_view operation, std::string_view endpoint);

}  // namespace bootstorm::vsphere
