// The plan checked against the cluster before anything is created: nodes, golden image, namespace.
#include <spdlog/spdlog.h>

#include "providers/kubevirt/detail/provider_impl.hpp"

namespace bootstorm::kubevirt::detail {
using boost::asio::awaitable;
using nlohmann::json;

awaitable<Expected<void>> ProviderImpl::check_inventory(const api::InventoryRequest& request) {
  const std::string& ns = config_.namespace_;
  // Nodes: every placement host must be a schedulable, Ready node.
  if (!request.hosts.empty()) {
    auto resp = co_await call("GET", "/api/v1/nodes", {}, "listing nodes");
    if (!resp) co_return resp.error();
    if (resp->status != 200) co_return kube::status_error(resp->status, resp->body, "listing nodes");
    json list = json::parse(resp->body, nullptr, false);
    std::map<std::string, const json*> by_host;
    std::string existing;
    if (list.is_object() && list.contains("items") && list["items"].is_array()) {
      for (const auto& node : list["items"]) {
        std::string name = name_of(node);
        std::string hostname = label_of(node, kHostnameLabel);
        by_host[hostname.empty() ? name : hostname] = &node;
        by_host.emplace(name, &node);
        existing += (existing.empty() ? "" : ", ") + (hostname.empty() ? name : hostname);
      }
    }
    for (const auto& host : request.hosts) {
      auto it = by_host.find(host);
      if (it == by_host.end()) {
        co_return make_error(
            ErrorKind::not_found,
            "node \"" + host + "\" named by the plan's placement does not exist in " + server_,
            "nodes (kubernetes.io/hostname): " + (existing.empty() ? "(none)" : existing));
      }
      const json& node = *it->second;
      if (node.contains("spec") && node["spec"].is_object() && node["spec"].value("unschedulable", false)) {
        co_return make_error(ErrorKind::invalid_input, "node \"" + host + "\" is cordoned (unschedulable)",
                             "uncordon it (kubectl uncordon " + host + ") or place the VMs elsewhere");
      }
      if (node.contains("status") && node["status"].is_object() && node["status"].contains("conditions") &&
          node["status"]["conditions"].is_array()) {
        for (const auto& c : node["status"]["conditions"]) {
          if (c.is_object() && c.value("type", "") == "Ready" && c.value("status", "") != "True") {
            co_return make_error(ErrorKind::invalid_input,
                                 "node \"" + host + "\" is not Ready (" + c.value("reason", "") + ": " +
                                     c.value("message", "") + ")",
                                 "fix the node or place the VMs elsewhere");
          }
        }
      }
    }
  }
  // Golden image.
  if (!config_.golden_datasource.empty()) {
    std::string dsns = config_.golden_datasource_namespace.empty() ? ns : config_.golden_datasource_namespace;
    std::string what = "reading DataSource " + dsns + "/" + config_.golden_datasource;
    auto resp = co_await call("GET", datasource_path(dsns, config_.golden_datasource), {}, what);
    if (!resp) co_return resp.error();
    if (resp->status == 404) {
      std::string names;
      auto all = co_await call("GET", "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + dsns + "/datasources", {},
                               "listing DataSources");
      if (all && all->status == 200) {
        json list = json::parse(all->body, nullptr, false);
        if (list.is_object() && list.contains("items") && list["items"].is_array()) {
          for (const auto& item : list["items"]) names += (names.empty() ? "" : ", ") + name_of(item);
        }
      }
      co_return make_error(ErrorKind::not_found,
                           "golden DataSource " + dsns + "/" + config_.golden_datasource + " does not exist",
                           "DataSources in " + dsns + ": " + (names.empty() ? "(none)" : names));
    }
    if (resp->status != 200) co_return kube::status_error(resp->status, resp->body, what);
    json ds = json::parse(resp->body, nullptr, false);
    if (ds.is_object() && ds.contains("status") && ds["status"].is_object() &&
        ds["status"].contains("conditions") && ds["status"]["conditions"].is_array()) {
      for (const auto& c : ds["status"]["conditions"]) {
        if (c.is_object() && c.value("type", "") == "Ready" && c.value("status", "") == "False") {
          co_return make_error(ErrorKind::invalid_input,
                               "golden DataSource " + dsns + "/" + config_.golden_datasource +
                                   " is not Ready (" + c.value("reason", "") + ": " + c.value("message", "") +
                                   ")",
                               "wait for its source PVC/snapshot to be ready");
        }
      }
    }
  } else if (!config_.golden_pvc.empty()) {
    std::string pns = ns, pname = config_.golden_pvc;
    if (auto slash = pname.find('/'); slash != std::string::npos) {
      pns = pname.substr(0, slash);
      pname = pname.substr(slash + 1);
    }
    std::string what = "reading PersistentVolumeClaim " + pns + "/" + pname;
    auto resp =
        co_await call("GET", "/api/v1/namespaces/" + pns + "/persistentvolumeclaims/" + pname, {}, what);
    if (!resp) co_return resp.error();
    if (resp->status == 404) {
      co_return make_error(ErrorKind::not_found, "golden PVC " + pns + "/" + pname + " does not exist",
                           "name an existing PVC as golden.pvc (namespace/name) or use golden.dataSource");
    }
    if (resp->status != 200) co_return kube::status_error(resp->status, resp->body, what);
  } else {
    co_return make_error(ErrorKind::invalid_input, "the plan names no golden image for KubeVirt",
                         "set golden.dataSource {name, namespace} or golden.pvc");
  }
  // The plan's namespace: created at the first provision when missing.
  auto resp = co_await call("GET", "/api/v1/namespaces/" + ns, {}, "reading namespace " + ns);
  if (!resp) co_return resp.error();
  namespace_missing_ = resp->status == 404;
  namespace_known_ = true;
  if (resp->status != 200 && resp->status != 404) {
    co_return kube::status_error(resp->status, resp->body, "reading namespace " + ns);
  }
  co_return Expected<void>();
}
}  // namespace bootstorm::kubevirt::detail
