#pragma once
// Cooperative cancellation shared by the engine, the providers and the HTTP client. Callbacks run on the
// thread that calls cancel(); components register a callback that posts to their own executor (e.g. closes a
// socket, cancels a timer). Copies share one state.
//
// subscribe() returns a CancelSubscription that removes the callback when it goes out of scope: a sleep or a
// request that ends before the signal fires leaves nothing behind, so a run that sleeps a million times holds
// no more callbacks than it has sleeps in flight.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace bootstorm {

namespace detail {
struct CancelState {
  mutable std::mutex mutex;
  bool cancelled = false;
  std::uint64_t next_id = 0;
  std::map<std::uint64_t, std::function<void()>> callbacks;
};
}  // namespace detail

// Keeps one callback registered while it lives. Move-only; reset() or destruction unregisters (a no-op once
// the signal has fired: the callback has then already run or is running).
class CancelSubscription {
 public:
  CancelSubscription() = default;
  CancelSubscription(std::weak_ptr<detail::CancelState> state, std::uint64_t id)
      : state_(std::move(state)), id_(id) {}
  CancelSubscription(CancelSubscription&& other) noexcept : state_(std::move(other.state_)), id_(other.id_) {
    other.state_.reset();
  }
  CancelSubscription& operator=(CancelSubscription&& other) noexcept {
    if (this != &other) {
      reset();
      state_ = std::move(other.state_);
      id_ = other.id_;
      other.state_.reset();
    }
    return *this;
  }
  CancelSubscription(const CancelSubscription&) = delete;
  CancelSubscription& operator=(const CancelSubscription&) = delete;
  ~CancelSubscription() { reset(); }

  void reset() {
    if (auto state = state_.lock()) {
      std::lock_guard lock(state->mutex);
      state->callbacks.erase(id_);
    }
    state_.reset();
  }

 private:
  std::weak_ptr<detail::CancelState> state_;
  std::uint64_t id_ = 0;
};

class CancelSignal {
 public:
  CancelSignal() : state_(std::make_shared<detail::CancelState>()) {}

  void cancel() {
    std::map<std::uint64_t, std::function<void()>> callbacks;
    {
      std::lock_guard lock(state_->mutex);
      if (state_->cancelled) return;
      state_->cancelled = true;
      callbacks.swap(state_->callbacks);
    }
    for (auto& [id, cb] : callbacks) cb();
  }
  bool cancelled() const {
    std::lock_guard lock(state_->mutex);
    return state_->cancelled;
  }
  // Runs `cb` at cancel(), or at once if already cancelled, unless the returned subscription was dropped
  // before. Keep the subscription for as long as the callback's target lives.
  [[nodiscard]] CancelSubscription subscribe(std::function<void()> cb) {
    {
      std::lock_guard lock(state_->mutex);
      if (!state_->cancelled) {
        const auto id = state_->next_id++;
        state_->callbacks.emplace(id, std::move(cb));
        return CancelSubscription(state_, id);
      }
    }
    cb();
    return {};
  }
  // Callbacks still registered (for tests and leak checks).
  std::size_t subscribers() const {
    std::lock_guard lock(state_->mutex);
    return state_->callbacks.size();
  }

 private:
  std::shared_ptr<detail::CancelState> state_;
};

}  // namespace bootstorm
