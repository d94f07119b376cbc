#pragma once
// Platform kind "kubevirt"'s own part of a plan (api::KindSettings): the golden image (a CDI DataSource or a
// PVC), how CDI clones it, and the namespace of the run's VirtualMachines. Read from the plan by
// read_settings() (the kind's descriptor); read by the provider from its ProviderConfig::settings.
#include <string>

#include "providers/api/kind_settings.hpp"

namespace bootstorm::kubevirt {

// The namespace of a plan that names none.
inline constexpr const char* kDefaultPlanNamespace = "bootstorm";

struct Settings final : api::KindSettings {
  std::string datasource_name;       // golden.dataSource.name
  std::string datasource_namespace;  // golden.dataSource.namespace ("": the VMs' namespace)
  std::string pvc;                   // golden.pvc: "namespace/name", the alternative to a DataSource
  std::string clone = "auto";        // golden.clone: auto | copy | snapshot | csi-clone
  // The namespace of the VMs; "": the kubeconfig context's (a plan always names one: kDefaultPlanNamespace).
  std::string namespace_;

  nlohmann::ordered_json plan_keys() const override;
  std::string golden_image() const override { return datasource_name.empty() ? pvc : datasource_name; }
  std::string clone_kind() const override { return clone; }
};

// The kind's plan section: golden.dataSource ({name, namespace}) or golden.pvc, the checked clone strategy,
// and the namespace (the DataSource's too, unless it names its own).
api::PlatformSettings read_settings(const api::KindPlanSection& section);

// The settings of a provider's config (the defaults when the config carries none).
inline const Settings& settings_of(const api::PlatformSettings& settings) {
  return settings.as<Settings>();
}

}  // namespace bootstorm::kubevirt
