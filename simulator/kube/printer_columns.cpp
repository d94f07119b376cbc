#include "simulator/kube/printer_columns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <map>

#include "common/rfc3339.hpp"

namespace bootstorm::sim::kube {
namespace {

using json = nlohmann::json;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// ------------------------------------------------------------------ the columns of each type

const char* const kNameDescription =
    "Name must be unique within a namespace. Is required when creating resources, although some resources "
    "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot be updated.";
const char* const kAgeDescription =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

PrinterColumn name_column() {
  return {"Name", "string", "name", kNameDescription, 0, ".metadata.name", ""};
}
PrinterColumn crd_column(std::string name, std::string type, std::string path, int priority = 0,
                         std::string description = {}) {
  return {std::move(name), std::move(type), "", std::move(description), priority, std::move(path), ""};
}
PrinterColumn crd_age(std::string name = "Age") {
  return crd_column(std::move(name), "date", ".metadata.creationTimestamp");
}
PrinterColumn condition(std::string name, const std::string& type) {
  return crd_column(std::move(name), "string", ".status.conditions[?(@.type=='" + type + "')].status");
}
// A core printer's column: a computed cell.
PrinterColumn builtin(std::string name, std::string type, std::string cell, int priority = 0,
                      std::string description = {}) {
  return {std::move(name), std::move(type), "", std::move(description), priority, "", std::move(cell)};
}

std::vector<std::vector<PrinterColumn>> build_columns() {
  std::vector<std::vector<PrinterColumn>> all(static_cast<std::size_t>(Kind::count_));
  auto set = [&](Kind kind, std::vector<PrinterColumn> columns) {
    all[static_cast<std::size_t>(kind)] = std::move(columns);
  };
  // Core types: the API server's built-in printers (pkg/printers/internalversion).
  set(Kind::namespaces, {name_column(), builtin("Status", "string", "namespace.status"),
                         builtin("Age", "string", "age", 0, kAgeDescription)});
  set(Kind::nodes,
      {name_column(), builtin("Status", "string", "node.status"), builtin("Roles", "string", "node.roles"),
       builtin("Age", "string", "age", 0, kAgeDescription), builtin("Version", "string", "node.version"),
       builtin("Internal-IP", "string", "node.internalIP", 1),
       builtin("External-IP", "string", "node.externalIP", 1),
       builtin("OS-Image", "string", "node.osImage", 1),
       builtin("Kernel-Version", "string", "node.kernelVersion", 1),
       builtin("Container-Runtime", "string", "node.containerRuntime", 1)});
  set(Kind::events,
      {builtin("Last Seen", "string", "event.lastSeen"), builtin("Type", "string", "event.type"),
       builtin("Reason", "string", "event.reason"), builtin("Object", "string", "event.object"),
       builtin("Subobject", "string", "event.subobject", 1), builtin("Source", "string", "event.source", 1),
       builtin("Message", "string", "event.message"), builtin("First Seen", "string", "event.firstSeen", 1),
       builtin("Count", "string", "event.count", 1), builtin("Name", "string", "name", 1)});
  set(Kind::persistent_volume_claims,
      {name_column(), builtin("Status", "string", "pvc.status"), builtin("Volume", "string", "pvc.volume"),
       builtin("Capacity", "string", "pvc.capacity"), builtin("Access Modes", "string", "pvc.accessModes"),
       builtin("StorageClass", "string", "pvc.storageClass"),
       builtin("VolumeAttributesClass", "string", "pvc.volumeAttributesClass"),
       builtin("Age", "string", "age", 0, kAgeDescription),
       builtin("VolumeMode", "string", "pvc.volumeMode", 1)});
  set(Kind::secrets,
      {name_column(), builtin("Type", "string", "secret.type"), builtin("Data", "string", "secret.data"),
       builtin("Age", "string", "age", 0, kAgeDescription)});
  // KubeVirt's CRDs (virt-operator's crds.go).
  set(Kind::virtual_machines,
      {name_column(), crd_age(),
       crd_column("Status", "string", ".status.printableStatus", 0, "Human Readable Status"),
       condition("Ready", "Ready")});
  set(Kind::virtual_machine_instances,
      {name_column(), crd_age(), crd_column("Phase", "string", ".status.phase"),
       crd_column("IP", "string", ".status.interfaces[0].ipAddress"),
       crd_column("NodeName", "string", ".status.nodeName"), condition("Ready", "Ready"),
       crd_column("Live-Migratable", "string", ".status.conditions[?(@.type=='LiveMigratable')].status", 1),
       crd_column("Paused", "string", ".status.conditions[?(@.type=='Paused')].status", 1)});
  // CDI's CRDs: DataVolume declares its columns, DataSource none (Age alone).
  set(Kind::data_volumes,
      {name_column(), crd_column("Phase", "string", ".status.phase", 0, "The phase the data volume is in"),
       crd_column("Progress", "string", ".status.progress", 0,
                  "Transfer progress in percentage if known, N/A otherwise"),
       crd_column("Restarts", "integer", ".status.restartCount", 0,
                  "The number of times the transfer has been restarted."),
       crd_age()});
  set(Kind::data_sources, {name_column(), crd_age()});
  // Forklift's CRDs (tests/data/api-specs/forklift).
  set(Kind::forklift_providers,
      {name_column(), crd_column("TYPE", "string", ".spec.type"),
       crd_column("STATUS", "string", ".status.phase"), condition("READY", "Ready"),
       condition("CONNECTED", "ConnectionTestSucceeded"), condition("INVENTORY", "InventoryCreated"),
       crd_column("URL", "string", ".spec.url"), crd_age("AGE")});
  set(Kind::forklift_network_maps, {name_column(), condition("READY", "Ready"), crd_age("AGE")});
  set(Kind::forklift_storage_maps, {name_column(), condition("READY", "Ready"), crd_age("AGE")});
  set(Kind::forklift_plans,
      {name_column(), condition("READY", "Ready"), condition("EXECUTING", "Executing"),
       condition("SUCCEEDED", "Succeeded"), condition("FAILED", "Failed"), crd_age("AGE")});
  set(Kind::forklift_migrations,
      {name_column(), condition("READY", "Ready"), condition("RUNNING", "Running"),
       condition("SUCCEEDED", "Succeeded"), condition("FAILED", "Failed"), crd_age("AGE")});
  // KubeVirt's CRD (kubevirt-operator): AGE, PHASE.
  set(Kind::kube_virts, {name_column(), crd_age(), crd_column("Phase", "string", ".status.phase")});
  // StorageClass: the built-in printer's columns; StorageProfile and VolumeSnapshotClass: their CRDs'.
  set(Kind::storage_classes,
      {name_column(), crd_column("Provisioner", "string", ".provisioner"),
       crd_column("ReclaimPolicy", "string", ".reclaimPolicy"),
       crd_column("VolumeBindingMode", "string", ".volumeBindingMode"),
       crd_column("AllowVolumeExpansion", "boolean", ".allowVolumeExpansion"), crd_age()});
  set(Kind::storage_profiles, {name_column(), crd_age()});
  set(Kind::cdis, {name_column(), crd_age(), crd_column("Phase", "string", ".status.phase")});
  set(Kind::volume_snapshot_classes, {name_column(), crd_column("Driver", "string", ".driver"),
                                      crd_column("DeletionPolicy", "string", ".deletionPolicy"), crd_age()});
  // API Priority and Fairness: the built-in printers' columns.
  set(Kind::flow_schemas,
      {name_column(), crd_column("PriorityLevel", "string", ".spec.priorityLevelConfiguration.name"),
       crd_column("MatchingPrecedence", "integer", ".spec.matchingPrecedence"), crd_age()});
  set(Kind::priority_level_configurations,
      {name_column(), crd_column("Type", "string", ".spec.type"),
       crd_column("NominalConcurrencyShares", "integer", ".spec.limited.nominalConcurrencyShares"),
       crd_age()});
  // Route: the columns `oc get route` prints.
  set(Kind::routes,
      {name_column(), crd_column("Host/Port", "string", ".spec.host"),
       crd_column("Path", "string", ".spec.path"), crd_column("Services", "string", ".spec.to.name"),
       crd_column("Port", "string", ".spec.port.targetPort"),
       crd_column("Termination", "string", ".spec.tls.termination")});
  return all;
}

// ------------------------------------------------------------------ cells

std::optional<double> unix_seconds(const json& value) {
  if (!value.is_string()) return std::nullopt;
  auto t = parse_rfc3339(value.get<std::string>());
  if (!t) return std::nullopt;
  return bootstorm::unix_seconds(*t);
}

// translateTimestampSince: "<unknown>" for a missing time.
std::string age(const json& timestamp, double now) {
  auto t = unix_seconds(timestamp);
  return t ? human_duration(now - *t) : "<unknown>";
}

std::string text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump();
}

json condition_status(const json& object, std::string_view type) {
  const json& conditions =
      object.contains("status") ? object["status"].value("conditions", json::array()) : json::array();
  for (const auto& c : conditions)
    if (c.is_object() && c.value("type", "") == type) return c.value("status", json());
  return json();
}

std::string access_modes(const json& modes) {
  static const std::map<std::string, std::string> kShort = {{"ReadWriteOnce", "RWO"},
                                                            {"ReadOnlyMany", "ROX"},
                                                            {"ReadWriteMany", "RWX"},
                                                            {"ReadWriteOncePod", "RWOP"}};
  std::string out;
  for (const auto& m : modes.is_array() ? modes : json::array()) {
    auto it = kShort.find(m.is_string() ? m.get<std::string>() : "");
    if (it == kShort.end()) continue;
    if (out.find(it->second) != std::string::npos) continue;
    if (!out.empty()) out += ',';
    out += it->second;
  }
  return out;
}

json builtin_cell(const std::string& cell, const json& object, double now) {
  const json& meta = object.value("metadata", json::object());
  const json& status = object.value("status", json::object());
  const json& spec = object.value("spec", json::object());
  if (cell == "name") return meta.value("name", "");
  if (cell == "age") return age(meta.value("creationTimestamp", json()), now);
  if (cell == "namespace.status") return status.value("phase", "");
  if (cell == "node.status") {
    std::string s = condition_status(object, "Ready") == "True" ? "Ready" : "NotReady";
    if (spec.value("unschedulable", false)) s += ",SchedulingDisabled";
    return s;
  }
  if (cell == "node.roles") {
    std::vector<std::string> roles;
    const json labels = meta.value("labels", json::object());
    for (const auto& [key, value] : labels.items()) {
      constexpr std::string_view kPrefix = "node-role.kubernetes.io/";
      if (key.starts_with(kPrefix) && key.size() > kPrefix.size())
        roles.push_back(key.substr(kPrefix.size()));
      if (key == "kubernetes.io/role" && value.is_string()) roles.push_back(value.get<std::string>());
    }
    std::sort(roles.begin(), roles.end());
    roles.erase(std::unique(roles.begin(), roles.end()), roles.end());
    return roles.empty() ? std::string("<none>") : fmt::format("{}", fmt::join(roles, ","));
  }
  const json& info = status.value("nodeInfo", json::object());
  if (cell == "node.version") return info.value("kubeletVersion", "");
  if (cell == "node.osImage") return info.value("osImage", "<unknown>");
  if (cell == "node.kernelVersion") return info.value("kernelVersion", "<unknown>");
  if (cell == "node.containerRuntime") return info.value("containerRuntimeVersion", "<unknown>");
  if (cell == "node.internalIP" || cell == "node.externalIP") {
    const std::string want = cell == "node.internalIP" ? "InternalIP" : "ExternalIP";
    for (const auto& a : status.value("addresses", json::array()))
      if (a.is_object() && a.value("type", "") == want) return a.value("address", "<none>");
    return "<none>";
  }
  if (cell == "pvc.status") return status.value("phase", "");
  if (cell == "pvc.volume") return spec.value("volumeName", "");
  // Capacity and access modes are the bound volume's: empty until the claim has a volume.
  const bool bound = !spec.value("volumeName", "").empty();
  if (cell == "pvc.capacity")
    return bound ? text(status.value("capacity", json::object()).value("storage", json())) : "";
  if (cell == "pvc.accessModes") return bound ? access_modes(status.value("accessModes", json())) : "";
  if (cell == "pvc.storageClass") return spec.value("storageClassName", "");
  if (cell == "pvc.volumeAttributesClass") return spec.value("volumeAttributesClassName", "<unset>");
  if (cell == "pvc.volumeMode") return spec.value("volumeMode", "<unset>");
  if (cell == "secret.type") return object.value("type", "");
  if (cell == "secret.data") return object.value("data", json::object()).size();
  const json& involved = object.value("involvedObject", json::object());
  if (cell == "event.lastSeen") {
    json last = object.value("lastTimestamp", json());
    if (last.is_null()) last = object.value("eventTime", json());
    return age(last, now);
  }
  if (cell == "event.firstSeen") return age(object.value("firstTimestamp", json()), now);
  if (cell == "event.type") return object.value("type", "");
  if (cell == "event.reason") return object.value("reason", "");
  if (cell == "event.object") {
    std::string kind = involved.value("kind", "");
    for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return kind + "/" + involved.value("name", "");
  }
  if (cell == "event.subobject") return involved.value("fieldPath", "");
  if (cell == "event.source") {
    const json& source = object.value("source", json::object());
    std::string s = source.value("component", "");
    if (!source.value("host", "").empty()) s += ", " + source.value("host", "");
    return s;
  }
  if (cell == "event.message") return object.value("message", "");
  if (cell == "event.count") return object.value("count", 0);
  return nullptr;
}

// cellForJSONValue of the apiextensions table convertor.
json typed_cell(const std::string& type, const json& value, double now) {
  if (value.is_null()) return nullptr;
  if (type == "integer") return value.is_number() ? json(value.get<std::int64_t>()) : json();
  if (type == "number") return value.is_number() ? value : json();
  if (type == "boolean") return value.is_boolean() ? value : json();
  if (type == "date") {
    if (!value.is_string()) return nullptr;
    auto t = unix_seconds(value);
    return t ? json(human_duration(now - *t)) : json("<invalid>");
  }
  return text(value);  // string: what JSONPath prints
}

}  // namespace

