#pragma once
// LabAttach: the lab as a Kubernetes cluster's KubeVirt and CDI controllers, acting through that cluster's
// API server (`bootstorm lab attach`). It is a LabServer (the model, its fronts, /_lab/truth and the rest)
// whose Kubernetes front's controllers are kept in step with the server by a ClusterSync: the lab's Nodes,
// StorageClasses, golden PVCs and DataSources, and its KubeVirt and CDI CRs appear there, and every
// VirtualMachine and DataVolume a client makes there is cloned, scheduled and booted by the model.
#include <chrono>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/expected.hpp"
#include "simulator/attach/cluster_sync.hpp"
#include "simulator/lab/lab_server.hpp"

namespace bootstorm::sim::attach {

struct LabAttachOptions {
  std::string lab = "small";           // lab profile: name or path
  std::optional<model::LabSpec> spec;  // when set, used instead of loading `lab`
  std::optional<std::uint64_t> seed;
  std::string kubeconfig;  // the cluster to act through ("" : $KUBECONFIG, then ~/.kube/config)
  std::string context;     // "" : the current context
  ClusterSyncOptions sync;
};

class LabAttach {
 public:
  // Loads the kubeconfig and the profile and starts the lab; the sync then connects and seeds on the lab's
  // thread (wait_ready()). Errors: kubeconfig, profile, binding the lab's own listeners.
  static Expected<std::unique_ptr<LabAttach>> start(LabAttachOptions options);
  ~LabAttach();
  LabAttach(const LabAttach&) = delete;
  LabAttach& operator=(const LabAttach&) = delete;

  // Waits until the server is seeded and every watched kind listed; the reason when that cannot be.
  Expected<void> wait_ready(std::chrono::steady_clock::duration timeout);
  // The sync's counters ({"server", "creates", "updates", ...}).
  nlohmann::json stats();
  const std::string& server() const { return server_; }
  LabServer& lab() { return *lab_; }
  // Takes virt-api's APIService off the server, then stops the lab (idempotent).
  void stop();

 private:
  LabAttach() = default;
  std::string server_;
  std::unique_ptr<LabServer> lab_;
  std::shared_ptr<ClusterSync> sync_;
  std::shared_future<Expected<void>> ready_;
  bool stopped_ = false;
};

}  // namespace bootstorm::sim::attach
