#pragma once
// Cancellable sleeps. The CancelSignal subscription lives only as long as the sleep: a loop that sleeps
// many times leaves no callback behind in the signal.
#include <boost/asio/awaitable.hpp>
#include <chrono>

#include "common/cancel.hpp"

namespace bootstorm::async {

// Sleeps until `until` or until `cancel` fires; returns false when cancelled.
boost::asio::awaitable<bool> sleep_until(std::chrono::steady_clock::time_point until,
                                         CancelSignal cancel = {});
boost::asio::awaitable<bool> sleep_for(std::chrono::steady_clock::duration d, CancelSignal cancel = {});

}  // namespace bootstorm::async
