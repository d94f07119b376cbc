#pragma once
// The seam that lets the storm engine boot-storm VMs that already exist (the migrated desktops) instead of
// cloning new ones: a Provider decorator whose provision() adopts the next existing VM of a list, whose
// check_inventory()/wait_startable() only check that the VM is there, and that delegates the storm itself
// (connect, start, observe, stop) to the real provider. Adopted VMs carry the run's label (the migration
// labels them), so the real provider's watch by run label and its ownership checks apply unchanged.
#include <memory>
#include <string>
#include <vector>

#include "providers/api/provider.hpp"

namespace bootstorm::migrate {

struct AdoptedVm {
  std::string name;  // VirtualMachine name on the destination
  std::string id;    // "namespace/name" (KubeVirt) or the platform id
  std::string host;  // node, when known
};

// `vms` are handed out in order to provision() calls (by VmSpec::index, 1-based). destroy() only stops the
// VM: adopted VMs belong to the migration run and are removed by its cleanup.
std::unique_ptr<api::Provider> make_adopting_provider(std::unique_ptr<api::Provider> inner,
                                                      std::vector<AdoptedVm> vms);

}  // namespace bootstorm::migrate
