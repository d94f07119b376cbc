#pragma once
// A minimal Swagger 2.0 checker for contract tests: finds the operation a request targets (path templates,
// `?action=` keys as the vSphere specs spell them), checks query parameter names and enum values, and
// validates a JSON body against the operation's body schema ($ref, type, required, properties, enum, items,
// additionalProperties). Stricter than Swagger on one point: properties the schema does not declare are
// errors, so that a misspelt field cannot pass silently.
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace bootstorm::vsphere::testing {

class SwaggerSpec {
 public:
  using json = nlohmann::json;

  static SwaggerSpec load(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error("cannot read " + file);
    SwaggerSpec s;
    s.doc_ = json::parse(in);
    return s;
  }

  // The spec path key (e.g. "/api/vcenter/vm/{vm}/power?action=start") that `target` hits with `method`.
  std::optional<std::string> find_operation(const std::string& method, const std::string& target) const {
    auto [path, query] = split_target(target);
    std::string action;
    for (auto& [k, v] : query)
      if (k == "action") action = v;
    std::string m = lower(method);
    for (auto& [key, ops] : doc_["paths"].items()) {
      if (!ops.contains(m)) continue;
      auto qpos = key.find('?');
      std::string key_path = key.substr(0, qpos);
      std::string key_query = qpos == std::string::npos ? "" : key.substr(qpos + 1);
      if (key_query != (action.empty() ? "" : "action=" + action)) continue;
      if (matches(key_path, path)) return key;
    }
    return std::nullopt;
  }

  // Errors (empty when valid) for the request's query parameters and body against the operation.
  std::vector<std::string> check_request(const std::string& method, const std::string& target,
                                         const std::string& body) const {
    std::vector<std::string> errors;
    auto key = find_operation(method, target);
    if (!key) return {method + " " + target + ": no such operation in the spec"};
    const json& op = doc_["paths"][*key][lower(method)];
    std::map<std::string, json> query_params;
    const json* body_schema = nullptr;
    if (op.contains("parameters"))
      for (const auto& p : op["parameters"]) {
        if (p.value("in", "") == "query") query_params[p["name"]] = p;
        if (p.value("in", "") == "body") body_schema = &p["schema"];
      }
    for (auto& [k, v] : split_target(target).second) {
      if (k == "action") continue;
      auto it = query_params.find(k);
      if (it == query_params.end()) {
        errors.push_back(*key + ": undeclared query parameter '" + k + "'");
        continue;
      }
      const json& decl = it->second.contains("items") ? it->second["items"] : it->second;
      if (decl.contains("enum")) {
        bool ok = false;
        for (auto& e : decl["enum"]) ok = ok || e == v;
        if (!ok) errors.push_back(*key + ": query '" + k + "' value '" + v + "' not in enum");
      }
    }
    if (!body.empty()) {
      if (!body_schema) {
        errors.push_back(*key + ": the operation takes no body");
      } else {
        json b = json::parse(body, nullptr, false);
        if (b.is_discarded())
          errors.push_back(*key + ": body is not JSON");
        else
          validate(*body_schema, b, "body", errors);
      }
    }
    return errors;
  }

  void validate(const json& schema_in, const json& value, const std::string& where,
                std::vector<std::string>& errors) const {
    const json& schema = resolve(schema_in);
    if (schema.contains("allOf"))
      for (const auto& s : schema["allOf"]) validate(s, value, where, errors);
    const std::string type = schema.value("type", "");
    if (type == "object" || (type.empty() && schema.contains("properties"))) {
      if (!value.is_object()) {
        errors.push_back(where + ": expected object");
        return;
      }
      if (schema.contains("required"))
        for (const auto& r : schema["required"])
          if (!value.contains(r.get<std::string>()))
            errors.push_back(where + ": missing required '" + r.get<std::string>() + "'");
      for (const auto& [k, v] : value.items()) {
        if (schema.contains("properties") && schema["properties"].contains(k)) {
          validate(schema["properties"][k], v, where + "." + k, errors);
        } else if (schema.contains("additionalProperties") && schema["additionalProperties"].is_object()) {
          validate(schema["additionalProperties"], v, where + "." + k, errors);
        } else {
          errors.push_back(where + ": undeclared property '" + k + "'");
        }
      }
    } else if (type == "array") {
      if (!value.is_array()) return errors.push_back(where + ": expected array");
      for (std::size_t i = 0; i < value.size(); ++i)
        validate(schema["items"], value[i], where + "[" + std::to_string(i) + "]", errors);
    } else if (type == "string") {
      if (!value.is_string()) return errors.push_back(where + ": expected string");
    } else if (type == "integer") {
      if (!value.is_number_integer()) return errors.push_back(where + ": expected integer");
    } else if (type == "number") {
      if (!value.is_number()) return errors.push_back(where + ": expected number");
    } else if (type == "boolean") {
      if (!value.is_boolean()) return errors.push_back(where + ": expected boolean");
    }
    if (schema.contains("enum")) {
      bool ok = false;
      for (const auto& e : schema["enum"]) ok = ok || e == value;
      if (!ok) errors.push_back(where + ": value " + value.dump() + " not in enum");
    }
  }

  const json& doc() const { return doc_; }

 private:
  const json& resolve(const json& schema) const {
    const json* s = &schema;
    for (int depth = 0; s->contains("$ref") && depth < 16; ++depth) {
      const std::string ref = (*s)["$ref"];
      const std::string prefix = "#/definitions/";
      if (ref.rfind(prefix, 0) != 0) throw std::runtime_error("unsupported $ref " + ref);
      s = &doc_["definitions"][ref.substr(prefix.size())];
    }
    return *s;
  }
  static std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  static std::pair<std::string, std::vector<std::pair<std::string, std::string>>> split_target(
      const std::string& t) {
    auto q = t.find('?');
    std::vector<std::pair<std::string, std::string>> query;
    if (q != std::string::npos) {
      std::stringstream ss(t.substr(q + 1));
      std::string kv;
      while (std::getline(ss, kv, '&')) {
        auto eq = kv.find('=');
        query.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
      }
    }
    return {t.substr(0, q), query};
  }
  static std::vector<std::string> segments(const std::string& p) {
    std::vector<std::string> out;
    std::stringstream ss(p);
    std::string s;
    while (std::getline(ss, s, '/')) out.push_back(s);
    return out;
  }
  static bool matches(const std::string& templ, const std::string& path) {
    auto a = segments(templ), b = segments(path);
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!(a[i].size() > 2 && a[i].front() == '{' && a[i].back() == '}') && a[i] != b[i]) return false;
    return true;
  }
  json doc_;
};

}  // namespace bootstorm::vsphere::testing
