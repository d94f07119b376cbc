// vCenter's admission control (see the header).
#include "simulator/model/admission_queue.hpp"

#include <algorithm>
#include <vector>

namespace bootstorm::sim::model {

bool AdmissionQueue::fits(const std::string& host_id, int cost) const {
  if (running_ >= max_concurrent_) return false;
  if (host_id.empty()) return true;
  auto it = host_cost_used_.find(host_id);
  const int used = it == host_cost_used_.end() ? 0 : it->second;
  return used + cost <= host_cost_units_;
}

void AdmissionQueue::take(const std::string& host_id, int cost) {
  ++running_;
  if (!host_id.empty()) host_cost_used_[host_id] += cost;
}

bool AdmissionQueue::admit(const std::string& host_id, int cost, std::function<void()> grant) {
  cost = cost_of(cost);
  if (waiters_.empty() && fits(host_id, cost)) {
    take(host_id, cost);
    return true;
  }
  waiters_.push_back(Waiter{host_id, cost, std::move(grant)});
  peak_queued_ = std::max(peak_queued_, waiters_.size());
  return false;
}

void AdmissionQueue::release(const std::string& host_id, int cost) {
  cost = cost_of(cost);
  --running_;
  if (!host_id.empty()) host_cost_used_[host_id] -= cost;
  // Grants are collected first: a grant may admit or release in turn.
  std::vector<std::function<void()>> granted;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (fits(it->host_id, it->cost)) {
      take(it->host_id, it->cost);
      granted.push_back(std::move(it->grant));
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& grant : granted) grant();
}

}  // namespace bootstorm::sim::model
