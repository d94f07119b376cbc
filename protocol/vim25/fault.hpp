#pragma once
// vim25 faults -> user-facing errors: what failed, where, and what to do.
#include <string_view>

#include "common/expected.hpp"
#include "protocol/vim25/soap.hpp"

namespace bootstorm::vsphere::vim25 {

// `what`: the call and where, e.g. "vim25 PowerOnMultiVM_Task on Datacenter:datacenter-2 at https://vc/sdk".
// Kinds: InvalidLogin / NotAuthenticated -> auth; NoPermission -> auth, naming the privilege and the object;
// ManagedObjectNotFound -> not_found; InvalidPowerState, DuplicateName, TaskInProgress -> conflict; the rest
// -> api with vCenter's own message.
Error fault_error(const SoapFault& fault, std::string_view what);

}  // namespace bootstorm::vsphere::vim25
