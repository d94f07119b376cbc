// The Plan reconciler: validates the providers, the target namespace, the maps and each VM of the plan
// (found in the lab's vCenter inventory, unique, not already on the target, networks and storage mapped) as
// forklift-controller does (pkg/controller/plan/validation.go). The conditions of a running migration stay.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/forklift_conditions.hpp"
#include "simulator/kube/detail/forklift_reconcilers.hpp"
#include "simulator/kube/detail/forklift_references.hpp"

namespace bootstorm::sim::kube::forklift {
namespace {

bool map_references(const json& map, const std::string& id) {
  const json& refs = field(map, {"status", "references"});
  if (!refs.is_array()) return false;
  return std::any_of(refs.begin(), refs.end(), [&](const json& r) { return r.value("id", "") == id; });
}

void validate_plan_vms(ClusterState& cluster, const json& o, std::vector<Condition>& conditions) {
  Condition not_found{"VMNotFound", "NotFound", "Critical", "VM not found."};
  Condition duplicate{"DuplicateVM", "NotUnique", "Critical", "Duplicate (source) VM."};
  Condition name_not_valid{"TargetNameNotValid", "NotValid", "Warn",
                           "Target VM name does not comply with DNS1123 RFC, will be automatically changed."};
  Condition exists{"VMAlreadyExists", "NotUnique", "Critical", "Target VM already exists."};
  Condition networks{"VMNetworksNotMapped", "NotValid", "Critical", "VM has unmapped networks."};
  Condition storage{"VMStorageNotMapped", "NotValid", "Critical", "VM has unmapped storage."};
  Condition cbt{
      "VMMissingChangedBlockTracking", "MissingChangedBlockTracking", "Critical",
      "Changed Block Tracking (CBT) has not been enabled on some VM. This feature is a prerequisite for VM "
      "warm migration."};
  const bool warm = field(o, {"spec", "warm"}) == json(true) || string_field(o, {"spec", "type"}) == "warm";
  auto network_map = map_of(cluster, o, "network", Kind::forklift_network_maps);
  auto storage_map = map_of(cluster, o, "storage", Kind::forklift_storage_maps);
  std::string target_ns = string_field(o, {"spec", "targetNamespace"});
  std::set<std::string> migrated;
  const json& migrated_vms = field(o, {"status", "migration", "vms"});
  if (migrated_vms.is_array()) {
    for (const auto& vm : migrated_vms) migrated.insert(vm.value("id", ""));
  }
  std::set<std::string> seen;
  const json& vms = field(o, {"spec", "vms"});
  if (!vms.is_array()) return;
  for (const auto& ref : vms) {
    if (ref.value("id", "").empty() && ref.value("name", "").empty()) {
      if (!has_condition(conditions, "VMRefNotValid")) {
        conditions.push_back({"VMRefNotValid", "NotSet", "Critical", "Either `ID` or `Name` required."});
      }
      continue;
    }
    const model::Vm* vm = find_source_vm(cluster.lab(), ref);
    std::string label = ref_string(ref);
    if (!vm) {
      not_found.items.push_back(label);
      continue;
    }
    if (!seen.insert(vm->id).second) duplicate.items.push_back(label);
    std::string target = ref.value("targetName", "");
    if (target.empty()) {
      target = vm->name;
      if (!valid_dns_label(target)) name_not_valid.items.push_back(label);
      target = dns1123_name(target);
    }
    if (!target_ns.empty() && cluster.get(Kind::virtual_machines, target_ns, target) &&
        !migrated.count(vm->id)) {
      exists.items.push_back(label);
    }
    if (network_map && !map_references(network_map->object, kSourceNetworkId))
      networks.items.push_back(label);
    if (storage_map && !map_references(storage_map->object, vm->datastore_id)) storage.items.push_back(label);
    if (warm) cbt.items.push_back(label);
  }
  for (Condition* c : {&not_found, &duplicate, &exists, &name_not_valid, &networks, &storage, &cbt}) {
    if (!c->items.empty()) conditions.push_back(*c);
  }
}

}  // namespace

void reconcile_plan(ClusterState& cluster, const ObjectPtr& plan) {
  const json& o = plan->object;
  std::vector<Condition> conditions;
  validate_providers(cluster, o, conditions);
  const bool executing = condition_true(o, "Executing");
  if (!has_condition(conditions, "SourceProviderNotReady")) {
    std::string target_ns = string_field(o, {"spec", "targetNamespace"});
    if (target_ns.empty()) {
      conditions.push_back({"NamespaceNotValid", "NotSet", "Critical", "Target namespace is not valid."});
    } else if (!valid_dns_label(target_ns)) {
      conditions.push_back({"NamespaceNotValid", "NotValid", "Critical", "Target namespace is not valid."});
    }
    struct MapCheck {
      const char* which;
      Kind kind;
      const char* ref_type;
      const char* not_ready_type;
      const char* label;
    };
    for (const MapCheck& check : {MapCheck{"network", Kind::forklift_network_maps, "NetworkMapRefNotValid",
                                           "NetworkMapNotReady", "Network"},
                                  MapCheck{"storage", Kind::forklift_storage_maps, "StorageRefNotValid",
                                           "StorageMapNotReady", "Storage"}}) {
      Condition ref_cond{check.ref_type, "NotSet", "Critical",
                         fmt::format("Map.{} is not valid.", check.label)};
      if (string_field(o, {"spec", "map", check.which, "name"}).empty()) {
        conditions.push_back(ref_cond);
      } else if (auto map = map_of(cluster, o, check.which, check.kind); !map) {
        ref_cond.reason = "NotFound";
        conditions.push_back(ref_cond);
      } else if (!condition_true(map->object, "Ready")) {
        conditions.push_back({check.not_ready_type, "", "Critical",
                              fmt::format("Map.{} does not have Ready condition.", check.label)});
      }
    }
    if (!executing) validate_plan_vms(cluster, o, conditions);
  }
  if (!any_blocker(conditions))
    conditions.push_back({"Ready", "", "Required", "The migration plan is ready."});
  // The execution conditions belong to the running migration; keep them as they are.
  const json& old = field(o, {"status", "conditions"});
  if (old.is_array()) {
    for (const auto& c : old) {
      std::string type = c.value("type", "");
      if (!execution_condition(type)) continue;
      Condition kept{type, c.value("reason", ""), c.value("category", "Advisory"), c.value("message", "")};
      kept.durable = c.value("durable", false);
      kept.status = c.value("status", "True");
      conditions.push_back(std::move(kept));
    }
  }
  write_conditions(cluster, Kind::forklift_plans, plan, conditions);
}

}  // namespace bootstorm::sim::kube::forklift
