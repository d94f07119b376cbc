#pragma once
// Internal to the Forklift controller: the validation reconcilers of Providers, NetworkMaps, StorageMaps and
// Plans. Each reads the object and what it refers to and writes its status conditions; none keeps state.
#include "simulator/kube/detail/cluster_state.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/kube/resource_types.hpp"

namespace bootstorm::sim::kube::forklift {

void reconcile_provider(ClusterState& cluster, const ObjectPtr& provider);
// `kind` is forklift_network_maps or forklift_storage_maps.
void reconcile_map(ClusterState& cluster, Kind kind, const ObjectPtr& map);
void reconcile_plan(ClusterState& cluster, const ObjectPtr& plan);

}  // namespace bootstorm::sim::kube::forklift