// ------------------------------------------------------------------ content negotiation

std::optional<ResponseShape> negotiate_response(std::string_view accept) {
  if (trim(accept).empty()) return ResponseShape{};
  while (!accept.empty()) {
    const auto comma = accept.find(',');
    std::string_view item = trim(accept.substr(0, comma));
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
    const auto semi = item.find(';');
    const std::string_view type = trim(item.substr(0, semi));
    std::map<std::string, std::string> params;
    for (std::string_view rest = semi == std::string_view::npos ? "" : item.substr(semi + 1);
         !rest.empty();) {
      const auto next = rest.find(';');
      const std::string_view param = trim(rest.substr(0, next));
      rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
      const auto eq = param.find('=');
      if (eq != std::string_view::npos)
        params[std::string(trim(param.substr(0, eq)))] = std::string(trim(param.substr(eq + 1)));
    }
    if (type != "application/json" && type != "*/*" && type != "application/*") continue;
    auto as = params.find("as");
    if (as == params.end()) return ResponseShape{};
    const std::string version = params.count("v") ? params["v"] : "";
    if (params["g"] != "meta.k8s.io" || (version != "v1" && version != "v1beta1")) continue;
    if (as->second == "Table") return ResponseShape{ResponseShape::As::table, version};
    if (as->second == "PartialObjectMetadata" || as->second == "PartialObjectMetadataList")
      return ResponseShape{ResponseShape::As::partial_metadata, version};
  }
  return std::nullopt;
}

