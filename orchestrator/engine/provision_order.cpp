#include "orchestrator/engine/provision_order.hpp"

#include <map>
#include <string>

namespace bootstorm::engine {

std::vector<std::size_t> provision_order(const std::vector<api::VmSpec>& specs) {
  std::vector<std::vector<std::size_t>> per_host;  // in the order hosts first appear
  std::map<std::string, std::size_t> host_slot;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto [it, added] = host_slot.try_emplace(specs[i].host, per_host.size());
    if (added) per_host.emplace_back();
    per_host[it->second].push_back(i);
  }
  std::vector<std::size_t> order;
  order.reserve(specs.size());
  for (std::size_t round = 0; order.size() < specs.size(); ++round) {
    for (const auto& vms : per_host)
      if (round < vms.size()) order.push_back(vms[round]);
  }
  return order;
}

}  // namespace bootstorm::engine
