// Kubernetes Status errors as bootstorm errors (see status_error.hpp).
#include "protocol/kube/status_error.hpp"

#include <nlohmann/json.hpp>

namespace bootstorm::kube {
using nlohmann::json;

namespace {

// The reasons of a Status's details.causes.
bool has_cause(const json& doc, std::string_view reason) {
  const json* causes = doc.contains("details") && doc["details"].is_object() ? &doc["details"] : nullptr;
  if (!causes || !causes->contains("causes") || !(*causes)["causes"].is_array()) return false;
  for (const auto& cause : (*causes)["causes"])
    if (cause.is_object() && cause.value("reason", "") == reason) return true;
  return false;
}

// 403 is RBAC's answer and also admission's: NamespaceLifecycle refuses new objects in a namespace being
// deleted, ResourceQuota those beyond a quota (or any while the quota controller has not yet counted it).
// Each wants a different fix.
struct Refusal {
  bool rbac;
  std::string hint;
};
Refusal forbidden(const json& doc, const std::string& message) {
  if (has_cause(doc, "NamespaceTerminating") ||
      message.find("because it is being terminated") != std::string::npos)
    return {false,
            "the namespace is being deleted: wait until `kubectl get namespace NAMESPACE` finds it no more, "
            "or name another namespace in the plan"};
  if (message.find("exceeded quota") != std::string::npos)
    return {false,
            "a ResourceQuota of the namespace is used up: raise it (`kubectl describe resourcequota -n "
            "NAMESPACE` shows what is used) or run a smaller storm"};
  if (message.find("status unknown for quota") != std::string::npos)
    return {false,
            "the namespace's ResourceQuota has not been counted yet by the cluster's quota controller: retry "
            "in a few seconds; if it persists, kube-controller-manager is not running its quota controller"};
  return {true,
          "the user lacks the RBAC permission the message names: bind a Role or ClusterRole that grants it "
          "(`kubectl auth can-i --list -n NAMESPACE` shows what the user may do)"};
}

}  // namespace

Error status_error(int http_status, std::string_view body, const std::string& what) {
  json doc = json::parse(body, nullptr, false);
  std::string reason, message;
  if (doc.is_object() && doc.value("kind", "") == "Status") {
    reason = doc.value("reason", "");
    message = doc.value("message", "");
  } else {
    doc = json::object();
    message = std::string(body.substr(0, 300));
  }
  ErrorKind kind = ErrorKind::api;
  std::string hint;
  switch (http_status) {
    case 401:
      kind = ErrorKind::auth;
      hint = "the credentials were rejected: refresh the token or kubeconfig (oc login / the exec plugin)";
      break;
    case 403: {
      Refusal refusal = forbidden(doc, message);
      kind = refusal.rbac ? ErrorKind::auth : ErrorKind::api;
      hint = std::move(refusal.hint);
      break;
    }
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
