#pragma once
// A counting semaphore for coroutines on one executor (no locks: every caller runs on that executor).
// Waiters are served in arrival order, so a burst of acquirers proceeds in the order it came.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <deque>
#include <memory>

namespace bootstorm::async {

class AsyncSemaphore {
 public:
  // A capacity of 0 is taken as 1: a semaphore that admits nobody would hang its users.
  AsyncSemaphore(boost::asio::any_io_executor executor, std::size_t capacity);
  AsyncSemaphore(const AsyncSemaphore&) = delete;
  AsyncSemaphore& operator=(const AsyncSemaphore&) = delete;

  boost::asio::awaitable<void> acquire();
  // Hands the permit to the longest waiter, or returns it to the pool.
  void release();

  std::size_t available() const { return available_; }
  std::size_t waiting() const { return waiters_.size(); }

 private:
  struct Waiter;
  boost::asio::any_io_executor executor_;
  std::size_t available_;
  std::deque<std::shared_ptr<Waiter>> waiters_;
};

// Releases one permit on scope exit, also when the coroutine frame holding it is destroyed.
class Permit {
 public:
  explicit Permit(AsyncSemaphore& semaphore) : semaphore_(&semaphore) {}
  Permit(Permit&& other) noexcept : semaphore_(other.semaphore_) { other.semaphore_ = nullptr; }
  Permit(const Permit&) = delete;
  Permit& operator=(const Permit&) = delete;
  Permit& operator=(Permit&&) = delete;
  ~Permit() {
    if (semaphore_) semaphore_->release();
  }

 private:
  AsyncSemaphore* semaphore_;
};

// Acquires a permit and returns its owner: `auto permit = co_await acquire(semaphore);`.
boost::asio::awaitable<Permit> acquire(AsyncSemaphore& semaphore);

}  // namespace bootstorm::async
