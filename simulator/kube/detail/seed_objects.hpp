#pragma once
// Internal to bootstorm::sim_kube: the objects a lab's cluster has before any client comes — the system
// namespaces and the golden images' namespaces, the KubeVirt and CDI CRs, the StorageClasses with their CDI
// StorageProfiles (and the driver's VolumeSnapshotClass), API Priority and Fairness's defaults, a Node per
// lab node, and per golden image its PVC and DataSource.
#include "simulator/kube/detail/object_publisher.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube {

// API Priority and Fairness as a cluster's defaults classify the lab's clients: health and version probes by
// the FlowSchema "probes" at the priority level "exempt", every other request by "global-default" at
// "global-default". The answers name them by UID (kube_front.cpp).
inline constexpr const char* kProbesFlowSchema = "probes";
inline constexpr const char* kExemptPriorityLevel = "exempt";
inline constexpr const char* kGlobalDefault = "global-default";

// OpenShift's monitoring stack: the Route to its query API (Thanos Querier), in this namespace.
inline constexpr const char* kMonitoringNamespace = "openshift-monitoring";
inline constexpr const char* kThanosQuerierRoute = "thanos-querier";

// Stores the seed objects of `lab` (a namespace that exists already is kept). `monitoring_host` is the
// thanos-querier Route's host ("" for a cluster without OpenShift's monitoring stack).
void seed_objects(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher,
                  const std::string& monitoring_host);

}  // namespace bootstorm::sim::kube
