#include "common/async/semaphore.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace bootstorm::async {

namespace asio = boost::asio;

// A waiter parks on a timer that never expires by itself; release() cancels it after marking it granted.
struct AsyncSemaphore::Waiter {
  explicit Waiter(const asio::any_io_executor& ex) : timer(ex, asio::steady_timer::time_point::max()) {}
  asio::steady_timer timer;
  bool granted = false;
};

AsyncSemaphore::AsyncSemaphore(asio::any_io_executor executor, std::size_t capacity)
    : executor_(std::move(executor)), available_(capacity == 0 ? 1 : capacity) {}

asio::awaitable<void> AsyncSemaphore::acquire() {
  if (available_ > 0 && waiters_.empty()) {
    --available_;
    co_return;
  }
  auto waiter = std::make_shared<Waiter>(executor_);
  waiters_.push_back(waiter);
  while (!waiter->granted) co_await waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

void AsyncSemaphore::release() {
  if (!waiters_.empty()) {
    auto next = waiters_.front();
    waiters_.pop_front();
    next->granted = true;  // the permit passes directly to the waiter
    next->timer.cancel();
    return;
  }
  ++available_;
}

asio::awaitable<Permit> acquire(AsyncSemaphore& semaphore) {
  co_await semaphore.acquire();
  co_return Permit(semaphore);
}

}  // namespace bootstorm::async
