#pragma once
// Internal to the Forklift controller: resolving what Forklift objects refer to — the providers of a map or
// plan, a plan's maps, the source VMs in the lab's vCenter inventory — and the names Forklift gives targets.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simulator/kube/detail/cluster_state.hpp"
#include "simulator/kube/detail/forklift_conditions.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/kube/resource_types.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube::forklift {

// The one vSphere network of the lab (what the vCenter front reports as every NIC's backing).
inline constexpr const char* kSourceNetworkId = "network-1";
inline constexpr const char* kSourceNetworkName = "VM Network";

// Forklift's ref.Ref.String(): "(type) id:<id> name:'<name>' ".
std::string ref_string(const json& ref);

// Forklift changes target names that are not DNS-1123 labels: lower case, invalid characters to '-'.
std::string dns1123_name(const std::string& name);

struct ProviderPair {
  ObjectPtr source, destination;
};
// The providers `spec.provider` of a map or plan names; the conditions of missing, unready or wrongly typed
// ones are appended to `conditions`.
ProviderPair validate_providers(const ClusterState& cluster, const json& object,
                                std::vector<Condition>& conditions);

// The map `spec.map.<which>` of a plan names; null when it names none or it does not exist.
ObjectPtr map_of(const ClusterState& cluster, const json& plan, const char* which, Kind kind);

// The vCenter VM a plan's vms[] entry refers to (by id, else by name); null when the inventory has none.
const model::Vm* find_source_vm(const model::Lab& lab, const json& ref);

}  // namespace bootstorm::sim::kube::forklift
