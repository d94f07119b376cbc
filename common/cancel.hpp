#pragma once
// Cooperative cancellation shared by the engine, the providers and the HTTP client. Callbacks run on the
// thread that calls cancel(); components register a callback that posts to their own executor (e.g. closes a
// socket, cancels a timer). Copies share one state.
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace bootstorm {

class CancelSignal {
 public:
  CancelSignal() : state_(std::make_shared<State>()) {}

  void cancel() {
    std::vector<std::function<void()>> callbacks;
    {
      std::lock_guard lock(state_->mutex);
      if (state_->cancelled) return;
      state_->cancelled = true;
      callbacks.swap(state_->callbacks);
    }
    for (auto& cb : callbacks) cb();
  }
  bool cancelled() const {
    std::lock_guard lock(state_->mutex);
    return state_->cancelled;
  }
  // Runs `cb` at cancel() — or immediately if already cancelled.
  void subscribe(std::function<void()> cb) {
    {
      std::lock_guard lock(state_->mutex);
      if (!state_->cancelled) {
        state_->callbacks.push_back(std::move(cb));
        return;
      }
    }
    cb();
  }

 private:
  struct State {
    mutable std::mutex mutex;
    bool cancelled = false;
    std::vector<std::function<void()>> callbacks;
  };
  std::shared_ptr<State> state_;
};

}  // namespace bootstorm
