#pragma once
// The Forklift (Migration Toolkit for Virtualization) controller of the simulated Kubernetes API: it plays
// forklift-controller for the forklift.konveyor.io/v1beta1 objects the front stores. Providers are validated
// against the lab's vCenter (credentials, URL), NetworkMaps and StorageMaps against the source inventory,
// Plans against providers, maps and the lab's vCenter VMs; a Migration runs each VM's cold-migration
// pipeline (Initialize, DiskTransfer, ImageConversion, VirtualMachineCreation) over the lab model's physics
// and creates the KubeVirt VirtualMachine (+ DataVolume/PVC) in the plan's target namespace. Status is
// written like Forklift writes it (conditions with category, Plan status.migration.vms[].pipeline[],
// Migration status.vms[]); `spec.cancel` and faults (`migrationFailures`) are honoured; step times are
// ground truth in /_lab/truth "migrations". See simulator/README.md, section "Forklift".
//
// Threading: like the front, single-threaded on the lab's executor. Owned by KubeFront::Impl; it sees the
// front only through the ClusterState it is given.
#include <memory>
#include <string>

#include "simulator/kube/detail/cluster_state.hpp"
#include "simulator/kube/resource_types.hpp"

namespace bootstorm::sim::kube {

class ForkliftController {
 public:
  virtual ~ForkliftController() = default;
  // An object of `kind` (Forklift kinds, Secrets, Namespaces) was created or its spec changed.
  virtual void on_object_changed(Kind kind, const std::string& ns, const std::string& name) = 0;
  // An object of `kind` was deleted (a Migration or Plan deletion stops its migration).
  virtual void on_object_deleted(Kind kind, const std::string& ns, const std::string& name) = 0;
  // Stops every running transfer and timer; the front calls it before it goes away.
  virtual void shutdown() = 0;
};

// Creates the controller over the cluster's state, which it keeps; it starts reconciling at once.
std::shared_ptr<ForkliftController> make_forklift_controller(std::unique_ptr<ClusterState> cluster);

}  // namespace bootstorm::sim::kube
