// ProviderImpl::check, `bootstorm check` on KubeVirt: the API and its versions, CDI, every verb the run will
// use (SelfSubjectAccessReview), the placement nodes with memory for their share, the golden image, the
// namespace and its ResourceQuota, virt-controller's rate limit from the KubeVirt CR, and how CDI will clone
// (learned with the platform's facts). Read-only: nothing
// is created but the access reviews, which the API server answers without storing.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "common/quantity.hpp"
#include "providers/kube/access_review.hpp"
#include "providers/kubevirt/detail/provider_impl.hpp"
#include "providers/kubevirt/launch_pacing.hpp"

namespace bootstorm::kubevirt::detail {
using boost::asio::awaitable;
using nlohmann::json;

namespace {

api::CheckResult from(const Expected<api::CheckResult>& checked, const std::string& name) {
  return checked ? *checked : api::failed_check(name, checked.error());
}

}  // namespace

awaitable<api::CheckResult> ProviderImpl::check_access() {
  const std::string& ns = settings_.namespace_;
  std::vector<kube::Access> needed = {
      {"create", "kubevirt.io", "virtualmachines", "", ns},
      {"get", "kubevirt.io", "virtualmachines", "", ns},
      {"delete", "kubevirt.io", "virtualmachines", "", ns},
      {"update", "subresources.kubevirt.io", "virtualmachines", "start", ns},
      {"update", "subresources.kubevirt.io", "virtualmachines", "stop", ns},
      {"list", "kubevirt.io", "virtualmachineinstances", "", ns},
      {"watch", "kubevirt.io", "virtualmachineinstances", "", ns},
      {"list", "cdi.kubevirt.io", "datavolumes", "", ns},
      {"watch", "cdi.kubevirt.io", "datavolumes", "", ns},
      {"list", "", "nodes", "", ""},
  };
  if (!settings_.datasource_name.empty()) {
    const std::string dsns = settings_.datasource_namespace.empty() ? ns : settings_.datasource_namespace;
    needed.push_back({"get", "cdi.kubevirt.io", "datasources", "", dsns});
    // CDI lets a DataVolume clone from another namespace only for a user who may create datavolumes/source
    // there.
    if (dsns != ns) needed.push_back({"create", "cdi.kubevirt.io", "datavolumes", "source", dsns});
  }
  if (namespace_missing_) needed.push_back({"create", "", "namespaces", "", ""});
  if (!api_) co_return api::check_result("permissions", api::CheckStatus::unknown, "not connected");
  const std::string advice = "grant them to the kubeconfig's user (a Role in " + ns +
                             " such as kubevirt.io:edit, plus get on the golden DataSource's namespace)";
  co_return co_await kube::review_access(*api_, needed, advice);
}

awaitable<api::CheckResult> ProviderImpl::check_quota(std::size_t vms) {
  const std::string& ns = settings_.namespace_;
  if (namespace_missing_)
    co_return api::check_result("resource quota", api::CheckStatus::pass,
                                "namespace " + ns + " is new: no quota");
  auto resp = co_await call("GET", "/api/v1/namespaces/" + ns + "/resourcequotas", {},
                            "listing ResourceQuotas in " + ns);
  if (!resp || resp->status != 200) {
    co_return api::check_result("resource quota", api::CheckStatus::unknown,
                                "ResourceQuotas in " + ns + " could not be read (" +
                                    (resp ? "HTTP " + std::to_string(resp->status) : resp.error().message) +
                                    ")",
                                "check `kubectl describe quota -n " + ns + "` yourself");
  }
  json list = json::parse(resp->body, nullptr, false);
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array() || list["items"].empty())
    co_return api::check_result("resource quota", api::CheckStatus::pass,
                                "no ResourceQuota in namespace " + ns);
  // What the largest storm adds, per quota resource: one VM, one virt-launcher pod and one PVC per VM.
  const double memory = parse_quantity(VmBuild{}.memory).value_or(0) * static_cast<double>(vms);
  const std::map<std::string, double> adds = {{"count/virtualmachines.kubevirt.io", static_cast<double>(vms)},
                                              {"pods", static_cast<double>(vms)},
                                              {"persistentvolumeclaims", static_cast<double>(vms)},
                                              {"requests.memory", memory},
                                              {"memory", memory}};
  std::vector<std::string> short_of;
  for (const auto& quota : list["items"]) {
    const json* hard = json_at(quota, {"status", "hard"});
    if (!hard || !hard->is_object()) continue;
    for (const auto& [resource, limit] : hard->items()) {
      auto add = adds.find(resource);
      if (add == adds.end() || !limit.is_string()) continue;
      const double cap = parse_quantity(limit.get<std::string>()).value_or(-1);
      std::string used = text_at(quota, {"status", "used", resource.c_str()});
      if (used.empty()) used = "0";
      const double in_use = parse_quantity(used).value_or(0);
      if (cap >= 0 && in_use + add->second > cap)
        short_of.push_back(fmt::format("{} {}: {} in use + {} for the storm > {} allowed", name_of(quota),
                                       resource, used,
                                       resource.find("memory") != std::string::npos
                                           ? fmt::format("{:.0f}Gi", add->second / (1024.0 * 1024 * 1024))
                                           : fmt::format("{:.0f}", add->second),
                                       limit.get<std::string>()));
    }
  }
  if (!short_of.empty()) {
    co_return api::check_result("resource quota", api::CheckStatus::fail,
                                fmt::format("{}", fmt::join(short_of, "; ")),
                                "raise the quota of namespace " + ns + " or run a smaller storm");
  }
  co_return api::check_result(
      "resource quota", api::CheckStatus::pass,
      fmt::format("{} ResourceQuota(s) in {} leave room for {} VMs", list["items"].size(), ns, vms));
}

