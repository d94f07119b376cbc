#pragma once
// Internal to providers/vsphere: reading fields of vCenter's JSON answers, which the provider's files share.
#include <nlohmann/json.hpp>
#include <string>

namespace bootstorm::vsphere::detail {

// The string at `key` of an object; "" when `j` is no object, lacks the key or holds another type there.
inline std::string str_field(const nlohmann::json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return {};
}

}  // namespace bootstorm::vsphere::detail
