#pragma once
// Small building blocks of the simulated Kubernetes API: metav1.Status error objects worded like the real
// API server's, RFC 3339 timestamps with one-second precision, and resource quantities.
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/quantity.hpp"
#include "simulator/kube/resource_types.hpp"

namespace bootstorm::sim::kube {

// An API error: HTTP status + metav1.Status body.
struct ApiError {
  int code = 500;
  nlohmann::json status;  // {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",...}
};

ApiError status_error(int code, std::string reason, std::string message, nlohmann::json details = nullptr);
// `qualified` is "virtualmachines.kubevirt.io" or "namespaces" (core).
std::string qualified_resource(const ResourceType& type);
ApiError not_found(const ResourceType& type, const std::string& name);
ApiError already_exists(const ResourceType& type, const std::string& name);
ApiError conflict(const ResourceType& type, const std::string& name, const std::string& why);
// Conflict as KubeVirt's subresource API words it: resource "virtualmachine" of group kubevirt.io.
ApiError kubevirt_conflict(const std::string& resource, const std::string& name, const std::string& why);
ApiError invalid(const ResourceType& type, const std::string& name, const std::string& field,
                 const std::string& why);
ApiError bad_request(const std::string& message);
ApiError path_not_found();  // 404 NotFound: no such path
ApiError method_not_allowed(
    const std::string& message = "the server does not allow this method on the requested resource");
ApiError unsupported_media_type(const std::string& content_type);
ApiError expired(const std::string& message);  // 410 Gone, reason Expired
ApiError unauthorized();
ApiError server_fault(int code);  // injected 5xx/429

// "2026-11-30T10:00:00Z" (seconds truncated, as metav1.Time serialises).
std::string format_time(double unix_seconds);
// "2026-11-30T10:00:00.123456Z" (metav1.MicroTime, used by Event.eventTime).
std::string format_micro_time(double unix_seconds);

// Resource quantities ("30Gi", "512Mi"): bootstorm::parse_quantity (common/quantity.hpp).
using bootstorm::parse_quantity;
// Kubernetes name rules: DNS-1123 subdomain (<=253, lowercase alphanumerics, '-', '.').
bool valid_dns_subdomain(std::string_view name);
bool valid_dns_label(std::string_view name);
enum class DnsRule { label, subdomain };
// metadata.name checked against `rule`: the 422 Invalid the API server answers when it breaks it.
std::optional<ApiError> check_dns_name(const ResourceType& type, const std::string& name, DnsRule rule);

// A boolean query parameter as the API server converts it (apimachinery's string-to-bool conversion):
// absent is false; "false" or "0" in any letter case is false; anything else, the empty value included
// (`?watch`), is true. `value` is the parameter's value, nullopt when absent.
bool query_bool(const std::optional<std::string>& value);

// The value at `path` in nested objects, or null when a step is missing or not an object.
const nlohmann::json& field(const nlohmann::json& object, std::initializer_list<const char*> path);
// The string at `path`, or "" when it is missing or not a string.
std::string string_field(const nlohmann::json& object, std::initializer_list<const char*> path);

}  // namespace bootstorm::sim::kube
