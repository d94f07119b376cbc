// VirtualMachines created Halted, their namespace on first use, and the wait for their DataVolumes through
// one shared DataVolume watch.
#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/async/sleep.hpp"
#include "common/log.hpp"
#include "providers/kube/list_watch.hpp"
#include "providers/kubevirt/detail/provider_impl.hpp"

namespace bootstorm::kubevirt::detail {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;
using std::chrono::steady_clock;
using std::chrono::system_clock;

namespace {
constexpr auto kUseAwaitable = asio::as_tuple(asio::use_awaitable);
constexpr auto kDataVolumeFallbackPoll = std::chrono::seconds(10);
// How long the DataVolume watch outlives its last waiter. Creates paced by the request budget finish one at a
// time: a watch stopped as soon as no DataVolume was pending was listed again for nearly every VM (3.6
// requests per VM instead of 2 for 1,000 VMs at 50 requests/s).
constexpr auto kDataVolumeWatchLinger = std::chrono::seconds(5);
}  // namespace

awaitable<Expected<void>> ProviderImpl::ensure_namespace() {
  if (namespace_ready_) co_return Expected<void>();
  if (namespace_creating_) {
    // Another provision is creating it: wait for that one.
    auto timer = std::make_shared<asio::steady_timer>(executor_, steady_clock::time_point::max());
    namespace_waiters_.push_back(timer);
    co_await timer->async_wait(kUseAwaitable);
    if (namespace_ready_) co_return Expected<void>();
    co_return make_error(ErrorKind::api, "creating namespace " + config_.namespace_ + " failed (see above)");
  }
  namespace_creating_ = true;
  Expected<void> result;
  const std::string& ns = config_.namespace_;
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
  }
  namespace_ready_ = static_cast<bool>(result);
  namespace_creating_ = false;
  for (auto& t : namespace_waiters_) t->cancel();
  namespace_waiters_.clear();
  co_return result;
}

awaitable<Expected<api::VmHandle>> ProviderImpl::provision(const api::VmSpec& spec) {
  // The create's turn in the request budget comes first: thousands of creates waiting for it hold nothing
  // yet (built VirtualMachine bodies waiting here were ~15 KB per VM at 10,000 VMs).
  if (!config_.dry_run) co_await api_->wait_for_budget();
  if (auto ns = co_await ensure_namespace(); !ns) co_return ns.error();
  VmBuild build;
  build.name = spec.name;
  build.namespace_ = config_.namespace_;
  build.run_id = config_.run_id;
  build.scenario = spec.scenario;
  build.host = spec.host;
  build.datasource_name = config_.golden_datasource;
  build.datasource_namespace = config_.golden_datasource_namespace;
  build.pvc = config_.golden_pvc;
  build.clone_strategy = config_.clone_type;
  if (!config_.beacon_url.empty()) {
    build.beacon_url = config_.beacon_url;
    build.beacon_token = config_.beacon_token ? config_.beacon_token(spec.name) : std::string();
    log::register_secret(build.beacon_token);
  }
  const std::string body = build_virtual_machine(build).dump();
  const std::string what = "creating VirtualMachine " + config_.namespace_ + "/" + spec.name;
  api::VmHandle handle{spec.name, config_.namespace_ + "/" + spec.name, spec.host, spec.scenario};
  // POST is not retried by the HTTP client; a create is safe to repeat here because a duplicate answers 409
  // and is then checked for our run label.
  for (int attempt = 1;; ++attempt) {
    auto resp = co_await call("POST", vms_path(config_.namespace_), body, what,
                              attempt > 1 ? kube::Budget::paced : kube::Budget::unpaced);
    if (!resp) co_return resp.error();
    if (resp->status == 200 || resp->status == 201) co_return handle;
    if (resp->status == 409) {
      auto existing =
          co_await call("GET", vm_path(config_.namespace_, spec.name), {}, "reading " + spec.name);
      if (existing && existing->status == 200 &&
          label_of(json::parse(existing->body, nullptr, false), kRunLabel) == config_.run_id) {
        co_return handle;  // created by an earlier attempt of this run
      }
      co_return make_error(ErrorKind::conflict,
                           "VirtualMachine " + config_.namespace_ + "/" + spec.name +
                               " already exists and does not belong to run " + config_.run_id,
                           "delete it or use another namespace", 409);
    }
    if ((resp->status == 429 || resp->status == 503 || resp->status == 504) && attempt < 5) {
      api_->count_retry();
      co_await async::sleep_for(kube::retry_backoff(attempt));
      continue;
    }
    co_return kube::status_error(resp->status, resp->body, what);
  }
}