std::optional<IncludeObject> parse_include_object(std::string_view value) {
  if (value.empty() || value == "Metadata") return IncludeObject::metadata;
  if (value == "None") return IncludeObject::none;
  if (value == "Object") return IncludeObject::object;
  return std::nullopt;
}

// ------------------------------------------------------------------ JSONPath, durations, tables

const std::vector<PrinterColumn>& printer_columns(Kind kind) {
  static const auto all = build_columns();
  return all[static_cast<std::size_t>(kind)];
}

json json_path_value(const json& object, std::string_view path) {
  path = trim(path);
  if (path.starts_with("{") && path.ends_with("}")) path = path.substr(1, path.size() - 2);
  if (path.starts_with("$")) path.remove_prefix(1);
  const json* node = &object;
  while (!path.empty()) {
    if (path.front() == '.') {
      path.remove_prefix(1);
      const auto end = path.find_first_of(".[");
      const std::string key(path.substr(0, end));
      path = end == std::string_view::npos ? std::string_view() : path.substr(end);
      if (key.empty()) continue;
      if (!node->is_object() || !node->contains(key)) return nullptr;
      node = &(*node)[key];
    } else if (path.front() == '[') {
      const auto close = path.find(']');
      if (close == std::string_view::npos) return nullptr;
      std::string_view inside = trim(path.substr(1, close - 1));
      path.remove_prefix(close + 1);
      if (!node->is_array()) return nullptr;
      if (inside.starts_with("?(@.") && inside.ends_with(")")) {
        // [?(@.key=='value')] with single or double quotes: the first element whose key equals value.
        std::string_view expr = inside.substr(4, inside.size() - 5);
        const auto eq = expr.find("==");
        if (eq == std::string_view::npos) return nullptr;
        const std::string key(trim(expr.substr(0, eq)));
        std::string_view want = trim(expr.substr(eq + 2));
        if (want.size() >= 2 && (want.front() == '\'' || want.front() == '"') && want.back() == want.front())
          want = want.substr(1, want.size() - 2);
        const json* found = nullptr;
        for (const auto& item : *node) {
          const json value = json_path_value(item, "." + key);
          if (value.is_string() && value.get<std::string>() == want) {
            found = &item;
            break;
          }
        }
        if (!found) return nullptr;
        node = found;
      } else {
        std::size_t index = 0;
        for (char c : inside) {
          if (!std::isdigit(static_cast<unsigned char>(c))) return nullptr;
          index = index * 10 + static_cast<std::size_t>(c - '0');
        }
        if (inside.empty() || index >= node->size()) return nullptr;
        node = &(*node)[index];
      }
    } else {
      return nullptr;
    }
  }
  return *node;
}

