// The plan checked against the cluster before anything is created: the placement nodes (Ready, schedulable,
// memory for their share of the VMs), the golden image, the namespace. Each is one check of `bootstorm check`
// (preflight.cpp); check_inventory() asks them in turn and stops at the first that fails.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>

#include "common/quantity.hpp"
#include "providers/kubevirt/detail/provider_impl.hpp"

namespace bootstorm::kubevirt::detail {
using boost::asio::awaitable;
using nlohmann::json;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

}  // namespace

awaitable<Expected<api::CheckResult>> ProviderImpl::check_nodes(
    const std::vector<std::string>& hosts, const std::map<std::string, int>& vms_per_host) {
  if (hosts.empty()) co_return api::check_result("nodes", api::CheckStatus::pass, "the plan places no VM");
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
  // What each VM asks the scheduler for (the VM's memory request; virt-launcher's own overhead comes on top).
  const double vm_bytes = parse_quantity(VmBuild{}.memory).value_or(0);
  std::string fullest;
  double fullest_share = -1;
  facts_.hosts.clear();
  for (const auto& host : hosts) {
    auto it = by_host.find(host);
    if (it == by_host.end()) {
      co_return make_error(ErrorKind::not_found,
                           "node \"" + host + "\" named by the plan's placement does not exist in " + server_,
                           "nodes (kubernetes.io/hostname): " + (existing.empty() ? "(none)" : existing));
    }
    const json& node = *it->second;
    facts_.hosts.push_back(node_facts(host, node));
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
    auto share = vms_per_host.find(host);
    if (share == vms_per_host.end() || vm_bytes <= 0) continue;
    const auto allocatable = parse_quantity(text_at(node, {"status", "allocatable", "memory"}));
    if (!allocatable || *allocatable <= 0) continue;
    const double requested = share->second * vm_bytes;
    if (requested > *allocatable) {
      const int fit = static_cast<int>(std::floor(*allocatable / vm_bytes));
      co_return make_error(
          ErrorKind::invalid_input,
          fmt::format(
              "node \"{}\" cannot hold its share of the placement: {} VMs x {} = {:.0f} GiB of memory "
              "requested, {:.0f} GiB allocatable",
              host, share->second, VmBuild{}.memory, requested / kGiB, *allocatable / kGiB),
          fmt::format(
              "place at most {} VMs on {} (its pods' own requests come on top), or spread the scenario "
              "over more nodes",
              fit, host));
    }
    if (requested / *allocatable > fullest_share) {
      fullest_share = requested / *allocatable;
      fullest = fmt::format("; the fullest, {}, gets {:.0f} of {:.0f} GiB allocatable memory", host,
                            requested / kGiB, *allocatable / kGiB);
    }
  }
  co_return api::check_result(
      "nodes", api::CheckStatus::pass,
      fmt::format("{} node{} Ready and schedulable{}", hosts.size(), hosts.size() == 1 ? "" : "s", fullest));
}

awaitable<Expected<api::CheckResult>> ProviderImpl::check_golden() {
  const std::string& ns = settings_.namespace_;
  if (!settings_.datasource_name.empty()) {
    std::string dsns = settings_.datasource_namespace.empty() ? ns : settings_.datasource_namespace;
    std::string what = "reading DataSource " + dsns + "/" + settings_.datasource_name;
    auto resp = co_await call("GET", datasource_path(dsns, settings_.datasource_name), {}, what);
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
                           "golden DataSource " + dsns + "/" + settings_.datasource_name + " does not exist",
                           "DataSources in " + dsns + ": " + (names.empty() ? "(none)" : names));
    }
    if (resp->status != 200) co_return kube::status_error(resp->status, resp->body, what);
    json ds = json::parse(resp->body, nullptr, false);
    if (ds.is_object() && ds.contains("status") && ds["status"].is_object() &&
        ds["status"].contains("conditions") && ds["status"]["conditions"].is_array()) {
      for (const auto& c : ds["status"]["conditions"]) {
        if (c.is_object() && c.value("type", "") == "Ready" && c.value("status", "") == "False") {
          co_return make_error(ErrorKind::invalid_input,
                               "golden DataSource " + dsns + "/" + settings_.datasource_name +
                                   " is not Ready (" + c.value("reason", "") + ": " + c.value("message", "") +
                                   ")",
                               "wait for its source PVC/snapshot to be ready");
        }
      }
    }
    co_return api::check_result("golden image", api::CheckStatus::pass,
                                "DataSource " + dsns + "/" + settings_.datasource_name + " is Ready");
  }
  if (!settings_.pvc.empty()) {
    std::string pns = ns, pname = settings_.pvc;
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
    co_return api::check_result("golden image", api::CheckStatus::pass,
                                "PVC " + pns + "/" + pname + " exists");
  }
  co_return make_error(ErrorKind::invalid_input, "the plan names no golden image for KubeVirt",
                       "set golden.dataSource {name, namespace} or golden.pvc");
}

awaitable<Expected<api::CheckResult>> ProviderImpl::check_namespace() {
  const std::string& ns = settings_.namespace_;
  auto resp = co_await call("GET", "/api/v1/namespaces/" + ns, {}, "reading namespace " + ns);
  if (!resp) co_return resp.error();
  if (resp->status != 200 && resp->status != 404)
    co_return kube::status_error(resp->status, resp->body, "reading namespace " + ns);
  namespace_missing_ = resp->status == 404;
  namespace_known_ = true;
  co_return api::check_result("namespace", api::CheckStatus::pass,
                              namespace_missing_ ? "namespace " + ns + " does not exist: the run creates it"
                                                 : "namespace " + ns + " exists");
}

awaitable<Expected<void>> ProviderImpl::check_inventory(const api::InventoryRequest& request) {
  if (inventory_checked_ && checked_request_.hosts == request.hosts &&
      checked_request_.total_vms == request.total_vms)
    co_return Expected<void>();  // check() asked
  auto nodes = co_await check_nodes(request.hosts, {});
  if (!nodes) co_return nodes.error();
  auto golden = co_await check_golden();
  if (!golden) co_return golden.error();
  auto ns = co_await check_namespace();
  if (!ns) co_return ns.error();
  inventory_checked_ = true;
  checked_request_ = request;
  co_return Expected<void>();
}
}  // namespace bootstorm::kubevirt::detail
