// Milestones from ONE list + watch of the run's VirtualMachineInstances, read on a thread of its own.
#include <spdlog/spdlog.h>

#include "protocol/kube/lateness_monitor.hpp"
#include "protocol/kube/list_watch.hpp"
#include "providers/kubevirt/detail/provider_impl.hpp"
#include "providers/kubevirt/vmi_tracker.hpp"

namespace bootstorm::kubevirt::detail {
using boost::asio::awaitable;
using nlohmann::json;
using std::chrono::steady_clock;

awaitable<void> ProviderImpl::observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                                      CancelSignal stop) {
  if (config_.dry_run || vms.empty()) co_return;
  std::vector<std::string> names;
  for (const auto& vm : vms) names.push_back(vm.name);
  auto tracker = std::make_shared<VmiTracker>(names, kube::ClientInstant::now());
  auto publish = [sink](std::vector<api::MilestoneEvent> events) {
    for (auto& ev : events) sink(std::move(ev));
  };
  kube::ListWatchHandlers h;
  h.on_list = [tracker, publish](const std::vector<json>& items, kube::ClientInstant at, bool) {
    for (const auto& item : items) publish(tracker->on_listed_object(item, at));
    tracker->note_stream_alive(at);
  };
  // Unschedulable VMIs never boot: say so (at most every 10 s, with the scheduler's own message) rather
  // than leave the user watching a stalled progress line until the storm timeout.
  auto unschedulable_told = std::make_shared<std::pair<std::size_t, steady_clock::time_point>>();
  auto tell_unschedulable = [tracker, unschedulable_told, ns = settings_.namespace_] {
    const auto& pending = tracker->unschedulable();
    auto& [told, when] = *unschedulable_told;
    const auto now = steady_clock::now();
    if (pending.empty() || pending.size() == told || now - when < std::chrono::seconds(10)) return;
    told = pending.size();
    when = now;
    const auto& [name, message] = *pending.begin();
    spdlog::warn(
        "{} VirtualMachineInstance(s) cannot be scheduled and will not boot unless capacity frees up, "
        "e.g. {}/{}: {} — check the nodes' free memory and CPU against the VM size and the placement",
        pending.size(), ns, name, message);
  };
  h.on_event = [tracker, publish, tell_unschedulable](const kube::WatchEvent& ev, kube::ClientInstant at,
                                                      bool catch_up, double lateness_s) {
    if (ev.type == kube::WatchEvent::Type::added || ev.type == kube::WatchEvent::Type::modified) {
      publish(tracker->on_watch_object(ev.object, at, catch_up, lateness_s));
      tell_unschedulable();
    }
  };
  h.on_alive = [tracker](kube::ClientInstant at) { tracker->note_stream_alive(at); };
  h.done = [tracker] { return tracker->complete(); };
  kube::ListWatchRequest request;
  request.collection = vmis_path(settings_.namespace_);
  request.query = "labelSelector=" + run_selector_query(config_.run_id);
  request.what = "VirtualMachineInstances";
  request.decode = kube::WatchDecode::milestone_fields;
  // The stream is read and stamped on the client's watch thread when it has one; the lateness probe runs
  // on the loop that stamps.
  const auto reader = api_->watch_executor();
  request.own_thread = reader != executor_;
  request.lateness = std::make_shared<kube::LatenessMonitor>(reader, request.own_thread);
  request.lateness->start();
  struct StopProbe {
    std::shared_ptr<kube::LatenessMonitor> monitor;
    ~StopProbe() { monitor->stop(); }  // also when this coroutine is destroyed mid-watch
  } stop_probe{request.lateness};
  (void)co_await kube::list_watch(*api_, std::move(request), std::move(h), stop);
  for (const auto& name : tracker->failed()) {
    spdlog::warn("VMI {}/{} ended (Failed/Succeeded) before reaching every milestone", settings_.namespace_,
                 name);
  }
}
}  // namespace bootstorm::kubevirt::detail