awaitable<api::CheckResult> ProviderImpl::check_launch_pacing(const api::CheckRequest& request) {
  auto resp = co_await call("GET", "/apis/kubevirt.io/v1/kubevirts", {}, "reading the KubeVirt CR");
  const std::string advice =
      "ask a cluster admin for `kubectl get kubevirt -A -o yaml`: "
      "spec.configuration.controllerConfiguration.restClient.rateLimiter paces every VMI launch";
  if (!resp || resp->status != 200) {
    co_return api::check_result(
        "launch pacing", api::CheckStatus::unknown,
        "the KubeVirt CR could not be read (" +
            (resp ? kube::status_error(resp->status, resp->body, "KubeVirt").message : resp.error().message) +
            ")",
        advice);
  }
  json list = json::parse(resp->body, nullptr, false);
  const json* items = list.is_object() ? json_at(list, {"items"}) : nullptr;
  if (!items || !items->is_array() || items->empty()) {
    co_return api::check_result("launch pacing", api::CheckStatus::unknown, "no KubeVirt CR in the cluster",
                                advice);
  }
  const json& cr = items->front();
  co_return launch_pacing_check(cr, text_at(cr, {"metadata", "namespace"}) + "/" + name_of(cr),
                                request.largest_storm, request.storm_timeout);
}

awaitable<std::vector<api::CheckResult>> ProviderImpl::check(const api::CheckRequest& request) {
  std::vector<api::CheckResult> out;
  out.push_back(api::check_result("API", api::CheckStatus::pass, "answered: " + api::describe(facts_)));
  // CDI clones the golden image; without it no VM gets a disk.
  auto cdi = co_await call("GET", "/apis/cdi.kubevirt.io/v1beta1", {}, "reading CDI's API group");
  if (cdi && cdi->status == 404) {
    out.push_back(api::check_result(
        "CDI", api::CheckStatus::fail,
        "CDI (cdi.kubevirt.io/v1beta1) is not installed: no DataVolume can clone the golden image",
        "install CDI (OpenShift Virtualization installs it)"));
  } else if (cdi && cdi->status == 200) {
    auto version = facts_.components.find("CDI");
    out.push_back(api::check_result("CDI", api::CheckStatus::pass,
                                    version == facts_.components.end()
                                        ? "installed (its version is not readable)"
                                        : "installed, " + version->second));
  } else {
    out.push_back(api::check_result("CDI", api::CheckStatus::unknown, "CDI's API group did not answer",
                                    "check that CDI runs (kubectl get cdi)"));
  }
  std::vector<std::string> hosts;
  for (const auto& [host, vms] : request.vms_per_host) hosts.push_back(host);
  auto nodes = co_await check_nodes(hosts, request.vms_per_host);
  out.push_back(from(nodes, "nodes"));
  auto golden = co_await check_golden();
  out.push_back(from(golden, "golden image"));
  auto ns = co_await check_namespace();
  out.push_back(from(ns, "namespace"));
  if (ns && !hosts.empty()) out.push_back(from(co_await check_vm_object(hosts.front()), "VM object"));
  auto access = co_await check_access();
  out.push_back(std::move(access));
  auto quota = co_await check_quota(request.largest_storm);
  out.push_back(std::move(quota));
  auto pacing = co_await check_launch_pacing(request);
  out.push_back(std::move(pacing));
  out.push_back(clone_strategy_check(clone_forecast_, request.largest_storm, golden_size_));
  if (api::worst(out) != api::CheckStatus::fail) {
    inventory_checked_ = true;
    checked_request_.hosts = hosts;
    checked_request_.total_vms = request.total_vms;
  }
  co_return out;
}

}  // namespace bootstorm::kubevirt::detail
