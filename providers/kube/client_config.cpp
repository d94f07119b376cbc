#include "providers/kube/client_config.hpp"

#include <string>
#include <utility>

#include "common/log.hpp"
#include "protocol/http/types.hpp"

namespace bootstorm::kube {

Expected<KubeClientConfig> resolve_client_config(const api::ProviderConfig& config) {
  Expected<KubeClientConfig> resolved = [&]() -> Expected<KubeClientConfig> {
    if (config.endpoint == "kubeconfig" || config.endpoint.empty()) {
      return load_kubeconfig(kubeconfig_paths(config.kubeconfig), config.context, !config.kubeconfig.empty());
    }
    if (config.endpoint == "in-cluster") return load_in_cluster();
    auto url = http::parse_url(config.endpoint);
    if (!url || url->scheme != "https") {
      return make_error(
          ErrorKind::invalid_input,
          "platform endpoint \"" + config.endpoint + "\" is not kubeconfig, in-cluster or an https URL",
          "write endpoint: kubeconfig (with credentials.kubeconfig/context), in-cluster, or "
          "https://api.cluster:6443");
    }
    KubeClientConfig out;
    out.server = config.endpoint;
    out.auth.token = config.password;
    out.source = "API server " + config.endpoint;
    log::register_secret(out.auth.token);
    return out;
  }();
  if (!resolved) return resolved;
  KubeClientConfig out = std::move(resolved.value());
  if (!config.ca_data.empty()) {
    out.tls.ca_data = config.ca_data;
    out.tls.ca_file.clear();
  }
  if (!config.ca_file.empty()) {
    out.tls.ca_file = config.ca_file;
    if (config.ca_data.empty()) out.tls.ca_data.clear();
  }
  if (config.insecure_skip_verify) out.tls.insecure_skip_verify = true;
  return out;
}

}  // namespace bootstorm::kube
