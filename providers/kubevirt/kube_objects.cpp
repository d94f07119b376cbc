// Object building and response decoding for the KubeVirt provider (see kube_objects.hpp).
#include "providers/kubevirt/kube_objects.hpp"

#include <optional>
#include <string_view>

#include "providers/http/types.hpp"

namespace bootstorm::kubevirt {
using nlohmann::json;

std::string label_slug(std::string_view name) {
  std::string out;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      out += static_cast<char>(std::tolower(c));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

std::string run_selector_query(const std::string& run_id) {
  return http::url_encode(std::string(kRunLabel) + "=" + run_id);
}

std::string datavolume_name(const std::string& vm_name) {
  return vm_name + "-" + kRootDiskName;
}

std::string cloud_init_user_data(const VmBuild& build) {
  std::string out = "#cloud-config\n";
  out += "hostname: " + build.name + "\n";
  if (!build.beacon_url.empty()) {
    // The guest's bootstorm beacon agent (deploy/guest/linux) reads this file and calls the URL when the
    // desktop is up; the same shape as deploy/guest/linux/cloud-init.yaml.
    out += "write_files:\n";
    out += "  - path: /etc/bootstorm/beacon.env\n";
    out += "    permissions: \"0600\"\n";
    out += "    content: |\n";
    out += "      BOOTSTORM_BEACON_URL=" + build.beacon_url + "\n";
    out += "      BOOTSTORM_BEACON_TOKEN=" + build.beacon_token + "\n";
    out += "      BOOTSTORM_VM_NAME=" + build.name + "\n";
    out += "runcmd:\n";
    out += "  - [systemctl, start, --no-block, bootstorm-beacon.service]\n";
  }
  return out;
}

json build_virtual_machine(const VmBuild& b) {
  const std::string slug = label_slug(b.scenario);
  json labels = {
      {kRunLabel, b.run_id}, {kScenarioLabel, slug}, {"app.kubernetes.io/managed-by", "bootstorm"}};
  json dv_spec = {{"storage", json::object()}};
  if (!b.datasource_name.empty()) {
    dv_spec["sourceRef"] = {{"kind", "DataSource"}, {"name", b.datasource_name}};
    if (!b.datasource_namespace.empty()) dv_spec["sourceRef"]["namespace"] = b.datasource_namespace;
  } else {
    std::string ns = b.namespace_, name = b.pvc;
    if (auto slash = b.pvc.find('/'); slash != std::string::npos) {
      ns = b.pvc.substr(0, slash);
      name = b.pvc.substr(slash + 1);
    }
    dv_spec["source"] = {{"pvc", {{"namespace", ns}, {"name", name}}}};
  }
  json dv_annotations = json::object();
  if (!b.clone_strategy.empty() && b.clone_strategy != "auto") {
    dv_annotations["bootstorm.io/requested-clone-strategy"] = b.clone_strategy;
  }
  json dv_metadata = {{"name", datavolume_name(b.name)}, {"labels", labels}};
  if (!dv_annotations.empty()) dv_metadata["annotations"] = dv_annotations;

  json disks = json::array({{{"name", kRootDiskName}, {"bootOrder", 1}, {"disk", {{"bus", "virtio"}}}},
                            {{"name", kCloudInitDiskName}, {"disk", {{"bus", "virtio"}}}}});
  json volumes = json::array(
      {{{"name", kRootDiskName}, {"dataVolume", {{"name", datavolume_name(b.name)}}}},
       {{"name", kCloudInitDiskName}, {"cloudInitNoCloud", {{"userData", cloud_init_user_data(b)}}}}});
  json template_spec = {
      {"domain",
       {{"cpu", {{"cores", b.cpu_cores}}},
        {"resources", {{"requests", {{"memory", b.memory}}}}},
        {"devices",
         {{"disks", disks},
          {"interfaces", json::array({{{"name", "default"}, {"masquerade", json::object()}}})}}}}},
      {"networks", json::array({{{"name", "default"}, {"pod", json::object()}}})},
      {"volumes", volumes},
  };
  if (!b.host.empty()) template_spec["nodeSelector"] = {{kHostnameLabel, b.host}};
  json vm = {
      {"apiVersion", "kubevirt.io/v1"},
      {"kind", "VirtualMachine"},
      {"metadata",
       {{"name", b.name},
        {"namespace", b.namespace_},
        {"labels", labels},
        {"annotations", {{kScenarioNameAnnotation, b.scenario}}}}},
      {"spec",
       {{"runStrategy", "Halted"},
        {"dataVolumeTemplates", json::array({{{"metadata", dv_metadata}, {"spec", dv_spec}}})},
        {"template", {{"metadata", {{"labels", labels}}}, {"spec", template_spec}}}}},
  };
  return vm;
}

json build_namespace(const std::string& name, const std::string& run_id) {
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata",
           {{"name", name},
            {"labels", {{"app.kubernetes.io/managed-by", "bootstorm"}}},
            {"annotations", {{"bootstorm.io/created-by-run", run_id}}}}}};
}

