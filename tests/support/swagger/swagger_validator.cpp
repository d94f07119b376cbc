#include "tests/support/swagger/swagger_validator.hpp"

#include <fmt/format.h>

#include <fstream>

namespace bootstorm::testing {

using nlohmann::json;

Expected<SwaggerSpec> SwaggerSpec::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorKind::not_found, fmt::format("Cannot open the API spec {}.", path));
  json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return make_error(ErrorKind::protocol, fmt::format("{} is not a JSON document.", path));
  }
  return SwaggerSpec(std::move(doc));
}

bool SwaggerSpec::has_definition(const std::string& name) const {
  return doc_.contains("definitions") && doc_["definitions"].contains(name);
}

std::vector<std::string> SwaggerSpec::validate(const json& value, const std::string& definition,
                                               const SwaggerValidationOptions& options) const {
  if (!has_definition(definition)) return {fmt::format("no definition '{}' in the spec", definition)};
  return validate_schema(value, json{{"$ref", "#/definitions/" + definition}}, options);
}

std::vector<std::string> SwaggerSpec::validate_schema(const json& value, const json& schema,
                                                      const SwaggerValidationOptions& options) const {
  std::vector<std::string> problems;
  check(value, schema, "$", options, problems, 0);
  return problems;
}

std::optional<json> SwaggerSpec::response_schema(const std::string& path, const std::string& method,
                                                 int status) const {
  if (!doc_.contains("paths") || !doc_["paths"].contains(path)) return std::nullopt;
  const json& op = doc_["paths"][path];
  if (!op.contains(method)) return std::nullopt;
  const json& responses = op[method].value("responses", json::object());
  const std::string code = std::to_string(status);
  if (!responses.contains(code)) return std::nullopt;
  return responses[code].value("schema", json());
}

namespace {

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    default:
      return "unknown";
  }
}

bool has_type(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer")
    return v.is_number_integer() ||
           (v.is_number_float() &&
            v.get<double>() == static_cast<double>(static_cast<long long>(v.get<double>())));
  if (type == "number") return v.is_number();
  if (type == "file") return true;
  return false;
}

}  // namespace

void SwaggerSpec::check(const json& value, const json& schema, const std::string& where,
                        const SwaggerValidationOptions& options, std::vector<std::string>& problems,
                        int depth) const {
  if (depth > 64) {
    problems.push_back(where + ": schema nesting too deep (recursive $ref?)");
    return;
  }
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    const std::string prefix = "#/definitions/";
    if (ref.rfind(prefix, 0) != 0 || !has_definition(ref.substr(prefix.size()))) {
      problems.push_back(fmt::format("{}: unresolvable $ref '{}'", where, ref));
      return;
    }
    check(value, doc_["definitions"][ref.substr(prefix.size())], where, options, problems, depth + 1);
    return;
  }
  if (schema.contains("allOf")) {
    for (const auto& part : schema["allOf"]) check(value, part, where, options, problems, depth + 1);
  }
  if (schema.contains("type")) {
    const std::string type = schema["type"];
    if (!has_type(value, type)) {
      problems.push_back(fmt::format("{}: expected {}, got {}", where, type, type_name(value)));
      return;
    }
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& allowed : schema["enum"]) found = found || allowed == value;
    if (!found) problems.push_back(fmt::format("{}: {} is not one of the enum values", where, value.dump()));
  }
  if (value.is_object()) {
    const json properties = schema.value("properties", json::object());
    for (const auto& name : schema.value("required", json::array())) {
      if (!value.contains(name.get<std::string>())) {
        problems.push_back(fmt::format("{}: missing required property '{}'", where, name.get<std::string>()));
      }
    }
    for (const auto& [key, member] : value.items()) {
      const std::string at = where + "." + key;
      if (properties.contains(key)) {
        check(member, properties[key], at, options, problems, depth + 1);
      } else if (schema.contains("additionalProperties")) {
        const json& extra = schema["additionalProperties"];
        if (extra.is_boolean()) {
          if (!extra.get<bool>()) problems.push_back(at + ": property not allowed");
        } else {
          check(member, extra, at, options, problems, depth + 1);
        }
      } else if (options.reject_undeclared_properties && !properties.empty()) {
        problems.push_back(at + ": property not declared by the schema");
      }
    }
  }
  if (value.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      check(value[i], schema["items"], fmt::format("{}[{}]", where, i), options, problems, depth + 1);
    }
  }
}

std::string join(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) out += p + "\n";
  return out;
}

}  // namespace bootstorm::testing
