#pragma once
// Storage telemetry from the cluster's Prometheus (OpenShift: Thanos Querier behind its Route): KubeVirt's
// per-VMI storage counters over the storm's window, read with the query API (POST /api/v1/query) and made
// into a TelemetryReport by storage_window.hpp.
//
// The endpoint is resolved on first use by the caller's resolver (the KubeVirt provider reads the Route with
// its Kubernetes client, or takes the plan's telemetry.endpoint), so that a cluster without a monitoring
// stack costs nothing until telemetry is asked for.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "protocol/http/tls.hpp"
#include "providers/api/telemetry.hpp"
#include "providers/prometheus/answer.hpp"

namespace bootstorm::http {
class Client;
}

namespace bootstorm::prometheus {

struct PrometheusEndpoint {
  std::string url;    // https://host[:port], no path
  std::string token;  // bearer token (a registered secret: never logged)
  http::TlsClientOptions tls;
  std::string found_by;  // for messages: "the thanos-querier Route in openshift-monitoring"
};

using EndpointResolver = std::function<boost::asio::awaitable<Expected<PrometheusEndpoint>>()>;

struct PrometheusSourceOptions {
  std::string namespace_;        // the VMIs' namespace
  std::optional<double> grid_s;  // telemetry.interval: per-node bins; unset: the scrape interval
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};  // per query
  // Each VMI's raw samples are read for scenarios of up to this many VMIs; beyond, one answer would carry
  // millions of samples, and the nodes' sums are read instead (storage_window.hpp).
  std::size_t per_vmi_limit = 2000;
};

class PrometheusStorageSource : public api::TelemetrySource {
 public:
  PrometheusStorageSource(boost::asio::any_io_executor executor, EndpointResolver resolver,
                          PrometheusSourceOptions options);
  ~PrometheusStorageSource() override;

  std::string name() const override { return "prometheus"; }
  // The scrape interval of KubeVirt's metrics target, from the spacing of its `up` samples.
  boost::asio::awaitable<Expected<double>> sample_step_s(const api::TelemetryRequest& request) override;
  boost::asio::awaitable<Expected<api::TelemetryReport>> collect(
      const api::TelemetryRequest& request) override;

 private:
  boost::asio::awaitable<Expected<void>> connect();
  // POST /api/v1/query at `time` (unset: now).
  boost::asio::awaitable<Expected<QueryAnswer>> query(const std::string& promql, std::optional<double> time,
                                                      const std::string& what);
  // POST /api/v1/query_range.
  boost::asio::awaitable<Expected<QueryAnswer>> query_range(const std::string& promql, double start,
                                                            double end, double step, const std::string& what);
  boost::asio::awaitable<Expected<QueryAnswer>> post(std::string target, std::string form,
                                                     const std::string& what);
  boost::asio::awaitable<Expected<api::TelemetryReport>> collect_node_sums(
      const api::TelemetryRequest& request);

  boost::asio::any_io_executor executor_;
  EndpointResolver resolver_;
  PrometheusSourceOptions options_;
  std::optional<PrometheusEndpoint> endpoint_;
  std::unique_ptr<http::Client> client_;
  std::optional<double> step_s_;
  std::optional<CancelSignal> cancel_;  // the request being served's
};

// What a refused or failed query means for the user (401, 403, 404, 5xx), naming the endpoint and how it was
// found. Exposed for tests.
Error query_refused(int status, const std::string& body, const PrometheusEndpoint& endpoint);

}  // namespace bootstorm::prometheus
