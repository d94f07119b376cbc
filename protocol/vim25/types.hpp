#pragma once
// The vim25 data this client sends and reads: managed object references, the PropertyCollector's specs and
// answers, ServiceContent, and a generic data object (Value) for property values of any type.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bootstorm::vsphere::vim25 {

// <x type="VirtualMachine">vm-42</x>
struct MoRef {
  std::string type;
  std::string value;
  bool empty() const { return value.empty(); }
  std::string str() const { return type + ":" + value; }
  friend bool operator==(const MoRef& a, const MoRef& b) { return a.type == b.type && a.value == b.value; }
  friend bool operator<(const MoRef& a, const MoRef& b) {
    return a.type != b.type ? a.type < b.type : a.value < b.value;
  }
};

struct ValueField;

// One vim25 value as it was on the wire: its xsi:type, its text (simple values), its "type" attribute
// (managed object references) and its fields in order (data objects; an ArrayOfX repeats one field name).
struct Value {
  std::string xsi_type;
  std::string text;
  std::string moref_type;
  std::vector<ValueField> fields;  // a vector of a type completed below (allowed since C++17)

  const Value* field(std::string_view name) const;
  std::vector<const Value*> all(std::string_view name) const;
  // text of field(name), or "" when absent.
  std::string field_text(std::string_view name) const;
  MoRef moref() const { return {moref_type, text}; }
  bool is_array() const { return xsi_type.rfind("ArrayOf", 0) == 0; }
};

struct ValueField {
  std::string name;
  Value value;
};

// --- PropertyCollector specs ---

struct PropertySpec {
  std::string type;  // "VirtualMachine"
  std::vector<std::string> paths;
  bool all = false;
};

struct TraversalSpec {
  std::string name;  // optional: lets other specs refer to it
  std::string type;  // the type that has `path`, e.g. "ContainerView"
  std::string path;  // e.g. "view"
  bool skip = false;
};

struct ObjectSpec {
  MoRef obj;
  bool skip = false;
  std::vector<TraversalSpec> select_set;
};

struct PropertyFilterSpec {
  std::vector<PropertySpec> prop_set;
  std::vector<ObjectSpec> object_set;
  std::optional<bool> report_missing_objects;
};

struct WaitOptions {
  std::optional<int> max_wait_seconds;    // 0: return at once; absent: block until there is an update
  std::optional<int> max_object_updates;  // the server may return fewer and set `truncated`
};

// --- answers ---

struct AboutInfo {
  std::string name, full_name, vendor, version, build, api_type, api_version, instance_uuid;
};

struct ServiceContent {
  MoRef root_folder, property_collector, view_manager, session_manager, authorization_manager, perf_manager,
      custom_fields_manager, search_index, task_manager, event_manager, file_manager, virtual_disk_manager,
      setting;  // the vCenter's OptionManager
  AboutInfo about;
};

struct UserSession {
  std::string key, user_name, full_name;
};

// HasPrivilegeOnEntities: for one entity, each privilege asked about and whether the session holds it.
struct EntityPrivilege {
  MoRef entity;
  std::vector<std::pair<std::string, bool>> granted;
};

struct PropertyChange {
  std::string name;  // the property path, e.g. "runtime.powerState"
  std::string op;    // add, remove, assign, indirectRemove
  std::optional<Value> value;
};

struct MissingProperty {
  std::string path;
  std::string fault_type;  // e.g. "NoPermission"
};

struct ObjectUpdate {
  std::string kind;  // enter, modify, leave
  MoRef obj;
  std::vector<PropertyChange> changes;
  std::vector<MissingProperty> missing;
};

struct PropertyFilterUpdate {
  MoRef filter;
  std::vector<ObjectUpdate> objects;
  std::vector<MoRef> missing_objects;
};

struct UpdateSet {
  std::string version;
  bool truncated = false;
  std::vector<PropertyFilterUpdate> filters;
  // When the answer's headers arrived (UpdateStream sets it): the server had built the set by then, so its
  // changes are known from that instant, before the body is read and parsed.
  std::chrono::steady_clock::time_point received_at{};
  // The server no longer knew the version asked from (InvalidCollectorVersion): this set is the full state
  // again, read from the start (UpdateStream sets it). Changes between the two are in it as values, not as
  // the moments they happened.
  bool restarted = false;
  // The wait was written more than once (its first answer was lost on the way).
  bool resent = false;
};

struct ObjectContent {
  MoRef obj;
  std::vector<std::pair<std::string, Value>> props;
  std::vector<MissingProperty> missing;
  const Value* prop(std::string_view name) const;
};

struct RetrieveResult {
  std::string token;  // non-empty: more with ContinueRetrievePropertiesEx
  std::vector<ObjectContent> objects;
};

}  // namespace bootstorm::vsphere::vim25
