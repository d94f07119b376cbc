#include "common/async/sleep.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>

namespace bootstorm::async {

namespace asio = boost::asio;

asio::awaitable<bool> sleep_until(std::chrono::steady_clock::time_point until, CancelSignal cancel) {
  if (cancel.cancelled()) co_return false;
  auto ex = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(ex, until);
  // cancel() may run on another thread (the signal handler's): the callback posts to our executor, and the
  // weak pointer makes a late post harmless once the sleep is over.
  auto subscription = cancel.subscribe([weak = std::weak_ptr<asio::steady_timer>(timer), ex] {
    asio::post(ex, [weak] {
      if (auto t = weak.lock()) t->cancel();
    });
  });
  co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  co_return !cancel.cancelled();
}

asio::awaitable<bool> sleep_for(std::chrono::steady_clock::duration d, CancelSignal cancel) {
  return sleep_until(std::chrono::steady_clock::now() + d, std::move(cancel));
}

}  // namespace bootstorm::async
