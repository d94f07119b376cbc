// What the cluster is: Kubernetes' /version, virt-api's version subresource, the CDI resource's observed
// version, OpenShift's ClusterVersion, and each placement node's kubelet version and CPU model. Each answer
// that is missing (404: not installed or not OpenShift; 403: not readable by this user) leaves its fact
// empty.
#include <spdlog/spdlog.h>

#include "providers/kubevirt/detail/provider_impl.hpp"

namespace bootstorm::kubevirt::detail {
using boost::asio::awaitable;
using nlohmann::json;

namespace {

// KubeVirt's node labeller marks the CPU model the node's VMs get as host-model-cpu.node.kubevirt.io/<model>.
constexpr std::string_view kHostModelLabel = "host-model-cpu.node.kubevirt.io/";

}  // namespace

api::HostFacts ProviderImpl::node_facts(const std::string& host, const json& node) {
  api::HostFacts fact;
  fact.name = host;
  fact.version = text_at(node, {"status", "nodeInfo", "kubeletVersion"});
  if (const json* labels = json_at(node, {"metadata", "labels"}); labels && labels->is_object()) {
    for (const auto& [key, value] : labels->items()) {
      if (key.starts_with(kHostModelLabel) && value == "true") {
        fact.cpu_model = key.substr(kHostModelLabel.size());
        break;
      }
    }
  }
  return fact;
}

awaitable<void> ProviderImpl::learn_platform() {
  // Reads whose answer is a JSON object, or null when the cluster has nothing there for this user.
  auto read = [this](std::string path, std::string what) -> awaitable<json> {
    auto resp = co_await call("GET", path, {}, what);
    if (!resp) {
      spdlog::debug("{}: {}", what, resp.error().what());
      co_return json();
    }
    if (resp->status != 200) {
      spdlog::debug("{}: HTTP {}", what, resp->status);
      co_return json();
    }
    json doc = json::parse(resp->body, nullptr, false);
    co_return doc.is_object() ? doc : json();
  };
  facts_ = {};
  const json version = co_await read("/version", "reading the API server's version");
  if (!version.is_null()) {
    facts_.product = "Kubernetes";
    facts_.version = text_at(version, {"gitVersion"});
    facts_.build = text_at(version, {"gitCommit"});
    facts_.simulator = text_at(version, {"simulator"});
  }
  const json kubevirt =
      co_await read("/apis/subresources.kubevirt.io/v1/version", "reading KubeVirt's version (virt-api)");
  if (auto v = text_at(kubevirt, {"gitVersion"}); !v.empty()) facts_.components["KubeVirt"] = v;
  const json cdis =
      co_await read("/apis/cdi.kubevirt.io/v1beta1/cdis", "reading CDI's version (CDI resource)");
  if (cdis.is_object() && cdis.contains("items") && cdis["items"].is_array() && !cdis["items"].empty()) {
    if (auto v = text_at(cdis["items"][0], {"status", "observedVersion"}); !v.empty())
      facts_.components["CDI"] = v;
  }
  const json cluster_version = co_await read("/apis/config.openshift.io/v1/clusterversions/version",
                                             "reading OpenShift's ClusterVersion");
  if (auto v = text_at(cluster_version, {"status", "desired", "version"}); !v.empty())
    facts_.components["OpenShift"] = v;
}

}  // namespace bootstorm::kubevirt::detail