json start_options() {
  return {{"apiVersion", "subresources.kubevirt.io/v1"}, {"kind", "StartOptions"}};
}
json stop_options() {
  return {{"apiVersion", "subresources.kubevirt.io/v1"}, {"kind", "StopOptions"}};
}
json delete_options() {
  return {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Foreground"}};
}

std::string vms_path(const std::string& ns) {
  return "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachines";
}
std::string vm_path(const std::string& ns, const std::string& name) {
  return vms_path(ns) + "/" + name;
}
std::string vm_subresource_path(const std::string& ns, const std::string& name, const std::string& action) {
  return "/apis/subresources.kubevirt.io/v1/namespaces/" + ns + "/virtualmachines/" + name + "/" + action;
}
std::string vmis_path(const std::string& ns) {
  return "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachineinstances";
}
std::string datavolumes_path(const std::string& ns) {
  return "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + ns + "/datavolumes";
}
std::string datasource_path(const std::string& ns, const std::string& name) {
  return "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + ns + "/datasources/" + name;
}

Error status_error(int http_status, std::string_view body, const std::string& what) {
  json doc = json::parse(body, nullptr, false);
  std::string reason, message;
  if (doc.is_object() && doc.value("kind", "") == "Status") {
    reason = doc.value("reason", "");
    message = doc.value("message", "");
  } else {
    message = std::string(body.substr(0, 300));
  }
  ErrorKind kind = ErrorKind::api;
  std::string hint;
  switch (http_status) {
    case 401:
      kind = ErrorKind::auth;
      hint = "the credentials were rejected: refresh the token or kubeconfig (oc login / the exec plugin)";
      break;
    case 403:
      kind = ErrorKind::auth;
      hint =
          "the user lacks RBAC permission for this call: grant it (e.g. the kubevirt.io:edit cluster role)";
      break;
    case 404:
      kind = ErrorKind::not_found;
      break;
    case 409:
      kind = ErrorKind::conflict;
      break;
    case 410:
      kind = ErrorKind::api;
      break;
    default:
      if (http_status >= 500) hint = "the API server failed; retry later or check its health";
  }
  std::string text = what + " failed: HTTP " + std::to_string(http_status);
  if (!reason.empty()) text += " " + reason;
  if (!message.empty()) text += ": " + message;
  return make_error(kind, text, hint, http_status);
}

std::string WatchEvent::resource_version() const {
  if (!object.is_object()) return {};
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return {};
  return md->value("resourceVersion", "");
}

namespace {

// Minimal JSON navigation for the hot path of watch decoding: walks an object's members and skips values
// without building them. Keys are compared raw; a key with an escape sequence makes the caller fall back to
// the full parser.
struct Cursor {
  std::string_view s;
  std::size_t i = 0;

  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  // At a '"': moves past the string and returns its raw content (escapes not decoded).
  std::optional<std::string_view> string() {
    ws();
    if (i >= s.size() || s[i] != '"') return std::nullopt;
    const std::size_t start = ++i;
    for (;;) {
      const std::size_t quote = s.find('"', i);
      if (quote == std::string_view::npos) return std::nullopt;
      std::size_t backslashes = 0;
      while (quote - backslashes > start && s[quote - backslashes - 1] == '\\') ++backslashes;
      i = quote + 1;
      if (backslashes % 2 == 0) return s.substr(start, quote - start);
    }
  }
  bool skip_value() {
    ws();
    if (i >= s.size()) return false;
    const char c = s[i];
    if (c == '"') return string().has_value();
    if (c == '{' || c == '[') {
      int depth = 0;
      while (i < s.size()) {
        const char d = s[i];
        if (d == '"') {
          if (!string()) return false;
          continue;
        }
        if (d == '{' || d == '[') {
          ++depth;
        } else if (d == '}' || d == ']') {
          if (--depth == 0) {
            ++i;
            return true;
          }
        }
        ++i;
      }
      return false;
    }
    const std::size_t start = i;
    while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
           s[i] != '\r' && s[i] != '\t')
      ++i;
    return i > start;
  }
  // fn(key, raw value) for every member of the object at the cursor; false on malformed input, an escaped
  // key, or when fn returns false.
  template <class Fn>
  bool members(Fn&& fn) {
    if (!eat('{')) return false;
    if (eat('}')) return true;
    for (;;) {
      auto key = string();
      if (!key || key->find('\\') != std::string_view::npos || !eat(':')) return false;
      ws();
      const std::size_t value_start = i;
      if (!skip_value()) return false;
      if (!fn(*key, s.substr(value_start, i - value_start))) return false;
      if (eat(',')) continue;
      return eat('}');
    }
  }
};

// Builds the value `raw` (one complete JSON value, as Cursor::skip_value delimited it) without nlohmann's
// lexer for the common shapes: strings without escapes, objects, arrays, literals. Numbers and escaped
// strings go through json::parse. False when it is not valid JSON.
bool build(std::string_view raw, json& out) {
  if (raw.empty()) return false;
  const char c = raw.front();
  if (c == '"') {
    if (raw.size() >= 2 && raw.back() == '"' && raw.find('\\') == std::string_view::npos) {
      out = std::string(raw.substr(1, raw.size() - 2));
      return true;
    }
  } else if (c == '{') {
    out = json::object();
    Cursor cursor{raw};
    return cursor.members([&](std::string_view key, std::string_view value) {
      return build(value, out[std::string(key)]);
    }) && (cursor.ws(), cursor.i == raw.size());
  } else if (c == '[') {
    out = json::array();
    Cursor cursor{raw};
    cursor.eat('[');
    if (cursor.eat(']')) return cursor.i == raw.size();
    for (;;) {
      cursor.ws();
      const std::size_t start = cursor.i;
      if (!cursor.skip_value()) return false;
      out.push_back(json());
      if (!build(raw.substr(start, cursor.i - start), out.back())) return false;
      if (cursor.eat(',')) continue;
      return cursor.eat(']') && cursor.i == raw.size();
    }
  } else if (raw == "true" || raw == "false") {
    out = raw == "true";
    return true;
  } else if (raw == "null") {
    out = nullptr;
    return true;
  }
  out = json::parse(raw, nullptr, false);
  return !out.is_discarded();
}

bool parse_into(json& target, std::string_view key, std::string_view raw) {
  json value;
  if (!build(raw, value)) return false;
  target[std::string(key)] = std::move(value);
  return true;
}

// Whether WatchDecode::milestone_fields keeps `key` of the object's `section` (metadata or status).
bool keeps(std::string_view section, std::string_view key) {
  return section == "metadata"
             ? (key == "name" || key == "namespace" || key == "uid" || key == "resourceVersion")
             : (key == "phase" || key == "nodeName" || key == "phaseTransitionTimestamps" ||
                key == "conditions" || key == "interfaces" || key == "progress");
}

// The object with only the milestone fields (see WatchDecode); nullopt when the scanner cannot follow it.
std::optional<json> milestone_object(std::string_view object_raw) {
  json object = json::object();
  Cursor cursor{object_raw};
  const bool ok = cursor.members([&](std::string_view key, std::string_view value) {
    if (key == "kind" || key == "apiVersion") return parse_into(object, key, value);
    if (key == "metadata" || key == "status") {
      json part = json::object();
      Cursor inner{value};
      const bool inner_ok = inner.members(
          [&](std::string_view k, std::string_view v) { return !keeps(key, k) || parse_into(part, k, v); });
      if (!inner_ok) return false;
      object[std::string(key)] = std::move(part);
    }
    return true;
  });
  if (!ok) return std::nullopt;
  return object;
}

// A watch line's raw `type` and `object` values, by the scanner; nullopt when it cannot follow the line or
// the object is not a JSON object.
struct RawEvent {
  std::string_view type, object;
};
std::optional<RawEvent> split_event(std::string_view line) {
  RawEvent raw;
  Cursor top{line};
  const bool top_ok = top.members([&](std::string_view key, std::string_view value) {
    if (key == "type") raw.type = value;
    if (key == "object") raw.object = value;
    return true;
  });
  top.ws();
  if (!top_ok || top.i != line.size() || raw.type.empty() || raw.object.empty() || raw.object.front() != '{')
    return std::nullopt;
  return raw;
}

// The milestone_fields fast path; nullopt: take the full parser instead.
std::optional<WatchEvent> decode_milestone_fields(std::string_view line) {
  auto raw = split_event(line);
  if (!raw || raw->type.size() < 2 || raw->type.front() != '"') return std::nullopt;
  const std::string_view type = raw->type.substr(1, raw->type.size() - 2);
  WatchEvent ev;
  if (type == "ADDED") {
    ev.type = WatchEvent::Type::added;
  } else if (type == "MODIFIED") {
    ev.type = WatchEvent::Type::modified;
  } else if (type == "DELETED") {
    ev.type = WatchEvent::Type::deleted;
  } else if (type == "BOOKMARK") {
    ev.type = WatchEvent::Type::bookmark;
  } else {
    return std::nullopt;  // ERROR (rare, needs the Status) and unknown types: the full parser decides
  }
  auto object = milestone_object(raw->object);
  if (!object) return std::nullopt;
  ev.object = std::move(*object);
  return ev;
}

}  // namespace

