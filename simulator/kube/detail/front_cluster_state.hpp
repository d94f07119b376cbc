#pragma once
// Internal to bootstorm::sim::kube: the Kubernetes front's state seen through the ClusterState interface.
#include <memory>

#include "simulator/kube/detail/cluster_state.hpp"
#include "simulator/kube/kube_front.hpp"

namespace bootstorm::sim::kube {

// `front` must outlive the returned object.
std::unique_ptr<ClusterState> make_front_cluster_state(KubeFront::Impl& front);

}  // namespace bootstorm::sim::kube
