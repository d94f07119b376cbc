// Watch lines and list responses decoded (see watch_decode.hpp).
#include "protocol/kube/watch_decode.hpp"

#include <optional>
#include <string_view>

namespace bootstorm::kube {
using nlohmann::json;

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
    // A number or a literal. Its characters are checked, not only its end: a quote or a control byte inside
    // would make the member walk (compact_watch_line) and the bracket-counting skip (split_event) see
    // different structures in the same line, and the compacted line would be an event the line is not.
    const std::size_t start = i;
    while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
           s[i] != '\r' && s[i] != '\t')
      ++i;
    const std::string_view token = s.substr(start, i - start);
    if (token == "true" || token == "false" || token == "null") return true;
    return !token.empty() && token.find_first_not_of("0123456789+-.eE") == std::string_view::npos;
  }
  // fn(key) for every member of the object at the cursor, with the cursor at the member's value: fn moves
  // the cursor past the value (with value() or by descending into it) and returns false to stop. False on
  // malformed input, an escaped key, or when fn returns false. Each byte is scanned once.
  template <class Fn>
  bool each_member(Fn&& fn) {
    if (!eat('{')) return false;
    if (eat('}')) return true;
    for (;;) {
      auto key = string();
      if (!key || key->find('\\') != std::string_view::npos || !eat(':')) return false;
      ws();
      if (!fn(*key)) return false;
      if (eat(',')) continue;
      return eat('}');
    }
  }
  // The raw value at the cursor (one complete JSON value), which the cursor moves past.
  std::optional<std::string_view> value() {
    ws();
    const std::size_t start = i;
    if (!skip_value()) return std::nullopt;
    return s.substr(start, i - start);
  }
  bool at(char c) {
    ws();
    return i < s.size() && s[i] == c;
  }
  // fn(key, raw value) for every member of the object at the cursor (each_member with the value delimited).
  template <class Fn>
  bool members(Fn&& fn) {
    return each_member([&](std::string_view key) {
      auto raw = value();
      return raw && fn(key, *raw);
    });
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
  return section == "metadata" ? (key == "name" || key == "namespace" || key == "uid" ||
                                  key == "resourceVersion" || key == "annotations")
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
        if (k != "resourceVersion" && k != "continue") return true;
        json text;
        if (!build(v, text) || !text.is_string()) return false;
        (k == "continue" ? list.continue_token : list.resource_version) = text.get<std::string>();
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
    if (auto next = meta->find("continue"); next != meta->end() && next->is_string()) {
      list.continue_token = next->get<std::string>();
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
  // One pass over the line: the members of `object` are kept, descended into or skipped as the scanner
  // reaches them (the watch thread runs this for every line; see bench/README.md).
  std::string_view type;
  std::string object = "{";
  bool has_object = false;
  auto append = [](std::string& out, std::string_view key, std::string_view raw) {
    if (out.size() > 1) out += ',';
    out.append("\"").append(key).append("\":").append(raw);
  };
  Cursor c{line};
  const bool ok = c.each_member([&](std::string_view key) {
    if (key == "type") {
      auto raw = c.value();
      if (raw) type = *raw;
      return raw.has_value();
    }
    if (key != "object") return c.value().has_value();
    if (!c.at('{')) return false;
    has_object = true;
    return c.each_member([&](std::string_view member) {
      if (member == "kind" || member == "apiVersion") {
        auto raw = c.value();
        if (raw) append(object, member, *raw);
        return raw.has_value();
      }
      if (member != "metadata" && member != "status") return c.value().has_value();
      if (!c.at('{')) return false;
      std::string part = "{";
      const bool part_ok = c.each_member([&](std::string_view k) {
        auto raw = c.value();
        if (raw && keeps(member, k)) append(part, k, *raw);
        return raw.has_value();
      });
      part += '}';
      if (part_ok) append(object, member, part);
      return part_ok;
    });
  });
  c.ws();
  if (!ok || c.i != line.size() || type.empty() || !has_object) return std::nullopt;
  if (type == "\"ERROR\"") return std::nullopt;  // ERROR: a Status, kept whole
  object += '}';
  std::string out;
  out.reserve(object.size() + type.size() + 24);
  out.append("{\"type\":").append(type).append(",\"object\":").append(object).append("}");
  return out;
}

}  // namespace bootstorm::kube
