#pragma once
// Waits for the DataVolumes of freshly created VMs with ONE list + watch of the run's DataVolumes, shared by
// every waiter: at 10,000 VMs a read per VM per round was 1,000 requests/s. The watch starts with the first
// waiter and stops kDataVolumeWatchLinger after the last (creates paced by the request budget finish one at
// a time: a watch stopped at once was listed again for nearly every VM, 3.6 requests per VM instead of 2).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "protocol/kube/kube_api.hpp"
#include "providers/kubevirt/kube_objects.hpp"

namespace bootstorm::kubevirt::detail {

class DataVolumeWaiter : public std::enable_shared_from_this<DataVolumeWaiter> {
 public:
  static constexpr auto kWatchLinger = std::chrono::seconds(5);
  // A DataVolume the watch has not shown yet is read directly this often (a selector that misses it, e.g.
  // labels not propagated from the template, must not leave its VM waiting until the timeout).
  static constexpr auto kFallbackPoll = std::chrono::seconds(10);

  DataVolumeWaiter(boost::asio::any_io_executor executor, std::shared_ptr<kube::KubeApi> api, std::string ns,
                   std::string run_id, std::chrono::milliseconds fallback_poll = kFallbackPoll);

  // Until the DataVolume of `vm_name` has succeeded, then its state (with the clone type CDI recorded); an
  // error naming CDI's reason when it failed, or at `timeout` with the last state seen.
  boost::asio::awaitable<Expected<DataVolumeState>> wait(const std::string& vm_name,
                                                         std::chrono::milliseconds timeout);
  // Provisioning is over: stop the watch now unless someone still waits.
  void stop_if_idle();
  // The provider goes away: stop the watch and wake every waiter.
  void shutdown();

 private:
  void ensure_watch();
  void stop_watch();
  void release_waiter();
  void update(const std::string& name, DataVolumeState state);
  void wake(const std::string& name);

  boost::asio::any_io_executor executor_;
  std::shared_ptr<kube::KubeApi> api_;
  std::string namespace_;
  std::string run_id_;
  std::chrono::milliseconds fallback_poll_;
  std::map<std::string, DataVolumeState> states_;
  std::map<std::string, std::vector<std::shared_ptr<boost::asio::steady_timer>>> waiters_;
  std::size_t waiter_count_ = 0;
  bool watch_running_ = false;
  bool shut_down_ = false;
  std::shared_ptr<boost::asio::steady_timer> linger_;  // pending stop of the watch
  CancelSignal watch_cancel_;
};

}  // namespace bootstorm::kubevirt::detail
