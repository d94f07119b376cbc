// VirtualMachines created Halted, their namespace on first use, and the wait until their DataVolumes are
// ready (DataVolumeWaiter).
#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/async/sleep.hpp"
#include "common/log.hpp"
#include "protocol/kube/list_watch.hpp"
#include "providers/kubevirt/detail/provider_impl.hpp"

namespace bootstorm::kubevirt::detail {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;
using std::chrono::steady_clock;

awaitable<Expected<void>> ProviderImpl::ensure_namespace() {
  if (namespace_ready_) co_return Expected<void>();
  if (namespace_creating_) {
    // Another provision is creating it: wait for that one.
    auto timer = std::make_shared<asio::steady_timer>(executor_, steady_clock::time_point::max());
    namespace_waiters_.push_back(timer);
    co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
    if (namespace_ready_) co_return Expected<void>();
    if (namespace_error_) co_return *namespace_error_;
    co_return make_error(ErrorKind::api,
                         "creating namespace " + settings_.namespace_ + " failed (see above)");
  }
  if (namespace_error_) co_return *namespace_error_;
  namespace_creating_ = true;
  Expected<void> result;
  const std::string& ns = settings_.namespace_;
  bool create = namespace_missing_;
  if (!namespace_known_) {
    auto resp = co_await call("GET", "/api/v1/namespaces/" + ns, {}, "reading namespace " + ns);
    if (!resp) {
      result = resp.error();
    } else {
      create = resp->status == 404;
    }
  }
  if (result && create) {
    std::string what = "creating namespace " + ns;
    auto resp = co_await call("POST", "/api/v1/namespaces", build_namespace(ns, config_.run_id).dump(), what);
    if (!resp) {
      result = resp.error();
    } else if (resp->status != 201 && resp->status != 200 && resp->status != 409) {
      result = kube::status_error(resp->status, resp->body, what);
    } else if (resp->status != 409) {
      spdlog::info("created namespace {}", ns);
    }
    // The namespace is new, so check() could not have the server judge a VM in it: the first provision
    // does, before any VM exists.
    if (result && !config_.dry_run) {
      api::VmSpec probe;
      probe.name = config_.run_id.empty() ? "bootstorm-dry-run" : "bs-" + config_.run_id + "-dry-run";
      result = co_await dry_run_vm(probe);
    }
  }
  namespace_ready_ = static_cast<bool>(result);
  if (!result) namespace_error_ = result.error();
  namespace_creating_ = false;
  for (auto& t : namespace_waiters_) t->cancel();
  namespace_waiters_.clear();
  co_return result;
}

awaitable<bool> ProviderImpl::backed_off_after_refusal(int status, int attempt) {
  if ((status != 429 && status != 503 && status != 504) || attempt >= 5) co_return false;
  api_->count_retry();
  co_await async::sleep_for(kube::retry_backoff(attempt));
  co_return true;
}

std::string ProviderImpl::vm_body(const api::VmSpec& spec) const {
  VmBuild build;
  build.name = spec.name;
  build.namespace_ = settings_.namespace_;
  build.run_id = config_.run_id;
  build.scenario = spec.scenario;
  build.host = spec.host;
  build.datasource_name = settings_.datasource_name;
  build.datasource_namespace = settings_.datasource_namespace;
  build.pvc = settings_.pvc;
  build.clone_strategy = settings_.clone;
  if (!config_.beacon_url.empty()) {
    build.beacon_url = config_.beacon_url;
    build.beacon_token = config_.beacon_token ? config_.beacon_token(spec.name) : std::string();
    log::register_secret(build.beacon_token);
  }
  return build_virtual_machine(build).dump();
}

awaitable<Expected<void>> ProviderImpl::dry_run_vm(const api::VmSpec& spec) {
  const std::string what =
      "checking VirtualMachine " + settings_.namespace_ + "/" + spec.name + " with the API server (dry run)";
  const std::string body = vm_body(spec);
  Expected<http::Response> resp = make_error(ErrorKind::internal, what + ": not asked");
  // A dry run changes nothing, so it is asked again after a refusal to handle it now, as a create is.
  for (int attempt = 1;; ++attempt) {
    resp = co_await call("POST", vms_path(settings_.namespace_) + "?dryRun=All&fieldValidation=Strict", body,
                         what);
    if (!resp) co_return resp.error();
    if (!co_await backed_off_after_refusal(resp->status, attempt)) break;
  }
  if (resp->status == 200 || resp->status == 201) co_return Expected<void>();
  Error e = kube::status_error(resp->status, resp->body, what);
  if (resp->status == 400 || resp->status == 422) {
    // Strict decoding names the field the cluster's VirtualMachine schema lacks; a 422 names one it refuses.
    e.message = "the API server refuses the VirtualMachine bootstorm creates: " + e.message;
    e.hint =
        "the cluster's KubeVirt does not take a field bootstorm sets, or refuses its value: compare "
        "`kubectl explain virtualmachine.spec --recursive` with the field named, and upgrade KubeVirt or "
        "report it";
  }
  co_return e;
}

awaitable<Expected<api::VmHandle>> ProviderImpl::provision(const api::VmSpec& spec) {
  // The create's turn in the request budget comes first: thousands of creates waiting for it hold nothing
  // yet (built VirtualMachine bodies waiting here were ~15 KB per VM at 10,000 VMs).
  if (!config_.dry_run) co_await api_->wait_for_budget();
  if (auto ns = co_await ensure_namespace(); !ns) co_return ns.error();
  const std::string body = vm_body(spec);
  const std::string what = "creating VirtualMachine " + settings_.namespace_ + "/" + spec.name;
  api::VmHandle handle{spec.name, settings_.namespace_ + "/" + spec.name, spec.host, spec.scenario};
  // POST is not retried by the HTTP client; a create is safe to repeat here because a duplicate answers 409
  // and is then checked for our run label.
  for (int attempt = 1;; ++attempt) {
    auto resp = co_await call("POST", vms_path(settings_.namespace_), body, what,
                              attempt > 1 ? kube::Budget::paced : kube::Budget::unpaced);
    if (!resp) co_return resp.error();
    if (resp->status == 200 || resp->status == 201) co_return handle;
    if (resp->status == 409) {
      auto existing =
          co_await call("GET", vm_path(settings_.namespace_, spec.name), {}, "reading " + spec.name);
      if (existing && existing->status == 200 &&
          label_of(json::parse(existing->body, nullptr, false), kRunLabel) == config_.run_id) {
        co_return handle;  // created by an earlier attempt of this run
      }
      co_return make_error(ErrorKind::conflict,
                           "VirtualMachine " + settings_.namespace_ + "/" + spec.name +
                               " already exists and does not belong to run " + config_.run_id,
                           "delete it or use another namespace", 409);
    }
    if (co_await backed_off_after_refusal(resp->status, attempt)) continue;
    co_return kube::status_error(resp->status, resp->body, what);
  }
}

awaitable<Expected<void>> ProviderImpl::wait_startable(const api::VmHandle& vm,
                                                       std::chrono::milliseconds timeout) {
  if (config_.dry_run) co_return Expected<void>();
  if (!datavolumes_) co_return make_error(ErrorKind::internal, "waiting for a DataVolume before connect");
  auto waiter = datavolumes_;  // held while this coroutine runs
  auto done = co_await waiter->wait(vm.name, timeout);
  if (!done) co_return done.error();
  if (!done->clone_type.empty()) clone_methods_[vm.id] = done->clone_type;
  co_return Expected<void>();
}

std::string ProviderImpl::clone_method(const api::VmHandle& vm) const {
  auto it = clone_methods_.find(vm.id);
  return it == clone_methods_.end() ? std::string() : it->second;
}

}  // namespace bootstorm::kubevirt::detail
