#pragma once
// A KubeApi that answers from memory, for unit tests of what sits above the client (list_watch, the KubeVirt
// provider, the migration): calls are answered by responders registered per method and path, watch streams
// play scripts of lines. Every call and watch is recorded so that a test can assert what was asked, in order.
#include <algorithm>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "protocol/kube/kube_api.hpp"

namespace bootstorm::kube::testing {

inline http::Response fake_response(int status, std::string body) {
  http::Response r;
  r.status = status;
  r.body = std::move(body);
  r.written_at = r.received_at = std::chrono::steady_clock::now();
  r.written_at_wall = std::chrono::system_clock::now();
  return r;
}

class FakeKubeApi final : public KubeApi {
 public:
  using Responder = std::function<Expected<http::Response>(const ApiCall& call)>;

  // One watch stream: the answer's status (a non-200 status sends `lines` as its body), the lines, then how
  // the stream ends: the server ends it (default), the connection drops (`drop`), or it stays open until
  // cancelled.
  struct WatchScript {
    int status = 200;
    std::vector<std::string> lines;
    std::optional<Error> drop;
    bool hold_open = false;
  };

  explicit FakeKubeApi(boost::asio::any_io_executor executor,
                       std::string server = "https://fake.cluster:6443")
      : executor_(std::move(executor)), server_(std::move(server)) {}

  // Calls whose method matches and whose target starts with `target_prefix` go to `responder`; the latest
  // registration wins. Unmatched calls answer 404 with a Status body.
  void on(std::string method, std::string target_prefix, Responder responder) {
    responders_.insert(responders_.begin(),
                       {std::move(method), std::move(target_prefix), std::move(responder)});
  }
  void on(std::string method, std::string target_prefix, int status, std::string body) {
    on(std::move(method), std::move(target_prefix),
       [status, body](const ApiCall&) -> Expected<http::Response> { return fake_response(status, body); });
  }
  // Streams are played in order; once they run out, a watch stays open until cancelled.
  void add_watch(WatchScript script) { watches_.push_back(std::move(script)); }

  std::vector<ApiCall> calls;                // every call, pipelined ones included
  std::vector<std::string> watch_targets;    // every watch's target
  std::vector<std::string> connect_probes;   // every connect()'s probe path
  int budget_waits = 0, budget_charges = 0;  // wait_for_budget() / charge_budget()
  std::vector<std::size_t> pipeline_sizes;   // the size of every batch (one connection each) of every burst
  std::size_t prewarmed = 0;
  bool closed = false;

  std::vector<ApiCall> calls_to(const std::string& method, const std::string& target_prefix) const {
    std::vector<ApiCall> out;
    for (const auto& c : calls)
      if (c.method == method && c.target.rfind(target_prefix, 0) == 0) out.push_back(c);
    return out;
  }

  boost::asio::awaitable<Expected<void>> connect(const ConnectProbe& probe) override {
    connect_probes.push_back(probe.path);
    co_return Expected<void>();
  }
  boost::asio::awaitable<Expected<http::Response>> call(ApiCall call, std::string) override {
    co_return answer(call);
  }
  boost::asio::awaitable<std::vector<Expected<http::Response>>> pipeline(
      std::vector<PipelinedCall> burst, std::size_t per_connection) override {
    per_connection = std::max<std::size_t>(1, per_connection);
    for (std::size_t first = 0; first < burst.size(); first += per_connection) {
      pipeline_sizes.push_back(std::min(per_connection, burst.size() - first));
    }
    std::vector<Expected<http::Response>> out;
    for (const auto& c : burst) out.push_back(answer(c.call));
    co_return out;
  }
  boost::asio::awaitable<WatchOutcome> watch(WatchRequest request, WatchEventHandler on_event,
                                             CancelSignal cancel) override {
    watch_targets.push_back(request.target);
    ++stats_.requests;
    WatchScript script;
    if (watches_.empty()) {
      script.hold_open = true;
    } else {
      script = std::move(watches_.front());
      watches_.pop_front();
    }
    WatchOutcome outcome;
    outcome.status = script.status;
    const ClientInstant connected = ClientInstant::now();
    if (script.status != 200) {
      for (const auto& line : script.lines) outcome.error_body += line;
      co_return outcome;
    }
    for (const auto& line : script.lines) {
      if (cancel.cancelled()) break;
      // Each line in a turn of its own, as lines arrive from a socket.
      co_await boost::asio::post(executor_, boost::asio::use_awaitable);
      if (cancel.cancelled()) break;
      on_event(decode_watch_line(line, request.decode), ClientInstant::now(), 0.0, connected);
    }
    if (!cancel.cancelled() && script.hold_open) {
      boost::asio::steady_timer wait(executor_, std::chrono::steady_clock::time_point::max());
      auto subscription = cancel.subscribe([&wait] { wait.cancel(); });
      if (!cancel.cancelled()) co_await wait.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }
    if (cancel.cancelled()) {
      outcome.result = make_error(ErrorKind::cancelled, "watch cancelled");
    } else if (script.drop) {
      outcome.result = *script.drop;
    }
    co_return outcome;
  }
  boost::asio::awaitable<void> wait_for_budget() override {
    ++budget_waits;
    co_return;
  }
  void charge_budget() override { ++budget_charges; }
  boost::asio::awaitable<Expected<void>> prewarm(std::size_t connections) override {
    prewarmed += connections;
    co_return Expected<void>();
  }
  boost::asio::any_io_executor watch_executor() override { return executor_; }
  void close() override { closed = true; }
  http::ApiStats stats() const override { return stats_; }
  void count_retry() override { ++stats_.retries; }
  const std::string& server() const override { return server_; }
  boost::asio::any_io_executor executor() const override { return executor_; }

 private:
  struct Route {
    std::string method;
    std::string prefix;
    Responder responder;
  };

  Expected<http::Response> answer(const ApiCall& call) {
    calls.push_back(call);
    ++stats_.requests;
    for (const auto& r : responders_) {
      if (r.method == call.method && call.target.rfind(r.prefix, 0) == 0) return r.responder(call);
    }
    return fake_response(404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})");
  }

  boost::asio::any_io_executor executor_;
  std::string server_;
  std::vector<Route> responders_;
  std::deque<WatchScript> watches_;
  http::ApiStats stats_;
};

}  // namespace bootstorm::kube::testing
