// The field readers behind the strict loaders (see yaml_fields.hpp). The messages here are what users read
// for every plan kind: changing one changes the diagnostics of StormPlans, MigrationPlans and the platform
// kinds' plan sections alike.
#include "common/yaml_fields.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <system_error>
#include <tuple>

#include "common/duration.hpp"

namespace bootstorm::yaml {

std::string Diagnostic::to_string() const {
  if (line <= 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

std::string join(const Names& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

bool contains(const Names& names, const std::string& value) {
  return std::find(names.begin(), names.end(), value) != names.end();
}

const char* describe_type(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Undefined:
      break;
  }
  return "an undefined value";
}

bool is_quoted(const YAML::Node& node) {
  return node.Tag() == "!";
}

bool is_dns_label(const std::string& value) {
  if (value.empty() || value.size() > 63 || value.front() == '-' || value.back() == '-') return false;
  for (char c : value) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

namespace {

class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
  }
  void OnMapEnd() override {}
};

}  // namespace

std::vector<YAML::Mark> document_starts(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  for (;;) {
    const std::size_t before = starts.marks.size();
    if (!parser.HandleNextDocument(starts)) break;
    if (starts.marks.size() == before) break;
    if (before > 0 && starts.marks.back().pos == starts.marks[before - 1].pos) {
      starts.marks.pop_back();
      break;
    }
  }
  return starts.marks;
}

SourcePos position_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

void FieldReader::error_at(const YAML::Mark& mark, std::string message) {
  Diagnostic d;
  d.file = path_;
  if (!mark.is_null()) {
    d.line = mark.line + 1;
    d.column = mark.column + 1;
  }
  d.message = std::move(message);
  diagnostics.push_back(std::move(d));
}

void FieldReader::sort_diagnostics() {
  std::stable_sort(diagnostics.begin(), diagnostics.end(), [](const auto& a, const auto& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
}

std::optional<YAML::Node> FieldReader::read_document(const std::string& text, const std::string& what,
                                                     const std::string& empty_message) {
  if (const std::size_t bad = invalid_utf8_offset(text); bad != std::string_view::npos) {
    const std::size_t line_start = text.rfind('\n', bad);  // text[bad] >= 0x80: not the newline itself
    YAML::Mark at;
    at.pos = static_cast<int>(bad);
    at.line =
        static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n'));
    at.column = static_cast<int>(line_start == std::string::npos ? bad : bad - line_start - 1);
    static constexpr char hex[] = "0123456789ABCDEF";
    const auto byte = static_cast<unsigned char>(text[bad]);
    error_at(at, "the " + what + " is not valid UTF-8 (byte 0x" + hex[byte >> 4] + hex[byte & 15] +
                     "): save the file as UTF-8");
    return std::nullopt;
  }
  std::vector<YAML::Mark> starts;
  YAML::Node document;
  try {
    starts = document_starts(text);
    document = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    error_at(e.mark, "syntax error: " + e.msg);
    return std::nullopt;
  }
  if (starts.empty() || (starts.size() == 1 && document.IsNull())) {
    YAML::Mark start;
    start.line = 0;
    start.column = 0;
    error_at(start, empty_message);
    return std::nullopt;
  }
  if (starts.size() > 1) {
    error_at(starts[1],
             "a " + what + " file holds exactly one YAML document, found " + std::to_string(starts.size()));
  }
  return document;
}

MapView FieldReader::map_view(const YAML::Node& node, std::string context, std::string prefix,
                              const Names& allowed, const std::string& allowed_note) {
  MapView view;
  view.node = node;
  view.context = std::move(context);
  view.prefix = std::move(prefix);
  if (!node.IsMap()) {
    std::string what = view.context == "plan" ? "a plan" : view.context;
    error(node, what + " must be a mapping, got " + describe_type(node));
    return view;
  }
  view.valid = true;
  for (auto it = node.begin(); it != node.end(); ++it) {
    // A copy: it->first lives in a proxy that dies with this statement (ASan: stack-use-after-scope).
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      error(key, "keys in " + view.context + " must be names, got " + describe_type(key));
      continue;
    }
    const std::string& name = key.Scalar();
    if (!contains(allowed, name)) {
      error(key, "unknown key '" + name + "' in " + view.context + " (allowed" + allowed_note + ": " +
                     join(allowed) + ")");
      continue;
    }
    auto [pos, inserted] = view.entries.emplace(name, std::make_pair(key, it->second));
    if (!inserted) {
      error(key, "duplicate key '" + name + "' in " + view.context + " (first at line " +
                     std::to_string(pos->second.first.Mark().line + 1) + ")");
    }
  }
  return view;
}

void FieldReader::require(const MapView& view, const Names& keys, const std::string& why) {
  for (const auto& key : keys) {
    if (!view.has(key)) error(view.node, "missing required key '" + key + "' in " + view.context + why);
  }
}

std::optional<std::string> FieldReader::get_string(const MapView& view, const std::string& key) {
  if (!view.has(key)) return std::nullopt;
  const YAML::Node& node = view.value(key);
  if (!node.IsScalar()) {
    error(node, field(view, key) + " must be a string, got " + describe_type(node));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<std::string> FieldReader::get_non_empty(const MapView& view, const std::string& key) {
  auto v = get_string(view, key);
  if (v && v->empty()) {
    error(view.value(key), field(view, key) + " must not be empty");
    return std::nullopt;
  }
  return v;
}

std::optional<long long> FieldReader::get_int(const MapView& view, const std::string& key) {
  if (!view.has(key)) return std::nullopt;
  const YAML::Node& node = view.value(key);
  if (!node.IsScalar() || is_quoted(node)) {
    error(node,
          field(view, key) + " must be an integer, got " +
              (node.IsScalar() ? "the string \"" + node.Scalar() + "\"" : std::string(describe_type(node))));
    return std::nullopt;
  }
  const std::string& text = node.Scalar();
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > 1'000'000'000 ||
      value < -1'000'000'000) {
    error(node, field(view, key) + " must be an integer, got '" + text + "'");
    return std::nullopt;
  }
  return value;
}

std::optional<double> FieldReader::get_number(const MapView& view, const std::string& key) {
  if (!view.has(key)) return std::nullopt;
  const YAML::Node& node = view.value(key);
  if (!node.IsScalar() || is_quoted(node)) {
    error(node,
          field(view, key) + " must be a number, got " +
              (node.IsScalar() ? "the string \"" + node.Scalar() + "\"" : std::string(describe_type(node))));
    return std::nullopt;
  }
  const std::string& text = node.Scalar();
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    error(node, field(view, key) + " must be a number, got '" + text + "'");
    return std::nullopt;
  }
  return value;
}

std::optional<bool> FieldReader::get_bool(const MapView& view, const std::string& key) {
  if (!view.has(key)) return std::nullopt;
  const YAML::Node& node = view.value(key);
  if (node.IsScalar() && !is_quoted(node)) {
    const std::string& t = node.Scalar();
    if (t == "true" || t == "True" || t == "TRUE") return true;
    if (t == "false" || t == "False" || t == "FALSE") return false;
  }
  error(node, field(view, key) + " must be true or false, got " +
                  (node.IsScalar() ? "'" + node.Scalar() + "'" : std::string(describe_type(node))));
  return std::nullopt;
}

std::optional<std::chrono::milliseconds> FieldReader::get_duration(const MapView& view,
                                                                   const std::string& key) {
  auto text = get_string(view, key);
  if (!text) return std::nullopt;
  const YAML::Node& node = view.value(key);
  auto parsed = parse_duration(*text);
  if (!parsed) {
    error(node, field(view, key) + " is not a valid duration: '" + *text +
                    "' (write a number with a unit h, m, s or ms, e.g. 10m, 30s, 1500ms, 1h30m)");
    return std::nullopt;
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  if (ms != *parsed) {
    error(node, field(view, key) + " must be a whole number of milliseconds, got '" + *text + "'");
    return std::nullopt;
  }
  return ms;
}

bool FieldReader::check_enum(const YAML::Node& node, const std::string& what, const std::string& value,
                             const Names& allowed, const std::string& qualifier) {
  if (contains(allowed, value)) return true;
  error(node, what + " must be one of " + join(allowed) + qualifier + ", got '" + value + "'");
  return false;
}

void FieldReader::check_non_empty(const YAML::Node& node, const std::string& what, const std::string& value) {
  if (value.empty()) error(node, what + " must not be empty");
}

// Offset of the first byte that is not part of well-formed UTF-8 (no overlong forms, surrogates or code
// points above U+10FFFF), or npos. yaml-cpp reads such bytes into strings but cannot write them back (its
// emitter substitutes U+FFFD or drops the node), so a plan holding them would not survive to_yaml()
// (found by tests/fuzz/plan).
std::size_t invalid_utf8_offset(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;  // the valid range of the second byte, which rules out the invalid forms
    if (lead < 0x80) {
      length = 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    for (std::size_t k = 1; k < length; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if (k == 1 ? (c < low || c > high) : (c < 0x80 || c > 0xBF)) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

void FieldReader::check_dns_label(const YAML::Node& node, const std::string& what, const std::string& value) {
  if (!is_dns_label(value)) {
    error(node, what + " '" + value +
                    "' is not a valid Kubernetes namespace (1-63 lowercase letters, digits and '-', starting "
                    "and ending with a letter or digit)");
  }
}

}  // namespace bootstorm::yaml
