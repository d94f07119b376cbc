// Responses as the vSphere Automation API writes them: JSON bodies, vAPI errors and timestamps.
#include "simulator/vcenter/detail/vapi_responses.hpp"

#include <fmt/format.h>

#include <utility>

namespace bootstorm::sim::vcenter {

using http::ServerResponse;
using nlohmann::json;

ServerResponse json_response(int status, const json& body) {
  ServerResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}};
  r.body = body.dump();
  return r;
}

ServerResponse no_content() {
  ServerResponse r;
  r.status = 204;
  return r;
}

// vAPI error body: {"error_type": ..., "messages": [{"id", "default_message", "args"}]}.
ServerResponse api_error(int status, std::string_view type, std::string_view id, const std::string& message,
                         std::vector<std::string> args) {
  return json_response(
      status,
      json{{"error_type", type},
           {"messages",
            json::array({json{{"id", id}, {"default_message", message}, {"args", std::move(args)}}})}});
}

ServerResponse not_found(std::string_view what, const std::string& id) {
  return api_error(404, "NOT_FOUND", "com.vmware.api.vcenter.not_found",
                   fmt::format("The {} '{}' does not exist.", what, id), {id});
}

ServerResponse invalid_argument(const std::string& message) {
  return api_error(400, "INVALID_ARGUMENT", "com.vmware.api.vcenter.invalid_argument", message);
}

const char* error_type_for_status(int status) {
  switch (status) {
    case 400:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "UNAUTHORIZED";
    case 404:
      return "NOT_FOUND";
    case 503:
      return "SERVICE_UNAVAILABLE";
    case 504:
      return "TIMED_OUT";
    case 500:
      return "INTERNAL_SERVER_ERROR";
    default:
      return "ERROR";
  }
}

}  // namespace bootstorm::sim::vcenter
