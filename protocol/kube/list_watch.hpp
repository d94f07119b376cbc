#pragma once
// The one list + watch loop of bootstorm, over any KubeApi: list a collection once, then watch it from the
// list's resourceVersion, resume a dropped or ended watch where it stopped, take bookmarks, re-list after
// 410 Gone, and back off (with jitter) while the server fails.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "protocol/kube/kube_api.hpp"

namespace bootstorm::kube {

struct ListWatchRequest {
  std::string collection;  // e.g. /apis/kubevirt.io/v1/namespaces/NS/virtualmachineinstances
  std::string query;       // labelSelector=... / fieldSelector=..., without '?' ("" = everything)
  std::string what;        // for logs and errors: "VirtualMachineInstances"
  WatchDecode decode = WatchDecode::full;
  std::size_t page_size = 0;        // list pages of this many items (limit/continue); 0 = one list request
  int watch_timeout_seconds = 300;  // asked of the server per watch request
  // Give up with Error timeout at this instant; nullopt = until done() or cancel.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Consecutive failures (errors, non-200 answers, failed lists) before the loop gives up with the last
  // error; 0 = never give up (retry with backoff until done() or cancel).
  int max_failures = 0;
  // Read the watch streams on the client's watch thread (see WatchRequest).
  bool own_thread = false;
  std::shared_ptr<LatenessMonitor> lateness;  // see WatchRequest
};

struct ListWatchHandlers {
  // Every list's items; `relist` is false for the first list.
  std::function<void(const std::vector<nlohmann::json>& items, ClientInstant at, bool relist)> on_list;
  // Every ADDED, MODIFIED and DELETED event. `catch_up`: the event came within the first moments of a stream
  // resumed after a drop, so it may describe a change made while no stream was open (its instant is then
  // only an upper bound). `lateness_s`: see LatenessMonitor (0 without one).
  std::function<void(const WatchEvent& event, ClientInstant at, bool catch_up, double lateness_s)> on_event;
  // Any line at all, bookmarks included: the stream is alive at `at`.
  std::function<void(ClientInstant at)> on_alive;
  // Checked after every list and event: true ends the loop successfully.
  std::function<bool()> done;
};

// A resumed stream's events within this window of its connection may be catch-up.
inline constexpr auto kCatchUpWindow = std::chrono::milliseconds(500);

// Every list request spends a turn of the request budget without waiting for it: the watch needs it at once.
// Returns success when done() became true; Error cancelled when `cancel` fired first, Error timeout at the
// deadline, or the last error after max_failures consecutive failures.
boost::asio::awaitable<Expected<void>> list_watch(KubeApi& api, ListWatchRequest request,
                                                  ListWatchHandlers handlers, CancelSignal cancel);

// The backoff before the `attempt`-th retry: 100 ms doubling to 5 s, with +-20 % jitter.
std::chrono::steady_clock::duration retry_backoff(int attempt);

}  // namespace bootstorm::kube
