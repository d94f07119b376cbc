#pragma once
// Counts outstanding tasks on one executor; wait() resumes when the count is back to zero or a deadline
// passes.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <memory>

namespace bootstorm::async {

class WaitGroup {
 public:
  explicit WaitGroup(boost::asio::any_io_executor executor)
      : timer_(std::make_shared<boost::asio::steady_timer>(std::move(executor),
                                                           std::chrono::steady_clock::time_point::max())) {}

  void add(std::size_t n = 1) { count_ += n; }
  void done() {
    if (count_ > 0 && --count_ == 0) timer_->cancel();
  }
  std::size_t outstanding() const { return count_; }

  // True when every task finished, false when `deadline` came first.
  boost::asio::awaitable<bool> wait(
      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    while (count_ > 0) {
      if (std::chrono::steady_clock::now() >= deadline) co_return false;
      // Re-armed with the deadline each round; done() cancels the wait when the count reaches zero.
      auto timer = timer_;
      timer->expires_at(deadline);
      co_await timer->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }
    co_return true;
  }

 private:
  std::shared_ptr<boost::asio::steady_timer> timer_;
  std::size_t count_ = 0;
};

}  // namespace bootstorm::async
