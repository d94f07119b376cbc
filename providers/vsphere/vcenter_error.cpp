#include "providers/vsphere/vcenter_error.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace bootstorm::vsphere {
namespace {

std::string first_default_message(const nlohmann::json& messages) {
  if (!messages.is_array()) return {};
  for (const auto& m : messages) {
    if (m.is_object() && m.contains("default_message") && m["default_message"].is_string()) {
      return m["default_message"].get<std::string>();
    }
  }
  return {};
}

std::string hint_for(std::string_view type, int status) {
  if (type == "UNAUTHENTICATED" || status == 401)
    return "check VSPHERE_USER/VSPHERE_PASSWORD and that the session has not been closed by vCenter";
  if (type == "UNAUTHORIZED" || status == 403)
    return "the vCenter user lacks a privilege this call needs, and vCenter's REST answer does not say "
           "which: "
           "give the user the role README.md lists (Platform notes, vSphere); on vim25 (platform.api vim25 "
           "or "
           "auto) bootstorm checks every privilege the run needs before it creates anything";
  if (type == "NOT_FOUND") return "check the names in the plan against the vCenter inventory";
  if (type == "RESOURCE_BUSY" || type == "RESOURCE_IN_USE")
    return "another operation holds the object; retry later or lower apiBudget.maxConcurrent";
  if (type == "SERVICE_UNAVAILABLE" || status == 503)
    return "vCenter is overloaded or a service is down; retry later or lower apiBudget.requestsPerSecond";
  if (type == "UNABLE_TO_ALLOCATE_RESOURCE")
    return "the host or datastore lacks capacity for the operation; free space or spread the placement";
  if (type == "TIMED_OUT" || status == 504)
    return "vCenter timed out; retry with fewer concurrent operations";
  return {};
}

}  // namespace

std::string legacy_type_to_error_type(std::string_view type) {
  auto dot = type.rfind('.');
  std::string_view last = dot == std::string_view::npos ? type : type.substr(dot + 1);
  std::string out(last);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

VcenterError parse_vcenter_error(int status, std::string_view body) {
  VcenterError e;
  e.status = status;
  auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object()) {
    if (json.contains("error_type") && json["error_type"].is_string()) {
      e.error_type = json["error_type"].get<std::string>();
      if (json.contains("messages")) e.default_message = first_default_message(json["messages"]);
      return e;
    }
    if (json.contains("type") && json["type"].is_string()) {  // legacy /rest shape
      e.error_type = legacy_type_to_error_type(json["type"].get<std::string>());
      if (json.contains("value") && json["value"].is_object() && json["value"].contains("messages"))
        e.default_message = first_default_message(json["value"]["messages"]);
      return e;
    }
  }
  constexpr std::size_t kMaxBody = 300;
  e.default_message = std::string(body.substr(0, kMaxBody));
  if (body.size() > kMaxBody) e.default_message += "...";
  return e;
}

Error to_error(const VcenterError& error, std::string_view operation, std::string_view endpoint) {
  ErrorKind kind = ErrorKind::api;
  const std::string& t = error.error_type;
  if (t == "NOT_FOUND" || (t.empty() && error.status == 404)) {
    kind = ErrorKind::not_found;
  } else if (t == "UNAUTHENTICATED" || (t.empty() && error.status == 401)) {
    kind = ErrorKind::auth;
  } else if (t == "ALREADY_IN_DESIRED_STATE" || t == "RESOURCE_BUSY" || t == "RESOURCE_IN_USE" ||
             t == "ALREADY_EXISTS") {
    kind = ErrorKind::conflict;
  } else if (t == "TIMED_OUT") {
    kind = ErrorKind::timeout;
  } else if (t.empty()) {
    kind = ErrorKind::http_status;
  }
  std::string message = std::string(operation) + " at " + std::string(endpoint) + " failed: HTTP " +
                        std::to_string(error.status);
  if (!t.empty()) message += " " + t;
  if (!error.default_message.empty()) message += ": " + error.default_message;
  return make_error(kind, std::move(message), hint_for(t, error.status), error.status);
}

}  // namespace bootstorm::vsphere
