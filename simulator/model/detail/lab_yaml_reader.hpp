#pragma once
// Internal to bootstorm::sim_model: the strict YAML reader of lab profiles (lab_spec.cpp): known keys only,
// typed values, and every error at the node's file:line:col. It reads through the field reader every loader
// uses (common/yaml_fields.hpp), so that lab profiles and plans report problems in the same words; it stops
// at the first problem (lab_spec.cpp's reading is linear and assumes what it read so far was sound).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/expected.hpp"
#include "common/yaml_fields.hpp"

namespace bootstorm::sim::model::detail {

class Reader {
 public:
  explicit Reader(std::string source) : fields_(std::move(source)) {}

  bool ok() const { return fields_.diagnostics.empty(); }
  Error error() const {
    return make_error(ErrorKind::invalid_input, fields_.diagnostics.front().to_string(),
                      "Fix the lab profile.");
  }

  void fail(const YAML::Node& node, const std::string& message) {
    if (ok()) fields_.error(node, message);
  }

  // True when `node` is a map whose keys are all in `allowed`.
  bool map(const YAML::Node& node, const std::string& what, std::initializer_list<const char*> allowed) {
    if (!ok()) return false;
    yaml::Names names;
    for (const char* a : allowed) names.emplace_back(a);
    fields_.map_view(node, what, "", names);
    keep_first();
    return ok();
  }

  template <class T>
  void get(const YAML::Node& map, const char* key, T& out, bool required = false) {
    if (!ok()) return;
    const yaml::MapView view = one_key(map, key);
    if (!view.has(key)) {
      if (required) fail(map, fmt::format("missing required key '{}'", key));
      return;
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (auto v = fields_.get_string(view, key)) out = *v;
    } else if constexpr (std::is_same_v<T, bool>) {
      if (auto v = fields_.get_bool(view, key)) out = *v;
    } else if constexpr (std::is_same_v<T, int>) {
      if (auto v = fields_.get_int(view, key)) out = static_cast<int>(*v);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (auto v = fields_.get_number(view, key)) out = static_cast<T>(*v);
    } else {
      // Wider integers (seeds, byte counts) than the field reader's +-1e9.
      const YAML::Node& value = view.value(key);
      try {
        if (!value.IsScalar()) throw YAML::Exception(value.Mark(), "");
        out = value.as<T>();
      } catch (const YAML::Exception&) {
        fail(value, fmt::format("{} must be an integer, got {}", key,
                                value.IsScalar() ? "'" + value.Scalar() + "'" : yaml::describe_type(value)));
      }
    }
    keep_first();
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
  // A view of `map` holding `key` alone (the keys were checked by map()).
  static yaml::MapView one_key(const YAML::Node& map, const char* key) {
    yaml::MapView view;
    view.node = map;
    view.valid = map.IsMap();
    if (!view.valid) return view;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node k = it->first;
      if (k.IsScalar() && k.Scalar() == key) {
        view.entries.emplace(key, std::make_pair(k, it->second));
        break;
      }
    }
    return view;
  }

  // The first problem only: what follows it was read from a profile already known to be wrong.
  void keep_first() {
    if (fields_.diagnostics.size() > 1) fields_.diagnostics.resize(1);
  }

  yaml::FieldReader fields_;
};

}  // namespace bootstorm::sim::model::detail
