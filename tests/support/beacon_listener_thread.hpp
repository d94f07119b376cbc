#pragma once
// A beacon listener (orchestrator/beacon) running on an io_context thread of its own, as the engine runs it,
// for the tests and the benchmark that call it over loopback from other threads. Stopping it (stop() or the
// destructor) lets the listener close its connections before the thread ends.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "orchestrator/beacon/listener.hpp"

namespace bootstorm::test_support {

class BeaconListenerThread {
 public:
  BeaconListenerThread() = default;
  BeaconListenerThread(const BeaconListenerThread&) = delete;
  BeaconListenerThread& operator=(const BeaconListenerThread&) = delete;
  ~BeaconListenerThread() { stop(); }

  // Starts the listener with `options`. Its milestones go to events() unless `prepare` sets a sink of its
  // own; `prepare` runs before the thread does (expect() the VMs there).
  Expected<void> start(beacon::ListenerOptions options,
                       const std::function<void(beacon::Listener&)>& prepare = {}) {
    listener_ = std::make_unique<beacon::Listener>(io_.get_executor(), std::move(options));
    auto started = listener_->start();
    if (!started) return started;
    listener_->set_sink([this](api::MilestoneEvent ev) {
      std::lock_guard lock(mutex_);
      events_.push_back(std::move(ev));
    });
    if (prepare) prepare(*listener_);
    thread_ = std::thread([this] { io_.run(); });
    return {};
  }

  // Stops the listener (up to 10 s for its connections to close) and ends the thread.
  void stop() {
    if (listener_ && thread_.joinable()) {
      std::promise<void> stopped;
      boost::asio::co_spawn(
          io_,
          [this, &stopped]() -> boost::asio::awaitable<void> {
            co_await listener_->stop();
            stopped.set_value();
          },
          [](std::exception_ptr) {});
      stopped.get_future().wait_for(std::chrono::seconds(10));
    }
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
    listener_.reset();
  }

  beacon::Listener& listener() { return *listener_; }
  std::thread& thread() { return thread_; }

  std::vector<api::MilestoneEvent> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }

  // `f()` on the listener's thread (the listener is single-threaded, like the engine that owns it).
  template <class T, class F>
  T on_listener(F f) {
    std::promise<T> result;
    boost::asio::post(io_, [&] {
      if constexpr (std::is_void_v<T>) {
        f();
        result.set_value();
      } else {
        result.set_value(f());
      }
    });
    return result.get_future().get();
  }

 private:
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
      io_.get_executor()};
  std::unique_ptr<beacon::Listener> listener_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<api::MilestoneEvent> events_;
};

}  // namespace bootstorm::test_support