Expected<WatchEvent> decode_watch_line(std::string_view line, WatchDecode mode) {
  if (mode == WatchDecode::milestone_fields) {
    if (auto fast = decode_milestone_fields(line)) return std::move(*fast);
  }
  json doc = json::parse(line, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return make_error(ErrorKind::protocol, "watch stream sent a line that is not a JSON object: " +
                                               std::string(line.substr(0, 200)));
  }
  std::string type = doc.value("type", "");
  WatchEvent ev;
  if (type == "ADDED")
    ev.type = WatchEvent::Type::added;
  else if (type == "MODIFIED")
    ev.type = WatchEvent::Type::modified;
  else if (type == "DELETED")
    ev.type = WatchEvent::Type::deleted;
  else if (type == "BOOKMARK")
    ev.type = WatchEvent::Type::bookmark;
  else if (type == "ERROR")
    ev.type = WatchEvent::Type::error;
  else
    return make_error(ErrorKind::protocol, "watch event of unknown type \"" + type + "\"");
  auto obj = doc.find("object");
  if (obj == doc.end() || !obj->is_object()) {
    return make_error(ErrorKind::protocol, "watch event " + type + " without an object");
  }
  ev.object = std::move(*obj);
  if (ev.type == WatchEvent::Type::error) {
    ev.error_code = ev.object.value("code", 0);
    ev.error_message = ev.object.value("message", "");
    if (ev.error_code == 0 && ev.object.value("reason", "") == "Expired") ev.error_code = 410;
  }
  return ev;
}