awaitable<Expected<void>> ProviderImpl::wait_startable(const api::VmHandle& vm,
                                                       std::chrono::milliseconds timeout) {
  if (config_.dry_run) co_return Expected<void>();
  const std::string dv = datavolume_name(vm.name);
  const auto deadline = steady_clock::now() + timeout;
  ++dv_waiter_count_;
  ensure_dv_watch();
  struct Release {
    ProviderImpl* self;
    ~Release() { self->release_dv_waiter(); }
  } release{this};
  auto last_poll = steady_clock::now();
  while (true) {
    if (auto it = dv_states_.find(dv); it != dv_states_.end()) {
      if (it->second.succeeded) co_return Expected<void>();
      if (it->second.failed) {
        co_return make_error(
            ErrorKind::api,
            "DataVolume " + config_.namespace_ + "/" + dv + " of VM " + vm.name +
                " failed: " + it->second.detail,
            "check CDI (kubectl describe dv " + dv + " -n " + config_.namespace_ + ") and the golden source");
      }
    }
    auto now = steady_clock::now();
    if (now >= deadline) {
      auto it = dv_states_.find(dv);
      co_return make_error(ErrorKind::timeout,
                           "DataVolume " + config_.namespace_ + "/" + dv + " of VM " + vm.name +
                               " did not succeed within " + std::to_string(timeout.count() / 1000) + " s (" +
                               (it == dv_states_.end() ? std::string("not seen yet") : it->second.detail) +
                               ")",
                           "raise the provisioning timeout or check CDI clone progress");
    }
    if (now - last_poll >= kDataVolumeFallbackPoll && !dv_states_.contains(dv)) {
      // The watch should deliver every change; a direct read every 10 s guards against a selector that
      // misses the DataVolume (e.g. labels not propagated from the template). A DataVolume the watch has
      // seen needs no read: at 10,000 VMs these reads alone asked for 1,000 requests/s.
      last_poll = now;
      auto resp = co_await call("GET", datavolumes_path(config_.namespace_) + "/" + dv, {},
                                "reading DataVolume " + dv);
      if (resp && resp->status == 200) {
        json obj = json::parse(resp->body, nullptr, false);
        if (obj.is_object()) dv_states_[dv] = datavolume_state(obj);
      }
      continue;
    }
    auto timer = std::make_shared<asio::steady_timer>(executor_);
    timer->expires_at(std::min(deadline, last_poll + kDataVolumeFallbackPoll));
    dv_waiters_[dv].push_back(timer);
    co_await timer->async_wait(kUseAwaitable);
  }
}

void ProviderImpl::ensure_dv_watch() {
  if (dv_watch_running_) return;
  dv_watch_running_ = true;
  dv_watch_cancel_ = CancelSignal();
  auto self = shared_from_this();
  CancelSignal cancel = dv_watch_cancel_;
  asio::co_spawn(
      executor_,
      [self, cancel]() -> awaitable<void> {
        kube::ListWatchHandlers h;
        h.on_list = [self](const std::vector<json>& items, kube::ClientInstant, bool) {
          for (const auto& item : items) self->update_dv(name_of(item), datavolume_state(item));
        };
        h.on_event = [self](const kube::WatchEvent& ev, kube::ClientInstant, bool, double) {
          if (ev.type == kube::WatchEvent::Type::deleted) {
            self->dv_states_.erase(name_of(ev.object));
            self->wake_dv_waiters(name_of(ev.object));
          } else {
            self->update_dv(name_of(ev.object), datavolume_state(ev.object));
          }
        };
        kube::ListWatchRequest request;
        request.collection = datavolumes_path(self->config_.namespace_);
        request.query = "labelSelector=" + run_selector_query(self->config_.run_id);
        request.what = "DataVolumes";
        request.decode = kube::WatchDecode::milestone_fields;
        // No `done`: the watch ends when stop_dv_watch() cancels it (kDataVolumeWatchLinger after the last
        // waiter, at prepare_storm, or at shutdown).
        (void)co_await kube::list_watch(*self->api_, std::move(request), std::move(h), cancel);
        self->dv_watch_running_ = false;
        // A waiter may have arrived after the cancel: it needs a watch of its own.
        if (self->dv_waiter_count_ > 0 && !self->shut_down) self->ensure_dv_watch();
      },
      asio::detached);
}

void ProviderImpl::stop_dv_watch() {
  if (dv_linger_) dv_linger_->cancel();
  dv_linger_.reset();
  dv_watch_cancel_.cancel();
}

void ProviderImpl::release_dv_waiter() {
  if (--dv_waiter_count_ > 0) return;
  auto timer = std::make_shared<asio::steady_timer>(executor_, kDataVolumeWatchLinger);
  if (dv_linger_) dv_linger_->cancel();
  dv_linger_ = timer;
  timer->async_wait([weak = weak_from_this(), timer](boost::system::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->dv_linger_ != timer || self->dv_waiter_count_ > 0) return;
    self->stop_dv_watch();
  });
}

void ProviderImpl::update_dv(const std::string& name, DataVolumeState state) {
  if (name.empty()) return;
  dv_states_[name] = std::move(state);
  wake_dv_waiters(name);
}

void ProviderImpl::wake_dv_waiters(const std::string& name) {
  auto it = dv_waiters_.find(name);
  if (it == dv_waiters_.end()) return;
  for (auto& t : it->second) t->cancel();
  dv_waiters_.erase(it);
}

void ProviderImpl::wake_all_dv_waiters() {
  for (auto& [_, timers] : dv_waiters_)
    for (auto& t : timers) t->cancel();
  dv_waiters_.clear();
}
}  // namespace bootstorm::kubevirt::detail
