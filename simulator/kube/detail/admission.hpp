#pragma once
// Internal to bootstorm::sim_kube: the admission of created and updated objects — the validating webhooks'
// essential checks for Namespaces, VirtualMachines and DataVolumes, and the lab VM a new VirtualMachine
// stands for (created here, so that a VirtualMachine the lab cannot create is refused like a webhook
// refuses it).
#include <nlohmann/json.hpp>
#include <optional>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/vm_controller.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/kube/resource_types.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube {

class Admission {
 public:
  Admission(ObjectStore& store, model::Lab& lab, VmController& vms);

  // Validates a new object of `kind` and prepares it (model side effects for VMs); error to answer instead.
  std::optional<ApiError> admit_create(Kind kind, nlohmann::json& object);
  std::optional<ApiError> admit_update(Kind kind, const nlohmann::json& old_object, nlohmann::json& object);

 private:
  ObjectStore& store_;
  model::Lab& lab_;
  VmController& vms_;
};

}  // namespace bootstorm::sim::kube
