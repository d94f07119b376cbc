#pragma once
// Internal to bootstorm::sim_kube: the lab runs the controllers' callbacks (power operations, clones, timers)
// later, possibly after the front shut down or went away; a guarded callback then does nothing.
#include <memory>
#include <utility>

namespace bootstorm::sim::kube {

class Lifetime {
 public:
  // `callback`, made to do nothing once end() was called or this Lifetime is destroyed.
  template <class Callback>
  auto guard(Callback callback) const {
    return [token = std::weak_ptr<const bool>(alive_), callback = std::move(callback)](auto&&... args) {
      if (auto alive = token.lock(); alive && *alive) callback(std::forward<decltype(args)>(args)...);
    };
  }
  void end() { *alive_ = false; }

 private:
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bootstorm::sim::kube
