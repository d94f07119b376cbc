#pragma once
// Internal to bootstorm::sim_model: the strict YAML reader of lab profiles (lab_spec.cpp): known keys only,
// typed values, and every error at the node's file:line:col.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::sim::model::detail {

// Reads YAML with a sticky first error, so that parsing code stays linear and no exception crosses the API.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  bool ok() const { return !error_; }
  Error error() const { return *error_; }

  void fail(const YAML::Node& node, const std::string& message) {
    if (error_) return;
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) {
      error_ = make_error(ErrorKind::invalid_input, fmt::format("{}: {}", source_, message),
                          "Fix the lab profile.");
    } else {
      error_ = make_error(ErrorKind::invalid_input,
                          fmt::format("{}:{}:{}: {}", source_, mark.line + 1, mark.column + 1, message),
                          "Fix the lab profile.");
    }
  }

  // True when `node` is a map whose keys are all in `allowed`.
  bool map(const YAML::Node& node, const std::string& what, std::initializer_list<const char*> allowed) {
    if (!ok()) return false;
    if (!node.IsMap()) {
      fail(node, fmt::format("{} must be a mapping", what));
      return false;
    }
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      bool known = false;
      for (const char* a : allowed) known = known || key == a;
      if (!known) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(entry.first, fmt::format("unknown key '{}' in {} (known: {})", key, what, list));
        return false;
      }
    }
    return true;
  }

  template <class T>
  void get(const YAML::Node& map, const char* key, T& out, bool required = false) {
    if (!ok()) return;
    const YAML::Node value = map[key];
    if (!value) {
      if (required) fail(map, fmt::format("missing required key '{}'", key));
      return;
    }
    if (!value.IsScalar()) {
      fail(value, fmt::format("'{}' must be a scalar", key));
      return;
    }
    try {
      out = value.as<T>();
    } catch (const YAML::Exception&) {
      fail(value, fmt::format("'{}' has the wrong type (value '{}')", key, value.Scalar()));
    }
  }

  void get_positive(const YAML::Node& map, const char* key, double& out, bool allow_zero = false) {
    get(map, key, out);
    if (ok() && !std::isfinite(out)) {
      fail(map[key], fmt::format("'{}' must be a finite number", key));
    } else if (ok() && (out < 0 || (!allow_zero && out == 0))) {
      fail(map[key] ? map[key] : map, fmt::format("'{}' must be {}", key, allow_zero ? ">= 0" : "> 0"));
    }
  }

  void get_list(const YAML::Node& map, const char* key, std::vector<std::string>& out) {
    if (!ok()) return;
    const YAML::Node value = map[key];
    if (!value) return;
    if (!value.IsSequence()) {
      fail(value, fmt::format("'{}' must be a list", key));
      return;
    }
    out.clear();
    for (const auto& item : value) {
      if (!item.IsScalar()) {
        fail(item, fmt::format("'{}' entries must be strings", key));
        return;
      }
      out.push_back(item.Scalar());
    }
  }

  void get_string_map(const YAML::Node& map, const char* key, std::map<std::string, std::string>& out) {
    if (!ok()) return;
    const YAML::Node value = map[key];
    if (!value) return;
    if (!value.IsMap()) {
      fail(value, fmt::format("'{}' must be a mapping", key));
      return;
    }
    for (const auto& entry : value) {
      if (!entry.second.IsScalar()) {
        fail(entry.second, fmt::format("'{}' values must be strings", key));
        return;
      }
      out[entry.first.Scalar()] = entry.second.Scalar();
    }
  }

  // Calls fn(item) for every element of the sequence at `key`.
  template <class Fn>
  void each(const YAML::Node& map, const char* key, Fn fn, bool required = false) {
    if (!ok()) return;
    const YAML::Node value = map[key];
    if (!value) {
      if (required) fail(map, fmt::format("missing required key '{}'", key));
      return;
    }
    if (!value.IsSequence()) {
      fail(value, fmt::format("'{}' must be a list", key));
      return;
    }
    for (const auto& item : value) {
      if (!ok()) return;
      fn(item);
    }
  }

 private:
  std::string source_;
  std::optional<Error> error_;
};

}  // namespace bootstorm::sim::model::detail