namespace {

// The list's items (milestone fields only) and resourceVersion by the scanner; nullopt: take the full parser.
std::optional<ObjectList> scan_list(std::string_view body) {
  ObjectList list;
  std::string_view items_raw;
  Cursor top{body};
  const bool top_ok = top.members([&](std::string_view key, std::string_view value) {
    if (key == "items") items_raw = value;
    if (key == "metadata") {
      Cursor meta{value};
      return meta.members([&](std::string_view k, std::string_view v) {
        if (k != "resourceVersion") return true;
        json rv;
        if (!build(v, rv) || !rv.is_string()) return false;
        list.resource_version = rv.get<std::string>();
        return true;
      });
    }
    return true;
  });
  top.ws();
  if (!top_ok || top.i != body.size()) return std::nullopt;
  if (items_raw.empty() || items_raw == "null") return list;
  Cursor cursor{items_raw};
  if (!cursor.eat('[')) return std::nullopt;
  if (cursor.eat(']')) return list;
  for (;;) {
    cursor.ws();
    const std::size_t start = cursor.i;
    if (!cursor.skip_value()) return std::nullopt;
    const std::string_view raw = items_raw.substr(start, cursor.i - start);
    if (raw.empty() || raw.front() != '{') return std::nullopt;
    auto object = milestone_object(raw);
    if (!object) return std::nullopt;
    list.items.push_back(std::move(*object));
    if (cursor.eat(',')) continue;
    if (!cursor.eat(']')) return std::nullopt;
    cursor.ws();
    return cursor.i == items_raw.size() ? std::optional<ObjectList>(std::move(list)) : std::nullopt;
  }
}

}  // namespace

