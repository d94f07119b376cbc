#pragma once
// Internal to bootstorm::sim::vcenter: turns a model callback into something a coroutine can await. Pass
// callback() to the model, then co_await wait_for(state). The coroutine sleeps on a timer that the callback
// cancels, so it is resumed through the executor and never runs inside the model's event loop; the callback
// may also fire synchronously. (Deliberately no lambdas handed across co_await: g++ 12 mis-destroys
// non-trivial lambda temporaries in co_await expressions.)
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace bootstorm::sim::vcenter {

template <class T>
struct CallbackState : std::enable_shared_from_this<CallbackState<T>> {
  explicit CallbackState(const boost::asio::any_io_executor& executor) : timer(executor) {
    timer.expires_at(boost::asio::steady_timer::time_point::max());
  }
  std::function<void(T)> callback() {
    return [self = this->shared_from_this()](T result) {
      self->value.emplace(std::move(result));
      self->timer.cancel();
    };
  }
  boost::asio::steady_timer timer;
  std::optional<T> value;
};

template <class T>
std::shared_ptr<CallbackState<T>> callback_state(const boost::asio::any_io_executor& executor) {
  return std::make_shared<CallbackState<T>>(executor);
}

template <class T>
boost::asio::awaitable<T> wait_for(std::shared_ptr<CallbackState<T>> state) {
  while (!state->value) {
    auto [ec] = co_await state->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    (void)ec;
  }
  co_return std::move(*state->value);
}

}  // namespace bootstorm::sim::vcenter
