// Kubernetes Status errors as bootstorm errors (see status_error.hpp).
#include "providers/kube/status_error.hpp"

#include <nlohmann/json.hpp>

namespace bootstorm::kube {
using nlohmann::json;

Error status_error(int http_status, std::string_view body, const std::string& what) {
  json doc = json::parse(body, nullptr, false);
  std::string reason, message;
  if (doc.is_object() && doc.value("kind", "") == "Status") {
    reason = doc.value("reason", "");
    message = doc.value("message", "");
  } else {
    message = std::string(body.substr(0, 300));
  }
  ErrorKind kind = ErrorKind::api;
  std::string hint;
  switch (http_status) {
    case 401:
      kind = ErrorKind::auth;
      hint = "the credentials were rejected: refresh the token or kubeconfig (oc login / the exec plugin)";
      break;
    case 403:
      kind = ErrorKind::auth;
      hint =
          "the user lacks the RBAC permission the message names: bind a Role or ClusterRole that grants it "
          "(`kubectl auth can-i --list -n NAMESPACE` shows what the user may do)";
      break;
    case 404:
      kind = ErrorKind::not_found;
      break;
    case 409:
      kind = ErrorKind::conflict;
      break;
    case 410:
      kind = ErrorKind::api;
      break;
    default:
      if (http_status >= 500) hint = "the API server failed; retry later or check its health";
  }
  std::string text = what + " failed: HTTP " + std::to_string(http_status);
  if (!reason.empty()) text += " " + reason;
  if (!message.empty()) text += ": " + message;
  return make_error(kind, text, hint, http_status);
}

}  // namespace bootstorm::kube
