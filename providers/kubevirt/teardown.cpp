// After the storm: stop and delete what this run created (and only that), and find it again for cleanup.
#include "common/async/sleep.hpp"
#include "protocol/kube/object_calls.hpp"
#include "providers/kubevirt/detail/provider_impl.hpp"

namespace bootstorm::kubevirt::detail {
using boost::asio::awaitable;
using nlohmann::json;
using std::chrono::steady_clock;

// Reads the VM and checks it carries the run label. nullopt + ok = gone.
awaitable<Expected<std::optional<json>>> ProviderImpl::fetch_owned(const api::VmHandle& vm,
                                                                   const std::string& action) {
  if (config_.run_id.empty()) {
    co_return make_error(ErrorKind::invalid_input, "refusing to " + action + " " + vm.name + ": no run id");
  }
  std::string ns = settings_.namespace_, name = vm.name;
  if (auto slash = vm.id.find('/'); slash != std::string::npos) ns = vm.id.substr(0, slash);
  auto resp = co_await call("GET", vm_path(ns, name), {}, "reading VirtualMachine " + ns + "/" + name);
  if (!resp) co_return resp.error();
  if (resp->status == 404) co_return std::optional<json>();
  if (resp->status != 200)
    co_return kube::status_error(resp->status, resp->body, "reading VirtualMachine " + ns + "/" + name);
  json obj = json::parse(resp->body, nullptr, false);
  std::string label = label_of(obj, kRunLabel);
  if (label != config_.run_id) {
    co_return make_error(ErrorKind::invalid_input,
                         "refusing to " + action + " VirtualMachine " + ns + "/" + name + ": its label " +
                             kRunLabel + " is \"" + label + "\", not this run's \"" + config_.run_id + "\"",
                         "bootstorm only touches what its run created");
  }
  co_return std::optional<json>(std::move(obj));
}

awaitable<Expected<void>> ProviderImpl::stop(const api::VmHandle& vm) {
  auto owned = co_await fetch_owned(vm, "stop");
  if (!owned) co_return owned.error();
  if (!owned.value()) co_return Expected<void>();
  std::string ns = vm_namespace(vm);
  std::string what = "stopping VirtualMachine " + ns + "/" + vm.name;
  auto resp = co_await call("PUT", vm_subresource_path(ns, vm.name, "stop"), stop_options().dump(), what);
  if (!resp) co_return resp.error();
  if (resp->status == 200 || resp->status == 202 || resp->status == 204 || resp->status == 404)
    co_return Expected<void>();
  if (resp->status == 409) co_return Expected<void>();  // not running: already in the desired state
  co_return kube::status_error(resp->status, resp->body, what);
}

awaitable<Expected<void>> ProviderImpl::destroy(const api::VmHandle& vm) {
  auto owned = co_await fetch_owned(vm, "delete");
  if (!owned) co_return owned.error();
  if (!owned.value()) co_return Expected<void>();
  std::string ns = vm_namespace(vm);
  std::string what = "deleting VirtualMachine " + ns + "/" + vm.name;
  auto resp = co_await call("DELETE", vm_path(ns, vm.name) + "?propagationPolicy=Foreground",
                            delete_options().dump(), what);
  if (!resp) co_return resp.error();
  if (resp->status == 404) co_return Expected<void>();
  if (resp->status != 200 && resp->status != 202)
    co_return kube::status_error(resp->status, resp->body, what);
  if (config_.dry_run) co_return Expected<void>();
  // Foreground deletion: the VM stays (with a deletionTimestamp) until its VMI and DataVolumes are gone.
  const auto deadline = steady_clock::now() + std::chrono::minutes(5);
  for (int attempt = 1; steady_clock::now() < deadline; ++attempt) {
    co_await async::sleep_for(
        std::min<steady_clock::duration>(std::chrono::milliseconds(250) * attempt, std::chrono::seconds(2)));
    auto check =
        co_await call("GET", vm_path(ns, vm.name), {}, "reading VirtualMachine " + ns + "/" + vm.name);
    if (!check) co_return check.error();
    if (check->status == 404) co_return Expected<void>();
  }
  co_return make_error(ErrorKind::timeout, what + ": still present 5 minutes after the delete",
                       "check finalizers on the VM and its DataVolumes (kubectl get vm,dv -n " + ns + ")");
}

awaitable<Expected<std::vector<api::VmHandle>>> ProviderImpl::list_run_vms(const std::string& run_id) {
  if (!api_) co_return make_error(ErrorKind::internal, "listing VirtualMachines before connect");
  auto listed = co_await kube::list_objects(*api_, vms_path(settings_.namespace_),
                                            "labelSelector=" + run_selector_query(run_id),
                                            "listing VirtualMachines of run " + run_id);
  if (!listed) co_return listed.error();
  std::vector<api::VmHandle> out;
  for (const auto& item : listed->items) {
    if (label_of(item, kRunLabel) != run_id) continue;
    api::VmHandle h;
    h.name = name_of(item);
    const json& md = item["metadata"];
    h.id = md.value("namespace", settings_.namespace_) + "/" + h.name;
    if (md.contains("annotations") && md["annotations"].is_object()) {
      h.scenario = md["annotations"].value(kScenarioNameAnnotation, "");
    }
    if (h.scenario.empty()) h.scenario = label_of(item, kScenarioLabel);
    try {
      h.host = item.at("spec").at("template").at("spec").at("nodeSelector").value(kHostnameLabel, "");
    } catch (const json::exception&) {
    }
    out.push_back(std::move(h));
  }
  co_return out;
}

std::string ProviderImpl::vm_namespace(const api::VmHandle& vm) const {
  if (auto slash = vm.id.find('/'); slash != std::string::npos) return vm.id.substr(0, slash);
  return settings_.namespace_;
}
}  // namespace bootstorm::kubevirt::detail
