#pragma once
// Platform kind "vsphere"'s own part of a plan (api::KindSettings): the golden VM and how to clone it, which
// vCenter API to speak and how to send the storm's starts. Read from the plan by read_settings() (the kind's
// descriptor); read by the REST and vim25 providers from their ProviderConfig::settings.
#include <string>

#include "providers/api/kind_settings.hpp"

namespace bootstorm::vsphere {

struct Settings final : api::KindSettings {
  std::string vm;                  // golden.vm: the VM or template to clone
  std::string clone = "linked";    // golden.clone: full | linked | instant
  std::string datastore;           // golden.datastore: where the clones go ("": the golden VM's)
  std::string snapshot;            // golden.snapshot: the one linked clones share ("": the run takes one)
  std::string api = "auto";        // platform.api: auto | rest | vim25
  std::string power_on = "multi";  // storm.powerOn (vim25): multi | each

  nlohmann::ordered_json plan_keys() const override;
  std::string golden_image() const override { return vm; }
  std::string clone_kind() const override { return clone; }

  // The same settings are the same plan keys: one list of the fields, plan_keys().
  bool operator==(const Settings& o) const { return plan_keys() == o.plan_keys(); }
};

// The kind's plan section: golden.vm, datastore and snapshot (snapshot only for linked clones), with the
// checked clone kind, API and power-on mode.
api::PlatformSettings read_settings(const api::KindPlanSection& section);

// The settings of a provider's config (the defaults when the config carries none).
inline const Settings& settings_of(const api::PlatformSettings& settings) {
  return settings.as<Settings>();
}

}  // namespace bootstorm::vsphere
