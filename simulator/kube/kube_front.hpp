#pragma once
// The lab simulator's Kubernetes API front: discovery, namespaces, nodes, events, KubeVirt VirtualMachine /
// VirtualMachineInstance with the start/stop/restart subresources, CDI DataVolume / DataSource, Forklift CRs
// (stored and served), list + watch with resourceVersion, selectors, bookmarks and 410 Gone, bearer-token and
// client-certificate auth, and the lab's test hooks (/_lab/faults, /_lab/truth, /_lab/stats).
//
// Threading: like the model, single-threaded. The handler must run on the lab's executor (the lab server
// runs the HTTP server and the lab on one executor), and the front must be destroyed before the Lab.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/http/server.hpp"
#include "simulator/kube/kube_front_options.hpp"
#include "simulator/kube/resource_types.hpp"
#include "simulator/model/lab_state.hpp"

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

  // ---- Clients of another server (lab attach, simulator/attach) ----
  // When the cluster's state lives in another API server, its clients' changes reach the controllers here
  // through these calls rather than through handler(). Each object is as that server stores it; its identity
  // (uid, creationTimestamp) is kept, and the controllers react as to the same request sent to this front.
  // A created or updated object the lab's admission refuses: why (a webhook would have refused it).
  std::optional<std::string> client_created(Kind kind, nlohmann::json object);
  std::optional<std::string> client_updated(Kind kind, nlohmann::json object);
  // Deletes as the garbage collector would, with background propagation; nothing when already gone. With
  // `orphan_dependants` (the client asked for the Orphan propagation: the server's object carries the
  // finalizer "orphan"), what it owns stays, without the owner reference.
  void client_deleted(Kind kind, const std::string& ns, const std::string& name,
                      bool orphan_dependants = false);
  // Copies (or removes) an object of a kind that no controller here acts on (namespaces, secrets, storage
  // classes), so that the controllers that read it find it.
  void mirrored(Kind kind, nlohmann::json object);
  void mirror_removed(Kind kind, const std::string& ns, const std::string& name);
  // The lab milestones carried by these resourceVersions of this front's VirtualMachineInstances that no
  // watch here has delivered: (lab VM id, milestone), each taken once.
  std::vector<std::pair<std::string, model::Milestone>> take_milestones(
      const std::vector<std::uint64_t>& resource_versions);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// Handler factory for the lab server's hook (`std::function<http::Handler(model::Lab&)>`): the returned
// handler owns its front.
http::Handler make_kube_handler(model::Lab& lab, KubeFrontOptions options = {});

}  // namespace bootstorm::sim::kube
