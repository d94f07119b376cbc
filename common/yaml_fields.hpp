#pragma once
// Strict reading of YAML files, shared by the StormPlan loader (orchestrator/plan/load.cpp), the platform
// kinds' plan sections (providers/<kind>/descriptor.cpp, through api::KindPlanSection) and the MigrationPlan
// loader (orchestrator/migrate/load.cpp): mappings with allowed and required keys, typed scalar fields, and
// diagnostics at the line and column of the offending node, so that every plan reports problems in the same
// words.
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/diagnostic.hpp"

namespace bootstorm::yaml {

using Names = std::vector<std::string>;

// "a, b, c"
std::string join(const Names& names);
bool contains(const Names& names, const std::string& value);

// "nothing (null)", "a scalar", "a list", "a mapping": for "must be X, got Y" messages.
const char* describe_type(const YAML::Node& node);

// Quoted scalars carry the non-specific tag "!"; plain ones "?". A quoted "6" is a string, not a number.
bool is_quoted(const YAML::Node& node);

// 1-63 characters of a-z, 0-9 and '-', not starting or ending with '-' (a Kubernetes namespace name).
bool is_dns_label(const std::string& value);

// Where `node` was written (1-based), for a check made after loading.
SourcePos position_of(const YAML::Node& node);

// Where each YAML document of a text starts. yaml-cpp 0.7's LoadAll never returns on some malformed texts
// (a lone ",": the parser reports another document at the same place forever, allocating each time; found
// by tests/fuzz/plan), so documents are counted here, stopping when the parser no longer advances. Throws
// YAML::ParserException on a syntax error.
std::vector<YAML::Mark> document_starts(const std::string& text);

// Offset of the first byte that is not part of well-formed UTF-8 (no overlong forms, surrogates or code
// points above U+10FFFF), or npos. yaml-cpp reads such bytes into strings but cannot write them back, so the
// loader refuses them first.
std::size_t invalid_utf8_offset(std::string_view text);

// A map's entries by key, keeping each key's node for positions. First occurrence wins; repeats are errors.
struct MapView {
  YAML::Node node;
  std::string context;  // "plan", "platform", "scenarios[1].placement[0]"
  std::string prefix;   // "" for the root, "platform." ...
  std::map<std::string, std::pair<YAML::Node, YAML::Node>> entries;  // key -> (key node, value node)
  bool valid = false;

  bool has(const std::string& key) const { return entries.count(key) != 0; }
  const YAML::Node& value(const std::string& key) const { return entries.at(key).second; }
  const YAML::Node& key_node(const std::string& key) const { return entries.at(key).first; }
};

// The diagnostics of one file and the typed getters that add to them. A getter returns nullopt when the key
// is absent or its value is wrong (then with a diagnostic naming the field as `view.prefix + key`).
class FieldReader {
 public:
  explicit FieldReader(std::string path) : path_(std::move(path)) {}

  std::vector<Diagnostic> diagnostics;

  void error_at(const YAML::Mark& mark, std::string message);
  void error(const YAML::Node& node, std::string message) { error_at(node.Mark(), std::move(message)); }

  // Diagnostics in file order (line, then column; the order of discovery among equals).
  void sort_diagnostics();

  // The one YAML document of `text` (a `what`: "plan"), or nullopt with a diagnostic when there is nothing to
  // read: bytes that are not UTF-8, a syntax error, an empty text (`empty_message`). A second document is
  // reported and the first returned.
  std::optional<YAML::Node> read_document(const std::string& text, const std::string& what,
                                          const std::string& empty_message);

  // `node` as a mapping whose keys must be in `allowed` (`allowed_note` qualifies the list in the message,
  // e.g. " for kind vsphere"). Not valid, with a diagnostic, when `node` is not a mapping.
  MapView map_view(const YAML::Node& node, std::string context, std::string prefix, const Names& allowed,
                   const std::string& allowed_note = "");
  // A diagnostic at the mapping for each of `keys` it lacks; `why` is appended to the message.
  void require(const MapView& view, const Names& keys, const std::string& why = "");

  std::string field(const MapView& view, const std::string& key) const { return view.prefix + key; }

  std::optional<std::string> get_string(const MapView& view, const std::string& key);
  // A string that must not be empty.
  std::optional<std::string> get_non_empty(const MapView& view, const std::string& key);
  // An unquoted integer within +-1e9.
  std::optional<long long> get_int(const MapView& view, const std::string& key);
  // An unquoted finite number.
  std::optional<double> get_number(const MapView& view, const std::string& key);
  std::optional<bool> get_bool(const MapView& view, const std::string& key);
  // A duration such as 10m or 1h30m; durations are whole milliseconds in the model, finer values would
  // silently round, so they are refused.
  std::optional<std::chrono::milliseconds> get_duration(const MapView& view, const std::string& key);

  // Whether `value` is one of `allowed`; a diagnostic at `node` when not.
  bool check_enum(const YAML::Node& node, const std::string& what, const std::string& value,
                  const Names& allowed, const std::string& qualifier = "");
  void check_non_empty(const YAML::Node& node, const std::string& what, const std::string& value);
  // A Kubernetes namespace name (is_dns_label); a diagnostic at `node` naming `what` when not.
  void check_dns_label(const YAML::Node& node, const std::string& what, const std::string& value);

 private:
  std::string path_;
};

}  // namespace bootstorm::yaml
