// The shared DataVolume watch and its waiters (see detail/datavolume_waiter.hpp).
#include "providers/kubevirt/detail/datavolume_waiter.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "protocol/kube/list_watch.hpp"
#include "providers/kubevirt/detail/provider_impl.hpp"

namespace bootstorm::kubevirt::detail {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;
using std::chrono::steady_clock;

namespace {
constexpr auto kUseAwaitable = asio::as_tuple(asio::use_awaitable);
}  // namespace

DataVolumeWaiter::DataVolumeWaiter(asio::any_io_executor executor, std::shared_ptr<kube::KubeApi> api,
                                   std::string ns, std::string run_id,
                                   std::chrono::milliseconds fallback_poll)
    : executor_(std::move(executor)),
      api_(std::move(api)),
      namespace_(std::move(ns)),
      run_id_(std::move(run_id)),
      fallback_poll_(fallback_poll) {}

awaitable<Expected<DataVolumeState>> DataVolumeWaiter::wait(const std::string& vm_name,
                                                            std::chrono::milliseconds timeout) {
  const std::string dv = datavolume_name(vm_name);
  const auto deadline = steady_clock::now() + timeout;
  ++waiter_count_;
  ensure_watch();
  struct Release {
    DataVolumeWaiter* self;
    ~Release() { self->release_waiter(); }
  } release{this};
  auto last_poll = steady_clock::now();
  while (true) {
    if (auto it = states_.find(dv); it != states_.end()) {
      if (it->second.succeeded) co_return it->second;
      if (it->second.failed) {
        co_return make_error(
            ErrorKind::api,
            "DataVolume " + namespace_ + "/" + dv + " of VM " + vm_name + " failed: " + it->second.detail,
            "check CDI (kubectl describe dv " + dv + " -n " + namespace_ + ") and the golden source");
      }
    }
    // Nothing will change while the API server is gone: say so now, not at the deadline.
    if (auto gone = api_->gone()) {
      co_return make_error(
          ErrorKind::connect,
          "DataVolume " + namespace_ + "/" + dv + " of VM " + vm_name + " was not seen to finish: " + *gone,
          "the journal is kept: when the API server is back, `bootstorm cleanup` removes what the "
          "run created");
    }
    auto now = steady_clock::now();
    if (now >= deadline) {
      auto it = states_.find(dv);
      co_return make_error(ErrorKind::timeout,
                           "DataVolume " + namespace_ + "/" + dv + " of VM " + vm_name +
                               " did not succeed within " + std::to_string(timeout.count() / 1000) + " s (" +
                               (it == states_.end() ? std::string("not seen yet") : it->second.detail) + ")",
                           "raise the provisioning timeout or check CDI clone progress");
    }
    if (now - last_poll >= fallback_poll_ && !states_.contains(dv)) {
      // A DataVolume the watch has seen needs no read: at 10,000 VMs these reads alone asked for 1,000
      // requests/s.
      last_poll = now;
      kube::ApiCall read{"GET", datavolumes_path(namespace_) + "/" + dv, {}};
      auto resp = co_await api_->call(std::move(read), "reading DataVolume " + dv);
      if (resp && resp->status == 200) {
        json obj = json::parse(resp->body, nullptr, false);
        if (obj.is_object()) states_[dv] = datavolume_state(obj);
      }
      continue;
    }
    // A DataVolume the watch has seen waits for the watch (or the deadline); one it has not, for the next
    // read. The wake-up is always ahead: a clone seen in progress for longer than a poll interval must not
    // spin.
    if (now - last_poll >= fallback_poll_) last_poll = now;
    auto timer = std::make_shared<asio::steady_timer>(executor_);
    timer->expires_at(std::min(deadline, last_poll + fallback_poll_));
    waiters_[dv].push_back(timer);
    co_await timer->async_wait(kUseAwaitable);
    // Woken by its own expiry, the timer is still listed: drop it, or a long clone would pile them up.
    if (auto w = waiters_.find(dv); w != waiters_.end()) {
      std::erase(w->second, timer);
      if (w->second.empty()) waiters_.erase(w);
    }
  }
}

void DataVolumeWaiter::ensure_watch() {
  if (watch_running_) return;
  watch_running_ = true;
  watch_cancel_ = CancelSignal();
  auto self = shared_from_this();
  CancelSignal cancel = watch_cancel_;
  asio::co_spawn(
      executor_,
      [self, cancel]() -> awaitable<void> {
        kube::ListWatchHandlers h;
        h.on_list = [self](const std::vector<json>& items, kube::ClientInstant, bool) {
          for (const auto& item : items) self->update(name_of(item), datavolume_state(item));
        };
        h.on_event = [self](const kube::WatchEvent& ev, kube::ClientInstant, bool, double) {
          if (ev.type == kube::WatchEvent::Type::deleted) {
            self->states_.erase(name_of(ev.object));
            self->wake(name_of(ev.object));
          } else {
            self->update(name_of(ev.object), datavolume_state(ev.object));
          }
        };
        kube::ListWatchRequest request;
        request.collection = datavolumes_path(self->namespace_);
        request.query = "labelSelector=" + run_selector_query(self->run_id_);
        request.what = "DataVolumes";
        request.decode = kube::WatchDecode::milestone_fields;
        // No `done`: the watch ends when stop_watch() cancels it (kWatchLinger after the last waiter, when
        // the storm is prepared, or at shutdown).
        (void)co_await kube::list_watch(*self->api_, std::move(request), std::move(h), cancel);
        self->watch_running_ = false;
        // A waiter may have arrived after the cancel: it needs a watch of its own.
        if (self->waiter_count_ > 0 && !self->shut_down_) self->ensure_watch();
      },
      asio::detached);
}

void DataVolumeWaiter::stop_watch() {
  if (linger_) linger_->cancel();
  linger_.reset();
  watch_cancel_.cancel();
}

void DataVolumeWaiter::release_waiter() {
  if (--waiter_count_ > 0) return;
  auto timer = std::make_shared<asio::steady_timer>(executor_, kWatchLinger);
  if (linger_) linger_->cancel();
  linger_ = timer;
  timer->async_wait([weak = weak_from_this(), timer](boost::system::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->linger_ != timer || self->waiter_count_ > 0) return;
    self->stop_watch();
  });
}

void DataVolumeWaiter::update(const std::string& name, DataVolumeState state) {
  if (name.empty()) return;
  states_[name] = std::move(state);
  wake(name);
}

void DataVolumeWaiter::wake(const std::string& name) {
  auto it = waiters_.find(name);
  if (it == waiters_.end()) return;
  for (auto& t : it->second) t->cancel();
  waiters_.erase(it);
}

void DataVolumeWaiter::stop_if_idle() {
  if (waiter_count_ == 0) stop_watch();
}

void DataVolumeWaiter::shutdown() {
  shut_down_ = true;
  stop_watch();
  for (auto& [_, timers] : waiters_)
    for (auto& t : timers) t->cancel();
  waiters_.clear();
}

}  // namespace bootstorm::kubevirt::detail
