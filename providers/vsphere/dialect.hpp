#pragma once
// The small path/shape translation layer between the two vCenter REST dialects.
//
//   api  — /api/...  (vSphere 7.0U2 and later): bare JSON results, {"error_type", "messages"} errors,
//          ?action=<op> on the resource, list filters as plain query names (names=a&names=b).
//   rest — /rest/... (vSphere 6.7 – 7.0U1, deprecated): results wrapped as {"value": ...}, request
//          specs wrapped as {"spec": ...}, errors {"type": "com.vmware.vapi.std.errors.x", "value": {...}},
//          list filters spelled filter.<name>.<n> (n = 1, 2, ...), session at
//          /rest/com/vmware/cis/session, power operations as path segments
//          (POST /rest/vcenter/vm/{vm}/power/start). The `~action=` form of that dialect is
//          only needed for the session-get call, which bootstorm does not use.
//
// The provider is written against the /api shapes; this layer produces the targets and unwraps the bodies.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bootstorm::vsphere {

enum class Dialect { api, rest };

// Percent-encodes a query value (RFC 3986 unreserved characters pass through).
std::string encode_query_value(std::string_view text);

// A list filter: name (in /api spelling: "names", "vms", "hosts", "power_states") and its values.
using ListFilter = std::vector<std::pair<std::string, std::vector<std::string>>>;

class Paths {
 public:
  explicit Paths(Dialect dialect) : dialect_(dialect) {}
  Dialect dialect() const { return dialect_; }

  std::string session() const;  // POST login / DELETE logout
  std::string host_list(const ListFilter& filter = {}) const;
  std::string datastore_list(const ListFilter& filter = {}) const;
  std::string vm_list(const ListFilter& filter = {}) const;
  std::string vm(std::string_view vm_id) const;                                     // GET info / DELETE
  std::string clone(bool instant) const;                                            // POST
  std::string power(std::string_view vm_id) const;                                  // GET power state
  std::string power_action(std::string_view vm_id, std::string_view action) const;  // POST start|stop
  std::string tools(std::string_view vm_id) const;
  std::string guest_identity(std::string_view vm_id) const;
  std::string guest_customization(std::string_view vm_id) const;  // PUT a Customization.SetSpec

  // Request bodies: /rest wraps specs as {"spec": ...}.
  nlohmann::json wrap_spec(nlohmann::json spec) const;
  // Response bodies: /rest wraps results as {"value": ...}. Returns the payload (null when absent).
  nlohmann::json unwrap(const nlohmann::json& body) const;

 private:
  std::string list(std::string_view collection, const ListFilter& filter) const;
  std::string root() const { return dialect_ == Dialect::api ? "/api" : "/rest"; }
  Dialect dialect_;
};

}  // namespace bootstorm::vsphere
