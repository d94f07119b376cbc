// What the cluster is: Kubernetes' /version, virt-api's version subresource, the CDI resource's observed
// version, OpenShift's ClusterVersion, the clones' storage class with how CDI will clone into it, and each
// placement node's kubelet version and CPU model. Each answer
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

awaitable<json> ProviderImpl::read_object(std::string path, std::string what) {
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
}

awaitable<void> ProviderImpl::learn_platform() {
  facts_ = {};
  const json version = co_await read_object("/version", "reading the API server's version");
  if (!version.is_null()) {
    facts_.product = "Kubernetes";
    facts_.version = text_at(version, {"gitVersion"});
    facts_.build = text_at(version, {"gitCommit"});
    facts_.simulator = text_at(version, {"simulator"});
  }
  const json kubevirt = co_await read_object("/apis/subresources.kubevirt.io/v1/version",
                                             "reading KubeVirt's version (virt-api)");
  if (auto v = text_at(kubevirt, {"gitVersion"}); !v.empty()) facts_.components["KubeVirt"] = v;
  // A real API server with the lab attached as KubeVirt's controllers: the lab's virt-api says it.
  if (facts_.simulator.empty()) facts_.simulator = text_at(kubevirt, {"simulator"});
  const json cdis =
      co_await read_object("/apis/cdi.kubevirt.io/v1beta1/cdis", "reading CDI's version (CDI resource)");
  if (cdis.is_object() && cdis.contains("items") && cdis["items"].is_array() && !cdis["items"].empty()) {
    if (auto v = text_at(cdis["items"][0], {"status", "observedVersion"}); !v.empty())
      facts_.components["CDI"] = v;
  }
  const json cluster_version = co_await read_object("/apis/config.openshift.io/v1/clusterversions/version",
                                                    "reading OpenShift's ClusterVersion");
  if (auto v = text_at(cluster_version, {"status", "desired", "version"}); !v.empty())
    facts_.components["OpenShift"] = v;
  co_await learn_storage();
}

awaitable<void> ProviderImpl::learn_storage() {
  // The golden volume: a DataSource's PVC, or the plan's PVC.
  std::string pvc_ns = settings_.namespace_, pvc_name = settings_.pvc;
  if (!settings_.datasource_name.empty()) {
    const std::string dsns =
        settings_.datasource_namespace.empty() ? settings_.namespace_ : settings_.datasource_namespace;
    const json ds = co_await read_object(datasource_path(dsns, settings_.datasource_name),
                                         "reading the golden DataSource");
    pvc_ns = text_at(ds, {"spec", "source", "pvc", "namespace"});
    if (pvc_ns.empty()) pvc_ns = dsns;
    pvc_name = text_at(ds, {"spec", "source", "pvc", "name"});
  } else if (auto slash = pvc_name.find('/'); slash != std::string::npos) {
    pvc_ns = pvc_name.substr(0, slash);
    pvc_name = pvc_name.substr(slash + 1);
  }
  std::string source_class;
  if (!pvc_name.empty()) {
    const json pvc = co_await read_object(
        "/api/v1/namespaces/" + pvc_ns + "/persistentvolumeclaims/" + pvc_name, "reading the golden PVC");
    source_class = text_at(pvc, {"spec", "storageClassName"});
    golden_size_ = text_at(pvc, {"status", "capacity", "storage"});
    if (golden_size_.empty()) golden_size_ = text_at(pvc, {"spec", "resources", "requests", "storage"});
  }
  const json classes =
      co_await read_object("/apis/storage.k8s.io/v1/storageclasses", "listing StorageClasses");
  clone_forecast_ = forecast_clone(classes, json(), json(), source_class);
  if (!clone_forecast_.storage_class.empty()) {
    const json profile =
        co_await read_object("/apis/cdi.kubevirt.io/v1beta1/storageprofiles/" + clone_forecast_.storage_class,
                             "reading the StorageProfile of " + clone_forecast_.storage_class);
    const json snapshot_classes = co_await read_object(
        "/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses", "listing VolumeSnapshotClasses");
    clone_forecast_ = forecast_clone(classes, profile, snapshot_classes, source_class);
  }
  facts_.storage_class = clone_forecast_.storage_class;
  facts_.provisioner = clone_forecast_.provisioner;
  facts_.clone_method = clone_forecast_.method;
}

}  // namespace bootstorm::kubevirt::detail
