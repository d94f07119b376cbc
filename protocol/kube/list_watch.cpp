// List + watch with resume, bookmarks, 410 re-list and backoff (see list_watch.hpp).
#include "protocol/kube/list_watch.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <random>

#include "common/async/sleep.hpp"
#include "protocol/http/types.hpp"
#include "protocol/kube/object_calls.hpp"
#include "protocol/kube/status_error.hpp"

namespace bootstorm::kube {
namespace asio = boost::asio;
using asio::awaitable;
using std::chrono::steady_clock;

std::chrono::steady_clock::duration retry_backoff(int attempt) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  auto base = std::chrono::milliseconds(100) * (1 << std::clamp(attempt - 1, 0, 6));
  base = std::min(base, std::chrono::milliseconds(5000));
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  return std::chrono::duration_cast<steady_clock::duration>(base * jitter(rng));
}

awaitable<Expected<void>> list_watch(KubeApi& api, ListWatchRequest request, ListWatchHandlers h,
                                     CancelSignal cancel) {
  const std::string& what = request.what;
  auto done = [&h] { return h.done && h.done(); };
  bool need_list = true, first_list = true, after_drop = false;
  std::string rv;
  int failures = 0;
  // A server that answers 410 to every watch must not make us re-list in a tight loop.
  int consecutive_gone = 0;
  std::optional<Error> last_error;
  auto give_up = [&]() -> bool {
    return request.max_failures > 0 && failures > request.max_failures && last_error.has_value();
  };
  while (true) {
    if (cancel.cancelled()) co_return make_error(ErrorKind::cancelled, "watching " + what + ": interrupted");
    if (done()) co_return Expected<void>();
    if (request.deadline && steady_clock::now() >= *request.deadline) {
      co_return make_error(ErrorKind::timeout, "watching " + what + ": timed out");
    }
    if (give_up()) co_return *last_error;
    if (failures > 0) {
      auto pause = retry_backoff(failures);
      if (request.deadline)
        pause = std::min<steady_clock::duration>(pause, *request.deadline - steady_clock::now());
      co_await async::sleep_for(pause, cancel);
      const bool past_deadline = request.deadline && steady_clock::now() >= *request.deadline;
      if (cancel.cancelled() || done() || past_deadline) continue;  // the checks above answer
    }
    if (need_list) {
      // Named first: g++ 12 miscompiles aggregate temporaries inside a co_await expression.
      const ListOptions list_options{request.page_size, request.decode, true};
      auto list =
          co_await list_objects(api, request.collection, request.query, "listing " + what, list_options);
      if (!list) {
        last_error = list.error();
        ++failures;
        if (!give_up()) spdlog::warn("{}; retrying", list.error().what());
        continue;
      }
      rv = std::move(list->resource_version);
      h.on_list(list->items, ClientInstant::now(), !first_list);
      first_list = false;
      need_list = false;
      after_drop = false;
      failures = 0;
      continue;
    }
    long long timeout_seconds = request.watch_timeout_seconds;
    if (request.deadline) {
      const auto remaining =
          std::chrono::duration_cast<std::chrono::seconds>(*request.deadline - steady_clock::now()).count();
      timeout_seconds = std::clamp<long long>(remaining + 1, 1, timeout_seconds);
    }
    WatchRequest watch;
    watch.target = request.collection + "?" + (request.query.empty() ? "" : request.query + "&") +
                   "watch=1&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(timeout_seconds) +
                   (rv.empty() ? "" : "&resourceVersion=" + http::url_encode(rv));
    watch.decode = request.decode;
    watch.own_thread = request.own_thread;
    watch.lateness = request.lateness;
    CancelSignal stream_cancel;
    auto stream_subscription = cancel.subscribe([stream_cancel]() mutable { stream_cancel.cancel(); });
    std::optional<asio::steady_timer> deadline_timer;
    if (request.deadline) {
      deadline_timer.emplace(api.executor(), *request.deadline);
      deadline_timer->async_wait([stream_cancel](boost::system::error_code ec) mutable {
        if (!ec) stream_cancel.cancel();
      });
    }
    bool gone = false;
    std::size_t lines = 0;
    const bool catch_up_possible = after_drop;
    // Everything after the stamp and the decoding: resumption bookkeeping, handing the event over. On the
    // watch thread's path it runs on this coroutine's executor, before watch() returns.
    WatchEventHandler on_line = [&](const Expected<WatchEvent>& ev, ClientInstant at, double lateness_s,
                                    ClientInstant connected_at) {
      ++lines;
      if (!ev) {
        spdlog::warn("watch of {}: {}", what, ev.error().what());
        return;
      }
      if (h.on_alive) h.on_alive(at);
      if (ev->type == WatchEvent::Type::error) {
        if (ev->error_code == 410) {
          gone = true;
        } else {
          spdlog::warn("watch of {} reported an error (code {}): {}", what, ev->error_code,
                       ev->error_message);
        }
        stream_cancel.cancel();
        return;
      }
      if (std::string v = ev->resource_version(); !v.empty()) rv = v;
      if (ev->type == WatchEvent::Type::bookmark) return;
      const bool catch_up = catch_up_possible && at.mono - connected_at.mono < kCatchUpWindow;
      if (h.on_event) h.on_event(*ev, at, catch_up, lateness_s);
      if (done()) stream_cancel.cancel();
    };
    WatchOutcome outcome = co_await api.watch(std::move(watch), on_line, stream_cancel);
    if (deadline_timer) deadline_timer->cancel();
    if (cancel.cancelled() || done()) continue;  // the checks at the top answer
    if (lines > (gone ? 1u : 0u)) consecutive_gone = 0;
    if (outcome.status == 410 || gone) {
      spdlog::info("watch of {}: resourceVersion {} is gone (410); re-listing", what, rv);
      need_list = true;
      failures = consecutive_gone++;
      last_error =
          make_error(ErrorKind::api, "watching " + what + ": the server answered 410 Gone to every watch");
      continue;
    }
    if (outcome.status != 0 && outcome.status != 200) {
      Error e = status_error(outcome.status, outcome.error_body, "watching " + what);
      last_error = e;
      ++failures;
      if (!give_up()) spdlog::warn("{}; retrying", e.what());
      continue;
    }
    if (!outcome.result) {
      if (outcome.result.error().kind == ErrorKind::cancelled) {
        // Our own cancel: after an ERROR event, or at the deadline (answered at the top).
        last_error = make_error(ErrorKind::api, "watching " + what + ": the server reported errors");
        ++failures;
        continue;
      }
      spdlog::info("watch of {} dropped ({}); resuming from resourceVersion {}", what,
                   outcome.result.error().what(), rv);
      last_error = outcome.result.error();
      after_drop = true;
      failures = lines > 0 ? 0 : failures + 1;
      if (rv.empty()) need_list = true;
      continue;
    }
    // The server ended the watch (timeoutSeconds): resume where it stopped.
    after_drop = false;
    failures = lines > 0 || outcome.status == 200 ? 0 : failures + 1;
    if (rv.empty()) need_list = true;
  }
}

}  // namespace bootstorm::kube
