// What-if changes to a lab profile (see the header).
#include "simulator/model/lab_overrides.hpp"

#include <fmt/format.h>
#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace bootstorm::sim::model {

namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : key) {
    if (c == '.') {
      parts.push_back(part);
      part.clear();
    } else {
      part.push_back(c);
    }
  }
  parts.push_back(part);
  return parts;
}

bool has_glob(const std::string& s) {
  return s.find_first_of("*?[") != std::string::npos;
}

std::string joined(const std::vector<std::string>& parts, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count && i < parts.size(); ++i) out += (i ? "." : "") + parts[i];
  return out;
}

std::string keys_of(const YAML::Node& map) {
  std::vector<std::string> keys;
  for (const auto& entry : map) keys.push_back(entry.first.as<std::string>(""));
  std::sort(keys.begin(), keys.end());
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out.empty() ? "none" : out;
}

std::string names_of(const YAML::Node& list) {
  std::string out;
  for (const auto& item : list) {
    if (item.IsMap() && item["name"]) out += (out.empty() ? "" : ", ") + item["name"].as<std::string>("");
  }
  return out.empty() ? "none" : out;
}

// Every node `parts[at..]` leads to from `node`; a list is indexed by its items' names. `create_leaf`: the
// last key may be absent from a mapping (the loader's default applies there) and is made.
Expected<void> resolve(YAML::Node node, const std::vector<std::string>& parts, std::size_t at,
                       bool create_leaf, const std::string& key, std::vector<YAML::Node>& out) {
  if (at == parts.size()) {
    out.push_back(node);
    return {};
  }
  const std::string& part = parts[at];
  const std::string where = at == 0 ? std::string("the profile") : "'" + joined(parts, at) + "'";
  if (node.IsSequence()) {
    bool any = false;
    for (YAML::Node item : node) {
      if (!item.IsMap() || !item["name"]) continue;
      const std::string name = item["name"].as<std::string>("");
      if (fnmatch(part.c_str(), name.c_str(), 0) != 0) continue;
      any = true;
      auto deeper = resolve(item, parts, at + 1, create_leaf, key, out);
      if (!deeper) return deeper;
    }
    if (!any) {
      return make_error(
          ErrorKind::invalid_input,
          fmt::format("--set {}: {} has no item named '{}' (it has: {}).", key, where, part, names_of(node)),
          "Name an item of the lab profile, or a glob that matches some.");
    }
    return {};
  }
  if (!node.IsMap()) {
    return make_error(
        ErrorKind::invalid_input,
        fmt::format("--set {}: {} is a value, not a section: '{}' cannot be below it.", key, where, part),
        "Shorten the key to end at the value.");
  }
  if (has_glob(part)) {
    return make_error(ErrorKind::invalid_input,
                      fmt::format("--set {}: a glob ('{}') can only name list items (hosts, datastores, "
                                  "profiles, phases, nodes).",
                                  key, part));
  }
  YAML::Node child = node[part];
  if (!child) {
    if (!(create_leaf && at + 1 == parts.size())) {
      return make_error(
          ErrorKind::invalid_input,
          fmt::format("--set {}: {} has no '{}' (it has: {}).", key, where, part, keys_of(node)),
          "Check the key against the lab profile (simulator/labs/*.yaml).");
    }
  }
  return resolve(child, parts, at + 1, create_leaf, key, out);
}

}  // namespace

Expected<LabOverride> parse_lab_override(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) {
    return make_error(ErrorKind::invalid_input, fmt::format("--set '{}' is not KEY=VALUE.", text),
                      "For example --set hosts.r740-01.linkMBps=3200.");
  }
  LabOverride o{std::string(trimmed(text.substr(0, eq))), std::string(trimmed(text.substr(eq + 1)))};
  if (o.key.empty() || o.value.empty()) {
    return make_error(ErrorKind::invalid_input, fmt::format("--set '{}' has an empty key or value.", text),
                      "For example --set hosts.r740-01.linkMBps=3200.");
  }
  const auto parts = split_key(o.key);
  if (std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    return make_error(ErrorKind::invalid_input, fmt::format("--set '{}': the key has an empty part.", text),
                      "Separate the key's parts with single dots.");
  }
  return o;
}

Expected<std::vector<LabOverride>> parse_lab_overrides(const std::vector<std::string>& texts) {
  std::vector<LabOverride> out;
  for (const auto& text : texts) {
    auto parsed = parse_lab_override(text);
    if (!parsed) return parsed.error();
    out.push_back(std::move(*parsed));
  }
  return out;
}

Expected<std::string> apply_lab_overrides(std::string_view yaml_text,
                                          const std::vector<LabOverride>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return make_error(ErrorKind::invalid_input, fmt::format("The lab profile is not YAML: {}", e.what()));
  }
  for (const auto& o : overrides) {
    std::vector<YAML::Node> targets;
    auto found = resolve(root, split_key(o.key), 0, true, o.key, targets);
    if (!found) return found.error();
    for (auto& target : targets) {
      if (target.IsDefined() && !target.IsNull() && !target.IsScalar()) {
        return make_error(ErrorKind::invalid_input,
                          fmt::format("--set {}: '{}' is a section, not a value.", o.text(), o.key),
                          "Name one of its values.");
      }
      target = o.value;
    }
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str());
}

Expected<LabSpec> load_lab_spec_with(const std::string& name_or_path,
                                     const std::vector<LabOverride>& overrides) {
  if (overrides.empty()) return load_lab_spec(name_or_path);
  auto profile = read_lab_profile(name_or_path);
  if (!profile) return profile.error();
  auto text = apply_lab_overrides(profile->text, overrides);
  if (!text) return text.error();
  std::string applied;
  for (const auto& o : overrides) applied += (applied.empty() ? "" : ", ") + o.text();
  auto spec = parse_lab_spec(*text, profile->path + " with " + applied);
  if (!spec) {
    Error error = spec.error();
    error.hint = "Check the --set values against the lab profile's format (simulator/README.md).";
    return error;
  }
  return spec;
}

Expected<std::string> lab_profile_value(std::string_view yaml_text, const std::string& key) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return make_error(ErrorKind::invalid_input, fmt::format("The lab profile is not YAML: {}", e.what()));
  }
  std::vector<YAML::Node> targets;
  auto found = resolve(root, split_key(key), 0, true, key, targets);
  if (!found) return found.error();
  if (targets.empty() || !targets.front().IsDefined() || targets.front().IsNull()) return std::string();
  if (!targets.front().IsScalar()) {
    return make_error(ErrorKind::invalid_input, fmt::format("'{}' is a section, not a value.", key));
  }
  return targets.front().as<std::string>();
}

}  // namespace bootstorm::sim::model
