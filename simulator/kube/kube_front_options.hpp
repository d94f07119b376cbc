#pragma once
// How the lab's Kubernetes front behaves (kube_front.hpp): its tokens, watch history and bookmarks, events,
// DataVolume progress, Forklift's inflight limit, the monitoring Route. A header of its own, so that the
// controllers that read it need not include the front.
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace bootstorm::sim::kube {

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

}  // namespace bootstorm::sim::kube
