// The NetworkMap and StorageMap reconciler: validates the providers and each entry's source (the lab's one
// vSphere network, its datastores) and destination (pod/multus networks, the lab's storage classes) as
// forklift-controller does (pkg/controller/map/validation.go), and records the resolved source references.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/forklift_conditions.hpp"
#include "simulator/kube/detail/forklift_reconcilers.hpp"
#include "simulator/kube/detail/forklift_references.hpp"

namespace bootstorm::sim::kube::forklift {
namespace {

bool known_storage_class(const model::Lab& lab, const std::string& name) {
  if (name == lab.spec().kube.storage_class) return true;
  for (const auto& image : lab.golden_images()) {
    if (image.spec.storage_class == name) return true;
  }
  return false;
}

}  // namespace

void reconcile_map(ClusterState& cluster, Kind kind, const ObjectPtr& map) {
  const bool network = kind == Kind::forklift_network_maps;
  const json& o = map->object;
  std::vector<Condition> conditions;
  validate_providers(cluster, o, conditions);
  json references = json::array();
  if (!has_condition(conditions, "SourceProviderNotValid") &&
      !has_condition(conditions, "SourceProviderNotReady")) {
    const char* noun = network ? "Network" : "Storage";
    Condition not_set{fmt::format("Source{}NotValid", noun), "NotSet", "Critical",
                      fmt::format("Source {} (reference) not valid.", network ? "network" : "storage")};
    Condition not_found{fmt::format("Source{}NotValid", noun), "NotFound", "Critical",
                        fmt::format("Source {} not found.", network ? "network" : "storage")};
    Condition dest{fmt::format("Destination{}NotValid", noun), "NotFound", "Critical",
                   fmt::format("Destination {} not valid.", network ? "network" : "storage")};
    const json& entries = field(o, {"spec", "map"});
    if (entries.is_array()) {
      for (const auto& entry : entries) {
        const json& source = field(entry, {"source"});
        std::string id = string_field(source, {"id"});
        std::string name = string_field(source, {"name"});
        if (id.empty() && name.empty()) {
          if (!has_condition(conditions, not_set.type)) conditions.push_back(not_set);
          continue;
        }
        if (network) {
          if ((id.empty() || id == kSourceNetworkId) && (name.empty() || name == kSourceNetworkName)) {
            references.push_back({{"id", kSourceNetworkId}, {"name", kSourceNetworkName}});
          } else {
            not_found.items.push_back(ref_string(source));
          }
          std::string type = string_field(entry, {"destination", "type"});
          if (type == "multus" && string_field(entry, {"destination", "name"}).empty()) {
            dest.reason = "NotSet";
            dest.items.push_back(ref_string(source));
          } else if (type != "pod" && type != "multus" && type != "ignored") {
            dest.reason = "NotValid";
            dest.items.push_back(ref_string(source));
          }
        } else {
          const model::Datastore* ds = cluster.lab().find_datastore(id.empty() ? name : id);
          if (ds && !name.empty() && ds->spec.name != name) ds = nullptr;
          if (ds) {
            references.push_back({{"id", ds->id}, {"name", ds->spec.name}});
          } else {
            not_found.items.push_back(ref_string(source));
          }
          std::string storage_class = string_field(entry, {"destination", "storageClass"});
          if (!known_storage_class(cluster.lab(), storage_class)) dest.items.push_back(storage_class);
        }
      }
    }
    if (!not_found.items.empty()) conditions.push_back(not_found);
    if (!dest.items.empty()) conditions.push_back(dest);
  }
  if (!any_blocker(conditions)) conditions.push_back({"Ready", "", "Required", "The map is ready."});
  write_conditions(cluster, kind, map, conditions, [&](json& status) {
    if (references.empty()) {
      status.erase("references");
    } else {
      status["references"] = references;
    }
  });
}

}  // namespace bootstorm::sim::kube::forklift