std::string human_duration(double seconds_d) {
  if (seconds_d < -1) return "<invalid>";
  if (seconds_d < 0) return "0s";
  const auto seconds = static_cast<long long>(std::floor(seconds_d));
  if (seconds < 60 * 2) return fmt::format("{}s", seconds);
  const long long minutes = seconds / 60;
  if (minutes < 10) {
    const long long s = seconds % 60;
    return s == 0 ? fmt::format("{}m", minutes) : fmt::format("{}m{}s", minutes, s);
  }
  if (minutes < 60 * 3) return fmt::format("{}m", minutes);
  const long long hours = minutes / 60;
  if (hours < 8) {
    const long long m = minutes % 60;
    return m == 0 ? fmt::format("{}h", hours) : fmt::format("{}h{}m", hours, m);
  }
  if (hours < 48) return fmt::format("{}h", hours);
  if (hours < 24 * 8) {
    const long long h = hours % 24;
    return h == 0 ? fmt::format("{}d", hours / 24) : fmt::format("{}d{}h", hours / 24, h);
  }
  if (hours < 24 * 365 * 2) return fmt::format("{}d", hours / 24);
  if (hours < 24 * 365 * 8) {
    const long long d = (hours / 24) % 365;
    return d == 0 ? fmt::format("{}y", hours / 24 / 365) : fmt::format("{}y{}d", hours / 24 / 365, d);
  }
  return fmt::format("{}y", hours / 24 / 365);
}

