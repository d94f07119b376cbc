#pragma once
// Kubernetes answers with a Status object when a call fails; status_error() turns it into an Error with the
// HTTP status, the reason and message, and what to do (401: credentials; 403: RBAC, or the admission plugin
// that refused: a namespace being deleted, a used-up ResourceQuota).
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace bootstorm::kube {

// A Kubernetes Status error body decoded into an Error that names `what` (e.g. "creating VirtualMachine x").
Error status_error(int http_status, std::string_view body, const std::string& what);

}  // namespace bootstorm::kube
