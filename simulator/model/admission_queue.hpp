#pragma once
// vCenter's admission control as plain logic: at most `max_concurrent` operations at once and
// `host_cost_units` of cost per host; an operation beyond either limit waits in a FIFO queue (among those
// that fit) until a slot frees. It is not refused. The vCenter front admits its tasks through it in real
// time, and `bootstorm predict` its power-ons and clones in virtual time, so both queue alike.
#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>

namespace bootstorm::sim::model {

class AdmissionQueue {
 public:
  AdmissionQueue(int max_concurrent, int host_cost_units)
      : max_concurrent_(max_concurrent), host_cost_units_(host_cost_units) {}

  // The limits may change between operations (a lab profile's vcenter section as it stands).
  void set_limits(int max_concurrent, int host_cost_units) {
    max_concurrent_ = max_concurrent;
    host_cost_units_ = host_cost_units;
  }

  // The cost an operation holds: at most a host's units (a costlier one would never fit).
  int cost_of(int cost) const { return cost < host_cost_units_ ? cost : host_cost_units_; }

  // Takes a slot for an operation of `cost_of(cost)` on `host_id` ("" for none): true when granted at once,
  // else `grant` is queued and called from release() when the operation's turn comes.
  bool admit(const std::string& host_id, int cost, std::function<void()> grant);
  // Gives back a granted slot of `cost_of(cost)`, and grants the queued operations that fit now, in order.
  void release(const std::string& host_id, int cost);

  int running() const { return running_; }
  std::size_t queued() const { return waiters_.size(); }
  std::size_t peak_queued() const { return peak_queued_; }

 private:
  struct Waiter {
    std::string host_id;
    int cost = 0;
    std::function<void()> grant;
  };
  bool fits(const std::string& host_id, int cost) const;
  void take(const std::string& host_id, int cost);

  int max_concurrent_;
  int host_cost_units_;
  int running_ = 0;
  std::unordered_map<std::string, int> host_cost_used_;
  std::deque<Waiter> waiters_;
  std::size_t peak_queued_ = 0;
};

}  // namespace bootstorm::sim::model
