#include "providers/vsphere/dialect.hpp"

namespace bootstorm::vsphere {

std::string encode_query_value(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0x0F];
    }
  }
  return out;
}

std::string Paths::session() const {
  return dialect_ == Dialect::api ? "/api/session" : "/rest/com/vmware/cis/session";
}

std::string Paths::list(std::string_view collection, const ListFilter& filter) const {
  std::string target = root() + "/vcenter/" + std::string(collection);
  char sep = '?';
  for (const auto& [name, values] : filter) {
    // /api repeats the name (names=a&names=b); /rest numbers the set's elements from 1
    // (filter.names.1=a&filter.names.2=b), as the vSphere 6.7/7.0 REST reference spells them.
    std::size_t index = 0;
    for (const auto& v : values) {
      const std::string key =
          dialect_ == Dialect::api ? name : "filter." + name + "." + std::to_string(++index);
      target += sep;
      target += key;
      target += '=';
      target += encode_query_value(v);
      sep = '&';
    }
  }
  return target;
}

std::string Paths::host_list(const ListFilter& filter) const {
  return list("host", filter);
}
std::string Paths::datastore_list(const ListFilter& filter) const {
  return list("datastore", filter);
}
std::string Paths::vm_list(const ListFilter& filter) const {
  return list("vm", filter);
}

std::string Paths::vm(std::string_view vm_id) const {
  return root() + "/vcenter/vm/" + encode_query_value(vm_id);
}

std::string Paths::clone(bool instant) const {
  return root() + (instant ? "/vcenter/vm?action=instant-clone" : "/vcenter/vm?action=clone");
}

std::string Paths::power(std::string_view vm_id) const {
  return vm(vm_id) + "/power";
}

std::string Paths::power_action(std::string_view vm_id, std::string_view action) const {
  if (dialect_ == Dialect::api) return vm(vm_id) + "/power?action=" + std::string(action);
  return vm(vm_id) + "/power/" + std::string(action);
}

std::string Paths::tools(std::string_view vm_id) const {
  return vm(vm_id) + "/tools";
}
std::string Paths::guest_identity(std::string_view vm_id) const {
  return vm(vm_id) + "/guest/identity";
}
std::string Paths::guest_customization(std::string_view vm_id) const {
  return vm(vm_id) + "/guest/customization";
}

nlohmann::json Paths::wrap_spec(nlohmann::json spec) const {
  if (dialect_ == Dialect::api) return spec;
  return nlohmann::json{{"spec", std::move(spec)}};
}

nlohmann::json Paths::unwrap(const nlohmann::json& body) const {
  if (dialect_ == Dialect::api) return body;
  if (body.is_object() && body.contains("value")) return body["value"];
  return nullptr;
}

}  // namespace bootstorm::vsphere
