#include "providers/vsphere/settings.hpp"

#include "common/yaml_fields.hpp"

namespace bootstorm::vsphere {

nlohmann::ordered_json Settings::plan_keys() const {
  nlohmann::ordered_json golden = nlohmann::ordered_json::object();
  golden["vm"] = vm;
  golden["clone"] = clone;
  if (!datastore.empty()) golden["datastore"] = datastore;
  if (!snapshot.empty()) golden["snapshot"] = snapshot;
  nlohmann::ordered_json keys;
  keys["platform"] = {{"api", api}};
  keys["golden"] = std::move(golden);
  keys["storm"] = {{"powerOn", power_on}};
  return keys;
}

api::PlatformSettings read_settings(const api::KindPlanSection& section) {
  Settings s;
  s.clone = section.clone;
  if (!section.platform_api.empty()) s.api = section.platform_api;
  if (!section.power_on.empty()) s.power_on = section.power_on;
  if (section.golden && section.reader) {
    yaml::FieldReader& r = *section.reader;
    const yaml::MapView& golden = *section.golden;
    if (auto v = r.get_string(golden, "vm")) {
      r.check_non_empty(golden.value("vm"), "golden.vm", *v);
      s.vm = *v;
    }
    if (auto v = r.get_string(golden, "datastore")) {
      r.check_non_empty(golden.value("datastore"), "golden.datastore", *v);
      s.datastore = *v;
    }
    if (auto v = r.get_non_empty(golden, "snapshot")) {
      if (s.clone != "linked") {
        r.error(golden.key_node("snapshot"),
                "golden.snapshot applies only to golden.clone linked (the snapshot linked clones share); "
                "golden.clone is " +
                    s.clone);
      }
      s.snapshot = *v;
    }
  }
  return api::make_settings(std::move(s));
}

}  // namespace bootstorm::vsphere
