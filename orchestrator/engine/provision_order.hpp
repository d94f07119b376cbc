#pragma once
// The order in which the provision phase starts its clones. Platforms cap simultaneous clones per host
// (vCenter: 4 cost units' worth, providers/vsphere/clone_slots.hpp) as well as overall, and the phase starts
// at most maxConcurrent clones at once. Started in placement order, the first maxConcurrent clones all target
// the first host and wait on its cap while the other hosts clone nothing: 4 hosts cloned at a quarter of
// their rate. Taken round-robin over the hosts instead, every host's cap is in use from the start.
#include <cstddef>
#include <vector>

#include "providers/api/provider.hpp"

namespace bootstorm::engine {

// Indices into `specs`: one VM of each host in turn, hosts in the order they first appear, each host's VMs in
// their own order. A permutation of 0..specs.size()-1.
std::vector<std::size_t> provision_order(const std::vector<api::VmSpec>& specs);

}  // namespace bootstorm::engine