Expected<ObjectList> decode_list(std::string_view body, WatchDecode mode) {
  if (mode == WatchDecode::milestone_fields) {
    if (auto fast = scan_list(body)) return std::move(*fast);
  }
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return make_error(ErrorKind::protocol,
                      "the list response is not a JSON object: " + std::string(body.substr(0, 200)));
  }
  ObjectList list;
  if (auto meta = doc.find("metadata"); meta != doc.end() && meta->is_object()) {
    if (auto rv = meta->find("resourceVersion"); rv != meta->end() && rv->is_string()) {
      list.resource_version = rv->get<std::string>();
    }
  }
  if (auto items = doc.find("items"); items != doc.end() && items->is_array()) {
    list.items.reserve(items->size());
    for (auto& item : *items) {
      // The observers read fields of every item: an item that is not an object is a malformed list.
      if (!item.is_object()) {
        return make_error(ErrorKind::protocol, "the list response has an item that is not an object: " +
                                                   item.dump().substr(0, 200));
      }
      list.items.push_back(std::move(item));
    }
  }
  return list;
}

std::optional<std::string> compact_watch_line(std::string_view line) {
  auto raw = split_event(line);
  if (!raw || raw->type == "\"ERROR\"") return std::nullopt;  // ERROR: a Status, kept whole
  std::string out;
  out.reserve(512);
  out.append("{\"type\":").append(raw->type).append(",\"object\":{");
  bool first = true;
  auto member = [&](std::string_view key, std::string_view raw) {
    if (!first) out += ',';
    first = false;
    out.append("\"").append(key).append("\":").append(raw);
  };
  Cursor cursor{raw->object};
  const bool ok = cursor.members([&](std::string_view key, std::string_view value) {
    if (key == "kind" || key == "apiVersion") {
      member(key, value);
    } else if (key == "metadata" || key == "status") {
      if (value.empty() || value.front() != '{') return false;
      std::string part = "{";
      Cursor inner{value};
      const bool inner_ok = inner.members([&](std::string_view k, std::string_view v) {
        if (!keeps(key, k)) return true;
        if (part.size() > 1) part += ',';
        part.append("\"").append(k).append("\":").append(v);
        return true;
      });
      if (!inner_ok) return false;
      member(key, part + "}");
    }
    return true;
  });
  if (!ok) return std::nullopt;
  out += "}}";
  return out;
}

DataVolumeState datavolume_state(const json& dv) {
  DataVolumeState st;
  const json status = dv.value("status", json::object());
  if (!status.is_object()) return st;
  st.phase = status.value("phase", "");
  st.succeeded = st.phase == "Succeeded";
  st.failed = st.phase == "Failed";
  std::string detail = "phase " + (st.phase.empty() ? std::string("(none)") : st.phase);
  if (std::string progress = status.value("progress", ""); !progress.empty() && progress != "N/A") {
    detail += ", progress " + progress;
  }
  if (auto conds = status.find("conditions"); conds != status.end() && conds->is_array()) {
    for (const auto& c : *conds) {
      if (!c.is_object()) continue;
      std::string reason = c.value("reason", ""), message = c.value("message", "");
      if (reason.empty() && message.empty()) continue;
      detail += "; " + c.value("type", "?") + "=" + c.value("status", "?");
      if (!reason.empty()) detail += " " + reason;
      if (!message.empty()) detail += ": " + message;
    }
  }
  st.detail = detail;
  return st;
}

}  // namespace bootstorm::kubevirt
