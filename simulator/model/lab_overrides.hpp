#pragma once
// What-if changes to a lab profile, written `KEY=VALUE` (`bootstorm predict --set`). KEY is a path into the
// profile's YAML: a section, then a list item by its `name` (a glob ties every match to the one value:
// `hosts.r740-*.linkMBps`), then keys, e.g.
//   hosts.r740-01.linkMBps=3200            datastores.tolly-aff-ds01.latencyMs=0.3
//   profiles.win10-vdi.outstandingIOs=4    profiles.win10-vdi.phases.os_load.mbRead=900
//   vcenter.hostCostUnits=32               kube.virtController.qps=50
// The changed profile goes through the strict loader, so a key the profile format does not have, or a value
// of the wrong type, is an error naming the override.
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::model {

struct LabOverride {
  std::string key;    // hosts.r740-*.linkMBps
  std::string value;  // 3200
  std::string text() const { return key + "=" + value; }
};

// "KEY=VALUE" (spaces around either trimmed); an error without '=' or with an empty key or value.
Expected<LabOverride> parse_lab_override(std::string_view text);
// Each of `texts` in order; the first error.
Expected<std::vector<LabOverride>> parse_lab_overrides(const std::vector<std::string>& texts);

// The profile's YAML text with the overrides applied, in order (comments are not kept). Errors name the
// override and what the profile has where it points.
Expected<std::string> apply_lab_overrides(std::string_view yaml_text,
                                          const std::vector<LabOverride>& overrides);

// load_lab_spec, then the overrides, then the strict loader on the result.
Expected<LabSpec> load_lab_spec_with(const std::string& name_or_path,
                                     const std::vector<LabOverride>& overrides);

// The value of one overridable leaf as the profile has it ("" when the key is absent and the loader's default
// applies): `lab fit` reads the starting point of what it fits. A glob reads its first match.
Expected<std::string> lab_profile_value(std::string_view yaml_text, const std::string& key);

// The profile text a name or path resolves to (as load_lab_spec finds it), and the file it came from.
struct LabProfileText {
  std::string text;
  std::string path;
};
Expected<LabProfileText> read_lab_profile(const std::string& name_or_path);

}  // namespace bootstorm::sim::model
