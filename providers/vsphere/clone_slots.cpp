#include "providers/vsphere/clone_slots.hpp"

namespace bootstorm::vsphere {

async::AsyncSemaphore& HostCloneSlots::of(const std::string& host_id) {
  auto& slot = slots_[host_id];
  if (!slot) slot = std::make_unique<async::AsyncSemaphore>(executor_, kClonesPerHost);
  return *slot;
}

}  // namespace bootstorm::vsphere
