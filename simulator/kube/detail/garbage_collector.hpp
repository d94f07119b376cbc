#pragma once
// Internal to bootstorm::sim_kube: deletion with what follows from it, as the garbage collector and the
// namespace controller carry it out — a VirtualMachine takes its VirtualMachineInstance, DataVolumes and PVCs
// (or orphans them), a VirtualMachineInstance powers its lab VM off, a DataVolume takes its PVC, and a
// Namespace terminates, empties and goes.
#include <string>

#include "simulator/kube/detail/api_result.hpp"
#include "simulator/kube/detail/cdi_controller.hpp"
#include "simulator/kube/detail/event_recorder.hpp"
#include "simulator/kube/detail/lifetime.hpp"
#include "simulator/kube/detail/object_publisher.hpp"
#include "simulator/kube/detail/vm_controller.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube {

// DeleteOptions.propagationPolicy: what happens to the objects the deleted one owns.
enum class Propagation { background, foreground, orphan };

class GarbageCollector {
 public:
  GarbageCollector(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher, EventRecorder& events,
                   const Lifetime& lifetime, VmController& vms, CdiController& cdi);

  // Deletes an object and, unless `propagation` is orphan, what it owns (a VM's VMI, DataVolumes and PVCs);
  // returns the object as last stored.
  ApiResult delete_object(Kind kind, const std::string& ns, const std::string& name,
                          Propagation propagation = Propagation::background);

 private:
  void terminate_namespace(const std::string& name);

  ObjectStore& store_;
  model::Lab& lab_;
  ObjectPublisher& publisher_;
  EventRecorder& events_;
  const Lifetime& lifetime_;
  VmController& vms_;
  CdiController& cdi_;
};

}  // namespace bootstorm::sim::kube