json table_cell(const PrinterColumn& column, const json& object, double now) {
  if (!column.builtin.empty()) return builtin_cell(column.builtin, object, now);
  return typed_cell(column.type, json_path_value(object, column.json_path), now);
}

json partial_metadata(const json& object, const std::string& version) {
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/" + version},
          {"metadata", object.value("metadata", json::object())}};
}

json make_table(Kind kind, const std::vector<const json*>& objects, const json& list_metadata,
                const ResponseShape& shape, IncludeObject include, double now) {
  const auto& columns = printer_columns(kind);
  json definitions = json::array();
  for (const auto& c : columns) {
    definitions.push_back({{"name", c.name},
                           {"type", c.type},
                           {"format", c.format},
                           {"description", c.description},
                           {"priority", c.priority}});
  }
  json rows = json::array();
  for (const json* object : objects) {
    json cells = json::array();
    for (const auto& c : columns) cells.push_back(table_cell(c, *object, now));
    json row = {{"cells", std::move(cells)}};
    if (include == IncludeObject::object) row["object"] = *object;
    if (include == IncludeObject::metadata) row["object"] = partial_metadata(*object, shape.version);
    rows.push_back(std::move(row));
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/" + shape.version},
          {"metadata", list_metadata},
          {"columnDefinitions", std::move(definitions)},
          {"rows", std::move(rows)}};
}

json render_shaped(Kind kind, const std::vector<const json*>& objects, const json& list_metadata,
                   const ResponseShape& shape, IncludeObject include, double now, bool list) {
  if (shape.as == ResponseShape::As::table)
    return make_table(kind, objects, list_metadata, shape, include, now);
  if (!list) return objects.empty() ? json() : partial_metadata(*objects.front(), shape.version);
  json items = json::array();
  for (const json* object : objects) items.push_back(partial_metadata(*object, shape.version));
  return {{"kind", "PartialObjectMetadataList"},
          {"apiVersion", "meta.k8s.io/" + shape.version},
          {"metadata", list_metadata},
          {"items", std::move(items)}};
}

}  // namespace bootstorm::sim::kube
