#pragma once
// The lab simulator's Kubernetes API front: discovery, namespaces, nodes, events, KubeVirt VirtualMachine /
// VirtualMachineInstance with the start/stop/restart subresources, CDI DataVolume / DataSource, Forklift CRs
// (stored and served), list + watch with resourceVersion, selectors, bookmarks and 410 Gone, bearer-token and
// client-certificate auth, and the lab's test hooks (/_lab/faults, /_lab/truth, /_lab/stats).
//
// Threading: like the model, single-threaded. The handler must run on the lab's executor (the lab server
// runs the HTTP server and the lab on one executor), and the front must be destroyed before the Lab.
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "protocol/http/server.hpp"

namespace bootstorm::sim::model {
class Lab;
}

namespace bootstorm::sim::kube {

class ObjectStore;

struct KubeFrontOptions {
  // Accepted bearer tokens. The lab profile's kube.token is always accepted too. Requests with a verified
  // client certificate are authenticated as well.
  std::vector<std::string> tokens;
  // Watch resume window: events kept for `?watch=1&resourceVersion=RV`; older RVs get 410 Gone.
  std::size_t history_events = 20000;  // see ObjectStore::Options
  std::size_t history_events_per_object = 16;
  std::chrono::milliseconds history_age{0};  // 0: only the event count bounds the history
  // Interval of BOOKMARK events on watches that allow them.
  std::chrono::milliseconds bookmark_interval{std::chrono::seconds(30)};
  // Watch duration when the client gives no timeoutSeconds (the API server picks 30-60 min).
  std::chrono::seconds default_watch_timeout{1800};
  // Published in /api serverAddressByClientCIDRs.
  std::string server_address = "127.0.0.1:6443";
  // Lab-time interval of DataVolume progress updates while cloning.
  double progress_interval_s = 2.0;
  // Core v1 Events kept (oldest are deleted beyond this, like the API server's event TTL).
  std::size_t max_events = 10000;
  // Forklift: VMs migrated at once across all migrations (forklift-controller's controller_max_vm_inflight).
  std::size_t forklift_max_vm_inflight = 20;
  // The host of OpenShift's thanos-querier Route in openshift-monitoring: where the lab's Prometheus query
  // API listens ("127.0.0.1:<port>": unlike a real Route's, it carries the listener's port). Empty: no Route,
  // as on a cluster without OpenShift's monitoring stack.
  std::string monitoring_route_host;
};

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
