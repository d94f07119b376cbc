#pragma once
// A mapping's fields declared once, as a table: each key with the member it fills and the checks its value
// must pass. The table gives the mapping's allowed keys (FieldReader::map_view) and reads every field of a
// mapping into a model, reporting through the FieldReader at the value's line and column. What is not one
// key into one member (a list, a rule across keys) stays code, next to the table.
//
//   static const auto& tls = yaml::FieldTable<Tls>()
//       .field("caFile", &Tls::ca_file)
//       .field("insecureSkipVerify", &Tls::insecure_skip_verify);
//   MapView view = map_view(node, "platform.tls", "platform.tls.", tls.keys());
//   tls.read(*this, view, platform.tls);
//
// A value that fails a check is still stored (the diagnostic already refuses the file), so later rules see
// what the user wrote.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/yaml_fields.hpp"

namespace bootstorm::yaml {

// What a check sees of a value: the field's full name ("platform.apiBudget.maxConcurrent") and its node.
struct FieldAt {
  const std::string& name;
  const YAML::Node& node;
};

// A check of a value: the message of what is wrong with it, or "" when it is fine.
template <class T>
using Check = std::function<std::string(const T& value, const FieldAt& at)>;

// ---- checks ----------------------------------------------------------------------------------------------

// The value's text as written (numbers as the user wrote them: "0.0", "-1").
inline std::string written(const FieldAt& at) {
  return at.node.Scalar();
}

// > 0: "... must be greater than 0, got -1".
template <class T>
Check<T> positive() {
  return [](const T& v, const FieldAt& at) -> std::string {
    if constexpr (std::is_same_v<T, std::chrono::milliseconds>) {
      return v.count() > 0 ? "" : at.name + " must be greater than 0s";
    } else {
      return v > 0 ? "" : at.name + " must be greater than 0, got " + written(at);
    }
  };
}

// lo <= value <= hi: "... must be between 1 and 65535, got 0".
template <class T>
Check<T> between(T lo, T hi) {
  return [lo, hi](const T& v, const FieldAt& at) -> std::string {
    if (v >= lo && v <= hi) return "";
    return at.name + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
           written(at);
  };
}

// Not empty: "... must not be empty".
inline Check<std::string> non_empty() {
  return [](const std::string& v, const FieldAt& at) -> std::string {
    return v.empty() ? at.name + " must not be empty" : "";
  };
}

// One of `allowed`: "... must be one of a, b, got 'c'".
inline Check<std::string> one_of(Names allowed, std::string qualifier = "") {
  return [allowed = std::move(allowed), qualifier = std::move(qualifier)](const std::string& v,
                                                                          const FieldAt& at) -> std::string {
    if (contains(allowed, v)) return "";
    return at.name + " must be one of " + join(allowed) + qualifier + ", got '" + v + "'";
  };
}

// A Kubernetes namespace name (is_dns_label).
inline Check<std::string> dns_label() {
  return [](const std::string& v, const FieldAt& at) -> std::string {
    if (is_dns_label(v)) return "";
    return at.name + " '" + v +
           "' is not a valid Kubernetes namespace (1-63 lowercase letters, digits and '-', starting and "
           "ending with a letter or digit)";
  };
}

// ---- the table -------------------------------------------------------------------------------------------

template <class Model>
class FieldTable {
 public:
  // `key` into `member`, read as the member's type: std::string, int, double, bool or
  // std::chrono::milliseconds (a duration such as 10m); each check in order, the first failing one reported.
  template <class T>
  FieldTable&& field(std::string key, T Model::*member, std::vector<Check<T>> checks = {}) && {
    keys_.push_back(key);
    readers_.push_back(
        [key, member, checks = std::move(checks)](FieldReader& r, const MapView& view, Model& model) {
          auto value = get<T>(r, view, key);
          if (!value) return;
          const std::string name = view.prefix + key;
          const FieldAt at{name, view.value(key)};
          for (const auto& check : checks) {
            if (std::string problem = check(*value, at); !problem.empty()) {
              r.error(view.value(key), std::move(problem));
              break;
            }
          }
          model.*member = std::move(*value);
        });
    return std::move(*this);
  }

  // A key read by code of its own (a nested mapping, a list, a value that fills more than a member), in the
  // table's order, when the mapping has it.
  FieldTable&& custom(std::string key, std::function<void(FieldReader&, const MapView&, Model&)> read) && {
    keys_.push_back(key);
    readers_.push_back([key, read = std::move(read)](FieldReader& r, const MapView& view, Model& model) {
      if (view.has(key)) read(r, view, model);
    });
    return std::move(*this);
  }

  // A key the mapping accepts that something else reads (a kind's own key, a rule across keys).
  FieldTable&& allow(std::string key) && {
    keys_.push_back(std::move(key));
    return std::move(*this);
  }

  // The mapping's allowed keys, in the table's order.
  const Names& keys() const { return keys_; }

  // Every field of `view` that is present into `model`; nothing when `view` is not a valid mapping.
  void read(FieldReader& reader, const MapView& view, Model& model) const {
    if (!view.valid) return;
    for (const auto& read_one : readers_) read_one(reader, view, model);
  }

 private:
  template <class T>
  static std::optional<T> get(FieldReader& r, const MapView& view, const std::string& key) {
    if constexpr (std::is_same_v<T, std::string>) {
      return r.get_string(view, key);
    } else if constexpr (std::is_same_v<T, bool>) {
      return r.get_bool(view, key);
    } else if constexpr (std::is_same_v<T, int>) {
      auto v = r.get_int(view, key);
      return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
    } else if constexpr (std::is_same_v<T, double>) {
      return r.get_number(view, key);
    } else {
      static_assert(std::is_same_v<T, std::chrono::milliseconds>,
                    "a field is a string, int, double, bool or duration");
      return r.get_duration(view, key);
    }
  }

  Names keys_;
  std::vector<std::function<void(FieldReader&, const MapView&, Model&)>> readers_;
};

}  // namespace bootstorm::yaml
