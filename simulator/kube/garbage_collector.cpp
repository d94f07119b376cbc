// Deletion and its cascade: the garbage collector's owner references (background or orphan propagation), the
// VirtualMachine controller's reaction to a deleted VirtualMachine or VirtualMachineInstance, and the
// namespace controller's termination.
#include "simulator/kube/detail/garbage_collector.hpp"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <utility>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/api_conventions.hpp"
#include "simulator/kube/resource_types.hpp"

namespace bootstorm::sim::kube {

using json = nlohmann::json;

GarbageCollector::GarbageCollector(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher,
                                   EventRecorder& events, const Lifetime& lifetime, VmController& vms,
                                   CdiController& cdi)
    : store_(store),
      lab_(lab),
      publisher_(publisher),
      events_(events),
      lifetime_(lifetime),
      vms_(vms),
      cdi_(cdi) {}

ApiResult GarbageCollector::delete_object(Kind kind, const std::string& ns, const std::string& name,
                                          Propagation propagation) {
  auto current = store_.get(kind, ns, name);
  if (!current) return not_found(resource_type(kind), name);
  switch (kind) {
    case Kind::virtual_machines: {
      if (store_.get(Kind::virtual_machine_instances, ns, name)) {
        publisher_.remove(Kind::virtual_machine_instances, ns, name);
        events_.record(current->object, "Normal", "SuccessfulDelete",
                       "Stopped the virtual machine by deleting the virtual machine instance " +
                           std::string(current->object["metadata"].value("uid", "")),
                       "virtualmachine-controller");
      }
      vms_.release(ns, name);
      for (const auto& dv : store_.list(Kind::data_volumes, ns).items) {
        if (!owned_by(dv->object, current->object)) continue;
        std::string dv_name = dv->object["metadata"].value("name", "");
        if (propagation == Propagation::orphan) {
          // The garbage collector removes the owner's reference and leaves the dependents.
          const std::string owner_uid = current->object["metadata"].value("uid", "");
          auto drop_owner = [&](json& object) {
            json& refs = object["metadata"]["ownerReferences"];
            if (!refs.is_array()) return;
            json kept = json::array();
            for (const auto& ref : refs)
              if (ref.value("uid", "") != owner_uid) kept.push_back(ref);
            if (kept.empty()) {
              object["metadata"].erase("ownerReferences");
            } else {
              refs = std::move(kept);
            }
          };
          publisher_.modify(Kind::data_volumes, ns, dv_name, drop_owner);
          publisher_.modify(Kind::persistent_volume_claims, ns, dv_name, drop_owner);
          continue;
        }
        cdi_.forget(ns, dv_name);
        publisher_.remove(Kind::data_volumes, ns, dv_name);
        publisher_.remove(Kind::persistent_volume_claims, ns, dv_name);
      }
      return publisher_.remove(kind, ns, name);
    }
    case Kind::virtual_machine_instances: {
      const bool tracked = vms_.tracks(ns, name);
      vms_.power_off_deleted_vmi(ns, name);
      auto removed = publisher_.remove(kind, ns, name);
      if (tracked) vms_.reconcile(ns, name);
      return removed;
    }
    case Kind::data_volumes: {
      cdi_.forget(ns, name);
      publisher_.remove(Kind::persistent_volume_claims, ns, name);
      return publisher_.remove(kind, ns, name);
    }
    case Kind::namespaces: {
      terminate_namespace(name);
      return store_.get(kind, ns, name);
    }
    default: {
      if (kind == Kind::events) events_.forget(ns, name);
      auto removed = publisher_.remove(kind, ns, name);
      publisher_.after_delete(kind, ns, name);
      return removed;
    }
  }
}

void GarbageCollector::terminate_namespace(const std::string& name) {
  std::string ts = format_time(publisher_.now());
  publisher_.modify(Kind::namespaces, "", name, [&](json& ns) {
    if (!ns["metadata"].contains("deletionTimestamp")) ns["metadata"]["deletionTimestamp"] = ts;
    ns["status"]["phase"] = "Terminating";
  });
  // The namespace controller empties the namespace shortly after, then removes it.
  lab_.schedule(0.2, lifetime_.guard([this, name] {
    for (Kind kind : {Kind::virtual_machines, Kind::virtual_machine_instances, Kind::data_volumes}) {
      for (const auto& object : store_.list(kind, name).items) {
        (void)delete_object(kind, name, object->object["metadata"].value("name", ""));
      }
    }
    for (std::size_t i = 0; i < resource_types().size(); ++i) {
      Kind kind = static_cast<Kind>(i);
      if (!resource_types()[i].namespaced) continue;
      for (const auto& object : store_.list(kind, name).items) {
        (void)delete_object(kind, name, object->object["metadata"].value("name", ""));
      }
    }
    publisher_.remove(Kind::namespaces, "", name);
  }));
}

}  // namespace bootstorm::sim::kube
