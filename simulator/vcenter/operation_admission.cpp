// vCenter's admission control: at most `max_concurrent_operations` operations at once and `host_cost_units`
// of cost a host; an operation beyond either limit waits in a FIFO queue (among those that fit) until a slot
// frees. It is not refused.
#include <algorithm>

#include "simulator/vcenter/detail/awaitable_callback.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

namespace asio = boost::asio;

bool VcenterFront::Impl::fits(const std::string& host_id, int cost) const {
  if (running_operations >= config().max_concurrent_operations) return false;
  if (host_id.empty()) return true;
  auto it = host_cost_used.find(host_id);
  const int used = it == host_cost_used.end() ? 0 : it->second;
  return used + cost <= config().host_cost_units;
}

void VcenterFront::Impl::take(const std::string& host_id, int cost) {
  ++running_operations;
  if (!host_id.empty()) host_cost_used[host_id] += cost;
}

void VcenterFront::Impl::release(const std::string& host_id, int cost) {
  --running_operations;
  if (!host_id.empty()) host_cost_used[host_id] -= cost;
  for (auto it = waiters.begin(); it != waiters.end();) {
    if (fits(it->host_id, it->cost)) {
      take(it->host_id, it->cost);
      auto grant = std::move(it->grant);
      it = waiters.erase(it);
      grant(true);
    } else {
      ++it;
    }
  }
}

VcenterFront::Impl::OperationSlot::~OperationSlot() {
  impl->release(host_id, cost);
}

asio::awaitable<std::unique_ptr<VcenterFront::Impl::OperationSlot>> VcenterFront::Impl::admit(
    std::string host_id, int cost) {
  cost = std::min(cost, config().host_cost_units);
  if (waiters.empty() && fits(host_id, cost)) {
    take(host_id, cost);
  } else {
    auto granted = callback_state<bool>(executor);
    waiters.push_back(Waiter{host_id, cost, granted->callback()});
    stats.peak_operations_queued = std::max(stats.peak_operations_queued, waiters.size());
    co_await wait_for(granted);
  }
  co_return std::make_unique<OperationSlot>(shared_from_this(), std::move(host_id), cost);
}

}  // namespace bootstorm::sim::vcenter
