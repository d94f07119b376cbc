// vCenter's admission control: the front's tasks go through model::AdmissionQueue (at most
// `max_concurrent_operations` at once and `host_cost_units` of cost a host; beyond either, they wait in a
// FIFO queue until a slot frees; none is refused), with the limits of the lab's vcenter section as it stands.
#include <algorithm>

#include "simulator/vcenter/detail/awaitable_callback.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

namespace asio = boost::asio;

void VcenterFront::Impl::release(const std::string& host_id, int cost) {
  admission.set_limits(config().max_concurrent_operations, config().host_cost_units);
  admission.release(host_id, cost);
}

VcenterFront::Impl::OperationSlot::~OperationSlot() {
  impl->release(host_id, cost);
}

asio::awaitable<std::unique_ptr<VcenterFront::Impl::OperationSlot>> VcenterFront::Impl::admit(
    std::string host_id, int cost) {
  admission.set_limits(config().max_concurrent_operations, config().host_cost_units);
  cost = admission.cost_of(cost);
  auto granted = callback_state<bool>(executor);
  if (!admission.admit(host_id, cost, [callback = granted->callback()]() mutable { callback(true); })) {
    stats.peak_operations_queued = std::max(stats.peak_operations_queued, admission.queued());
    co_await wait_for(granted);
  }
  co_return std::make_unique<OperationSlot>(shared_from_this(), std::move(host_id), cost);
}

}  // namespace bootstorm::sim::vcenter
