#pragma once
// Internal to bootstorm::sim_kube: virt-api's start, stop and restart subresources of a VirtualMachine
// (PUT /apis/subresources.kubevirt.io/v1/namespaces/NS/virtualmachines/NAME/ACTION), with the conflicts
// virt-api answers for each run strategy. Separate from the REST verbs because they are requests to the
// VirtualMachine controller, not writes of an object.
#include "protocol/http/server.hpp"
#include "simulator/kube/detail/object_publisher.hpp"
#include "simulator/kube/detail/vm_controller.hpp"
#include "simulator/kube/object_store.hpp"

namespace bootstorm::sim::kube {

struct Route;

class VmSubresources {
 public:
  VmSubresources(ObjectStore& store, ObjectPublisher& publisher, VmController& vms);

  // Answers the request for route.subresource ("start", "stop" or "restart") of VirtualMachine
  // route.ns/route.name: 202 Accepted, or the error.
  http::ServerResponse handle(const Route& route, const http::ServerRequest& request);

 private:
  ObjectStore& store_;
  ObjectPublisher& publisher_;
  VmController& vms_;
};

}  // namespace bootstorm::sim::kube
