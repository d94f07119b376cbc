#pragma once
// Internal to bootstorm::sim_kube: the objects a lab's cluster has before any client comes — the system
// namespaces and the golden images' namespaces, the KubeVirt and CDI CRs, the StorageClasses with their CDI
// StorageProfiles (and the driver's VolumeSnapshotClass), a Node per lab node, and per golden image its PVC
// and DataSource.
#include "simulator/kube/detail/object_publisher.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube {

// Where the lab's KubeVirt CR lives (upstream's install; OpenShift's is openshift-cnv/kubevirt-kubevirt-
// hyperconverged).
inline constexpr const char* kKubeVirtNamespace = "kubevirt";
inline constexpr const char* kKubeVirtName = "kubevirt";

// Stores the seed objects of `lab` (a namespace that exists already is kept).
void seed_objects(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher);

}  // namespace bootstorm::sim::kube
