#include "simulator/kube/api_objects.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "common/rfc3339.hpp"

namespace bootstorm::sim::kube {

using json = nlohmann::json;

ApiError status_error(int code, std::string reason, std::string message, json details) {
  json status = {{"kind", "Status"},
                 {"apiVersion", "v1"},
                 {"metadata", json::object()},
                 {"status", "Failure"},
                 {"message", std::move(message)},
                 {"reason", std::move(reason)},
                 {"code", code}};
  if (!details.is_null()) status["details"] = std::move(details);
  return ApiError{code, std::move(status)};
}

std::string qualified_resource(const ResourceType& type) {
  return type.group.empty() ? type.plural : type.plural + "." + type.group;
}

namespace {
json details_for(const ResourceType& type, const std::string& name) {
  json details = {{"name", name}, {"kind", type.plural}};
  if (!type.group.empty()) details["group"] = type.group;
  return details;
}
}  // namespace

ApiError not_found(const ResourceType& type, const std::string& name) {
  return status_error(404, "NotFound", qualified_resource(type) + " \"" + name + "\" not found",
                      details_for(type, name));
}

ApiError already_exists(const ResourceType& type, const std::string& name) {
  return status_error(409, "AlreadyExists", qualified_resource(type) + " \"" + name + "\" already exists",
                      details_for(type, name));
}

ApiError conflict(const ResourceType& type, const std::string& name, const std::string& why) {
  return status_error(
      409, "Conflict",
      "Operation cannot be fulfilled on " + qualified_resource(type) + " \"" + name + "\": " + why,
      details_for(type, name));
}

ApiError kubevirt_conflict(const std::string& resource, const std::string& name, const std::string& why) {
  return status_error(
      409, "Conflict",
      "Operation cannot be fulfilled on " + resource + ".kubevirt.io \"" + name + "\": " + why,
      {{"name", name}, {"group", "kubevirt.io"}, {"kind", resource}});
}

ApiError invalid(const ResourceType& type, const std::string& name, const std::string& field,
                 const std::string& why) {
  json details = details_for(type, name);
  details["kind"] = type.kind;
  details["causes"] = json::array({{{"reason", "FieldValueInvalid"}, {"message", why}, {"field", field}}});
  return status_error(422, "Invalid",
                      type.kind + "." + (type.group.empty() ? "" : type.group) + " \"" + name +
                          "\" is invalid: " + field + ": " + why,
                      std::move(details));
}

ApiError bad_request(const std::string& message) {
  return status_error(400, "BadRequest", message);
}

ApiError path_not_found() {
  return status_error(404, "NotFound", "the server could not find the requested resource", json::object());
}

ApiError method_not_allowed(const std::string& message) {
  return status_error(405, "MethodNotAllowed", message);
}

ApiError unsupported_media_type(const std::string& content_type) {
  return status_error(415, "UnsupportedMediaType",
                      "the body of the request was in an unknown format - accepted media types include: "
                      "application/json-patch+json, application/merge-patch+json (got \"" +
                          content_type + "\")");
}

ApiError expired(const std::string& message) {
  return status_error(410, "Expired", message);
}

ApiError unauthorized() {
  return status_error(401, "Unauthorized", "Unauthorized");
}

ApiError server_fault(int code) {
  switch (code) {
    case 429:
      return status_error(429, "TooManyRequests",
                          "the server has received too many requests and has asked us to "
                          "try again later");
    case 500:
      return status_error(500, "InternalError", "Internal error occurred: injected fault");
    case 503:
      return status_error(503, "ServiceUnavailable", "the server is currently unable to handle the request");
    case 504:
      return status_error(504, "Timeout",
                          "the server was unable to return a response in the time allotted, but "
                          "may still be processing the request");
    default:
      return status_error(code, "InternalError",
                          "Internal error occurred: injected fault " + std::to_string(code));
  }
}

std::string format_time(double unix_seconds) {
  return format_rfc3339(from_unix_seconds(unix_seconds), Rfc3339Fraction::seconds);
}

std::string format_micro_time(double unix_seconds) {
  return format_rfc3339(from_unix_seconds(unix_seconds), Rfc3339Fraction::micros);
}

bool valid_dns_subdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '.') return false;
  }
  return true;
}

bool valid_dns_label(std::string_view name) {
  return name.size() <= 63 && valid_dns_subdomain(name) && name.find('.') == std::string_view::npos;
}

std::optional<ApiError> check_dns_name(const ResourceType& type, const std::string& name, DnsRule rule) {
  const bool label = rule == DnsRule::label;
  if (label ? valid_dns_label(name) : valid_dns_subdomain(name)) return std::nullopt;
  return invalid(type, name, "metadata.name",
                 "Invalid value: \"" + name + "\": a lowercase RFC 1123 " + (label ? "label" : "subdomain") +
                     " must consist of lower case alphanumeric characters" +
                     (label ? " or '-'" : ", '-' or '.'") +
                     ", and must start and end with an alphanumeric character");
}

const nlohmann::json& field(const nlohmann::json& object, std::initializer_list<const char*> path) {
  static const nlohmann::json kNull;
  const nlohmann::json* node = &object;
  for (const char* key : path) {
    if (!node->is_object()) return kNull;
    auto it = node->find(key);
    if (it == node->end()) return kNull;
    node = &*it;
  }
  return *node;
}

bool query_bool(const std::optional<std::string>& value) {
  if (!value) return false;
  std::string lower(*value);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower != "false" && lower != "0";
}

std::string string_field(const nlohmann::json& object, std::initializer_list<const char*> path) {
  const nlohmann::json& value = field(object, path);
  return value.is_string() ? value.get<std::string>() : std::string();
}

}  // namespace bootstorm::sim::kube
