#pragma once
// A small Swagger 2.0 schema validator for contract tests: type (incl. ["string","null"]), properties,
// required, enum, items, additionalProperties, $ref into the document's definitions. Strict about unknown
// properties of objects that declare `properties` (a misspelt field is the typical bug this catches).
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bootstorm::testing {

class SwaggerValidator {
 public:
  explicit SwaggerValidator(const std::string& path) {
    std::ifstream in(path);
    doc_ = nlohmann::json::parse(in);
  }

  bool has_definition(const std::string& name) const { return doc_["definitions"].contains(name); }

  // Problems of `value` against definitions[name]; empty when it conforms.
  std::vector<std::string> validate(const nlohmann::json& value, const std::string& definition) const {
    std::vector<std::string> problems;
    check(value, {{"$ref", "#/definitions/" + definition}}, definition, problems, 0);
    return problems;
  }

 private:
  static bool type_matches(const nlohmann::json& value, const std::string& type) {
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "string") return value.is_string();
    if (type == "integer") return value.is_number_integer();
    if (type == "number") return value.is_number();
    if (type == "boolean") return value.is_boolean();
    if (type == "null") return value.is_null();
    return true;
  }

  void check(const nlohmann::json& value, const nlohmann::json& schema, const std::string& path,
             std::vector<std::string>& problems, int depth) const {
    if (depth > 64) return;
    if (schema.contains("$ref")) {
      std::string ref = schema["$ref"];
      const std::string prefix = "#/definitions/";
      if (ref.rfind(prefix, 0) != 0) {
        problems.push_back(path + ": unsupported $ref " + ref);
        return;
      }
      std::string name = ref.substr(prefix.size());
      if (!doc_["definitions"].contains(name)) {
        problems.push_back(path + ": unknown definition " + name);
        return;
      }
      check(value, doc_["definitions"][name], path, problems, depth + 1);
      return;
    }
    if (schema.contains("type")) {
      const auto& t = schema["type"];
      bool ok = false;
      if (t.is_array()) {
        for (const auto& alt : t) ok = ok || type_matches(value, alt.get<std::string>());
      } else {
        ok = type_matches(value, t.get<std::string>());
      }
      if (!ok && value.is_null() && schema.value("nullable", false)) ok = true;
      if (!ok) {
        problems.push_back(path + ": expected type " + t.dump() + ", got " + value.type_name());
        return;
      }
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const auto& e : schema["enum"]) found = found || e == value;
      if (!found) problems.push_back(path + ": " + value.dump() + " is not one of " + schema["enum"].dump());
    }
    if (value.is_object()) {
      if (schema.contains("required")) {
        for (const auto& r : schema["required"]) {
          if (!value.contains(r.get<std::string>()))
            problems.push_back(path + ": missing required " + r.dump());
        }
      }
      const bool has_props = schema.contains("properties");
      for (auto it = value.begin(); it != value.end(); ++it) {
        const std::string child = path + "." + it.key();
        if (has_props && schema["properties"].contains(it.key())) {
          check(it.value(), schema["properties"][it.key()], child, problems, depth + 1);
        } else if (schema.contains("additionalProperties")) {
          const auto& ap = schema["additionalProperties"];
          if (ap.is_boolean()) {
            if (!ap.get<bool>()) problems.push_back(child + ": property not allowed");
          } else {
            check(it.value(), ap, child, problems, depth + 1);
          }
        } else if (has_props) {
          problems.push_back(child + ": unknown property");
        }
      }
    }
    if (value.is_array() && schema.contains("items")) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        check(value[i], schema["items"], path + "[" + std::to_string(i) + "]", problems, depth + 1);
      }
    }
  }

  nlohmann::json doc_;
};

}  // namespace bootstorm::testing
