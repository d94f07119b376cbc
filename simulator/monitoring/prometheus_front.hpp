#pragma once
// The lab's Prometheus HTTP query API, on a listener of its own as OpenShift's thanos-querier is reached
// through its Route: GET or POST (form) /api/v1/query and /api/v1/query_range over KubeVirt's per-VMI storage
// counters (kubevirt_storage_series.hpp), and /api/v1/status/buildinfo.
//
// Authorization as the querier's proxy does it: a bearer token the Kubernetes front accepts, else 401; a
// token whose user may not `get namespaces` (kube.deny: "get core namespaces") gets 403. Front faults
// (latency, error_rate with error_status) apply here only when `faults.paths` names a path of this API
// explicitly, e.g.
// "/api/v1/query": an outage of the API server is not one of the monitoring stack.
//
// Threading: the handler runs on the lab's executor, like the other fronts.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "protocol/http/server.hpp"

namespace bootstorm::sim::model {
class Lab;
}

namespace bootstorm::sim::monitoring {

struct PrometheusFrontOptions {
  std::vector<std::string> tokens;  // accepted besides the lab profile's kube.token
};

class PrometheusFront {
 public:
  PrometheusFront(model::Lab& lab, PrometheusFrontOptions options = {});
  ~PrometheusFront();
  PrometheusFront(const PrometheusFront&) = delete;
  PrometheusFront& operator=(const PrometheusFront&) = delete;

  // The request handler; it refers to this front, which must outlive the server using it.
  http::Handler handler();
  // Requests answered, by outcome (GET /_lab/stats of the lab's fronts shows them).
  nlohmann::json stats() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace bootstorm::sim::monitoring
