#pragma once
// Internal to bootstorm::sim::vcenter: responses as the vSphere Automation API (vAPI) writes them — JSON
// bodies, the {error_type, messages[{id, default_message, args}]} errors — and its timestamps.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/http/server.hpp"

namespace bootstorm::sim::vcenter {

http::ServerResponse json_response(int status, const nlohmann::json& body);
http::ServerResponse no_content();
// vAPI error body: {"error_type": ..., "messages": [{"id", "default_message", "args"}]}.
http::ServerResponse api_error(int status, std::string_view type, std::string_view id,
                               const std::string& message, std::vector<std::string> args = {});
// 404 NOT_FOUND: "The <what> '<id>' does not exist."
http::ServerResponse not_found(std::string_view what, const std::string& id);
http::ServerResponse invalid_argument(const std::string& message);
// The vAPI error_type of an HTTP status ("ERROR" for those without their own).
const char* error_type_for_status(int status);

}  // namespace bootstorm::sim::vcenter
