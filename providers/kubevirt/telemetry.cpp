// Storage telemetry on KubeVirt: the cluster's Prometheus, found through OpenShift's thanos-querier Route in
// openshift-monitoring (or the plan's telemetry.endpoint), read with the kubeconfig's bearer token (or the
// plan's telemetry.tokenFile).
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "common/log.hpp"
#include "protocol/kube/object_calls.hpp"
#include "providers/kube/client_config.hpp"
#include "providers/kubevirt/detail/provider_impl.hpp"
#include "providers/prometheus/prometheus_source.hpp"

namespace bootstorm::kubevirt::detail {

namespace asio = boost::asio;

namespace {

constexpr const char* kRoutePath =
    "/apis/route.openshift.io/v1/namespaces/openshift-monitoring/routes/thanos-querier";

Expected<std::string> read_token(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) {
    return make_error(ErrorKind::invalid_input, fmt::format("Cannot read {} {}.", what, path),
                      "Check the path and its permissions.");
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) return make_error(ErrorKind::invalid_input, fmt::format("{} {} is empty.", what, path));
  log::register_secret(token);
  return token;
}

}  // namespace

Expected<std::unique_ptr<api::TelemetrySource>> ProviderImpl::telemetry_source(
    const api::TelemetrySettings& settings) {
  if (settings.source == "none") return make_error(ErrorKind::invalid_input, "telemetry.source is none.");
  if (settings.source == "vsphere-perf") {
    return make_error(
        ErrorKind::invalid_input,
        "telemetry.source vsphere-perf is vCenter's PerformanceManager, which a KubeVirt platform "
        "does not have.",
        "Use telemetry.source prometheus (or auto).");
  }
  auto resolver = [this, settings]() -> asio::awaitable<Expected<prometheus::PrometheusEndpoint>> {
    auto client = kube::resolve_client_config(config_);
    if (!client) co_return client.error();
    prometheus::PrometheusEndpoint endpoint;
    // The kubeconfig's trust, without its client certificate: the querier takes bearer tokens only.
    endpoint.tls = client->tls;
    endpoint.tls.client_cert_file.clear();
    endpoint.tls.client_cert_data.clear();
    endpoint.tls.client_key_file.clear();
    endpoint.tls.client_key_data.clear();
    endpoint.tls.server_name.clear();
    if (!settings.ca_file.empty()) {
      endpoint.tls.ca_file = settings.ca_file;
      endpoint.tls.ca_data.clear();
    }
    if (!settings.token_file.empty()) {
      auto token = read_token(settings.token_file, "telemetry.tokenFile");
      if (!token) co_return token.error();
      endpoint.token = std::move(*token);
    } else if (!client->auth.token.empty()) {
      endpoint.token = client->auth.token;
    } else if (!client->auth.token_file.empty()) {
      auto token = read_token(client->auth.token_file, "the kubeconfig's token file");
      if (!token) co_return token.error();
      endpoint.token = std::move(*token);
    } else {
      co_return make_error(
          ErrorKind::auth,
          fmt::format("{} authenticates without a bearer token (a client certificate or an exec "
                      "plugin), and the monitoring query API takes only bearer tokens.",
                      client->source),
          "Set telemetry.tokenFile to a file holding a token (oc whoami -t > token).");
    }
    if (!settings.endpoint.empty()) {
      endpoint.url = settings.endpoint;
      while (endpoint.url.ends_with("/")) endpoint.url.pop_back();
      endpoint.found_by = "telemetry.endpoint";
      co_return endpoint;
    }
    auto route = co_await kube::get_object(*api_, kRoutePath, "reading the thanos-querier Route");
    if (!route) {
      Error error = route.error();
      // No route.openshift.io group: not OpenShift.
      if (error.kind != ErrorKind::not_found) co_return error;
    }
    const bool found = route && route->has_value() && (**route).contains("spec") &&
                       (**route)["spec"].is_object() && (**route)["spec"].contains("host") &&
                       (**route)["spec"]["host"].is_string();
    if (!found) {
      co_return make_error(
          ErrorKind::not_found,
          fmt::format("The cluster at {} has no thanos-querier Route in openshift-monitoring "
                      "(not OpenShift, or its monitoring stack is not installed).",
                      api_->server()),
          "Set telemetry.endpoint to the Prometheus query API's URL (and telemetry.tokenFile).");
    }
    endpoint.url = "https://" + (**route)["spec"]["host"].get<std::string>();
    endpoint.found_by = "the thanos-querier Route in openshift-monitoring";
    co_return endpoint;
  };
  prometheus::PrometheusSourceOptions options;
  options.namespace_ = settings_.namespace_;
  options.grid_s = settings.interval_s;
  options.timeout = config_.request_timeout;
  return std::unique_ptr<api::TelemetrySource>(std::make_unique<prometheus::PrometheusStorageSource>(
      executor_, std::move(resolver), std::move(options)));
}

}  // namespace bootstorm::kubevirt::detail
