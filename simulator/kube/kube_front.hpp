#pragma once
// The lab simulator's Kubernetes API front: discovery, namespaces, nodes, events, KubeVirt VirtualMachine /
// VirtualMachineInstance with the start/stop/restart subresources, CDI DataVolume / DataSource, Forklift CRs
// (stored and served), list + watch with resourceVersion, selectors, bookmarks and 410 Gone, bearer-token and
// client-certificate auth, and the lab's test hooks (/_lab/faults, /_lab/truth, /_lab/stats).
//
// Threading: like the model, single-threaded. The handler must run on the lab's executor (the lab server
// runs the HTTP server and the lab on one executor), and the front must be destroyed before the Lab.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "protocol/http/server.hpp"
#include "simulator/kube/kube_front_options.hpp"

namespace bootstorm::sim::model {
class Lab;
}

namespace bootstorm::sim::kube {

class ObjectStore;

class KubeFront {
 public:
  KubeFront(model::Lab& lab, KubeFrontOptions options = {});
  ~KubeFront();
  KubeFront(const KubeFront&) = delete;
  KubeFront& operator=(const KubeFront&) = delete;

  // The request handler; it refers to this front, which must outlive the server using it.
  http::Handler handler();

  // Request counters and watch figures, as served by GET /_lab/stats.
  nlohmann::json stats() const;
  ObjectStore& store();

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// Handler factory for the lab server's hook (`std::function<http::Handler(model::Lab&)>`): the returned
// handler owns its front.
http::Handler make_kube_handler(model::Lab& lab, KubeFrontOptions options = {});

}  // namespace bootstorm::sim::kube
