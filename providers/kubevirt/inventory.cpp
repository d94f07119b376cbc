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
  if (!namespace_missing_) {
    // A namespace being deleted takes nothing new (NamespaceLifecycle answers 403 to every create) and is
    // gone once its content is: the run would fail VM by VM, or lose what it made.
    const json object = json::parse(resp->body, nullptr, false);
    const std::string phase = object.is_object() ? text_at(object, {"status", "phase"}) : "";
    const std::string deleting = object.is_object() ? text_at(object, {"metadata", "deletionTimestamp"}) : "";
    if (phase == "Terminating" || !deleting.empty())
      co_return make_error(ErrorKind::invalid_input,
                           "namespace " + ns + " is being deleted" +
                               (deleting.empty() ? std::string() : " (since " + deleting + ")") +
                               ": it takes no new VirtualMachines",
                           "wait until `kubectl get namespace " + ns +
                               "` finds it no more, or name another namespace in the plan's `namespace`");
  }
  co_return api::check_result("namespace", api::CheckStatus::pass,
                              namespace_missing_ ? "namespace " + ns + " does not exist: the run creates it"
                                                 : "namespace " + ns + " exists");
}

awaitable<Expected<api::CheckResult>> ProviderImpl::check_vm_object(const std::string& host) {
  const std::string& ns = settings_.namespace_;
  if (!namespace_known_) co_return make_error(ErrorKind::internal, "check_vm_object before check_namespace");
  if (namespace_missing_)
    co_return api::check_result("VM object", api::CheckStatus::pass,
                                "namespace " + ns +
                                    " is new: the run has the API server judge one VM (dry run) right after "
                                    "creating it, before any VM exists");
  api::VmSpec probe;
  probe.name = "bootstorm-check-dry-run";
  probe.host = host;
  auto accepted = co_await dry_run_vm(probe);
  if (!accepted && (accepted.error().status == 0 || accepted.error().status >= 500))
    co_return api::check_result("VM object", api::CheckStatus::unknown,
                                "the API server could not judge a VirtualMachine: " + accepted.error().what(),
                                "the first create of the run will show whether it takes them");
  if (!accepted) co_return accepted.error();
  co_return api::check_result("VM object", api::CheckStatus::pass,
                              "the API server takes the VirtualMachine bootstorm creates in " + ns +
                                  " (dry run, strict field validation, admission)");
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
