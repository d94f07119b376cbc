#pragma once
// KubeApi over bootstorm::http::Client: kubeconfig credentials kept valid (CredentialCache: token files,
// exec plugins, one retry after a 401 when they can be refreshed), the request budget, dry-run, TLS errors
// that say which CA was used and what to change, and a watch thread of its own for timing-critical streams.
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "common/async/token_bucket.hpp"
#include "protocol/http/client.hpp"
#include "protocol/kube/kube_api.hpp"
#include "protocol/kube/kube_config.hpp"

namespace bootstorm::kube {

class WatchThread;

struct HttpKubeOptions {
  double requests_per_second = 0;  // <= 0: no budget
  double burst = 1;                // tokens available at once
  std::size_t max_connections = 8;
  std::size_t watch_connections = 4;  // of the watch thread's own client
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  std::string user_agent = "bootstorm";
  // Changing calls (anything but GET and HEAD) are logged and answered 200/201 "{}" without being sent.
  bool dry_run = false;
  // Told once when the API server is gone (either client's connections failing in a row: see
  // http::ClientOptions::on_unreachable), from the thread that noticed.
  std::function<void(const std::string& message)> on_gone;
};

class HttpKubeApi final : public KubeApi {
 public:
  HttpKubeApi(boost::asio::any_io_executor executor, KubeClientConfig config, HttpKubeOptions options);
  ~HttpKubeApi() override;
  HttpKubeApi(const HttpKubeApi&) = delete;
  HttpKubeApi& operator=(const HttpKubeApi&) = delete;

  boost::asio::awaitable<Expected<void>> connect(const ConnectProbe& probe) override;
  boost::asio::awaitable<Expected<http::Response>> call(ApiCall call, std::string what) override;
  boost::asio::awaitable<std::vector<Expected<http::Response>>> pipeline(std::vector<PipelinedCall> calls,
                                                                         std::size_t per_connection) override;
  boost::asio::awaitable<WatchOutcome> watch(WatchRequest request, WatchEventHandler on_event,
                                             CancelSignal cancel) override;
  boost::asio::awaitable<void> wait_for_budget() override;
  void charge_budget() override;
  boost::asio::awaitable<Expected<void>> prewarm(std::size_t connections) override;
  boost::asio::any_io_executor watch_executor() override;
  void close() override;

  http::ApiStats stats() const override { return stats_; }
  void count_retry() override { stats_.retries++; }
  const std::string& server() const override { return config_.server; }
  boost::asio::any_io_executor executor() const override { return executor_; }
  std::optional<std::string> gone() const override {
    std::lock_guard lock(gone_->mutex);
    return gone_->message;
  }

 private:
  Expected<void> refresh_auth();
  http::Request request_for(const ApiCall& call) const;
  Error tls_aware(Error e, const std::string& what) const;
  std::string ca_description() const;
  void count(const Expected<http::Response>& resp);
  // Logs each warning text the server sends (Warning headers) the first time it comes, naming `what` drew it:
  // a field the server dropped must not pass unseen. ApiStats counts them all.
  void log_warnings(const Expected<http::Response>& resp, const std::string& what);
  // The watch thread, started at the first need; false when it cannot start (then watches share the loop).
  bool ensure_watch_thread();
  bool can_refresh_credentials() const;
  boost::asio::awaitable<WatchOutcome> watch_on_own_thread(WatchRequest request, WatchEventHandler on_event,
                                                           CancelSignal cancel, http::Request req);
  boost::asio::awaitable<WatchOutcome> watch_here(WatchRequest request, WatchEventHandler on_event,
                                                  CancelSignal cancel, http::Request req);

  boost::asio::any_io_executor executor_;
  KubeClientConfig config_;
  HttpKubeOptions options_;
  std::string prefix_;  // the server URL's path, prepended to every target
  std::optional<CredentialCache> creds_;
  std::unique_ptr<http::Client> client_;
  // Shared with both clients' on_unreachable (the watch thread's client reports from its own thread).
  struct GoneState {
    mutable std::mutex mutex;
    std::optional<std::string> message;
  };
  std::shared_ptr<GoneState> gone_ = std::make_shared<GoneState>();
  std::optional<http::ClientOptions> watch_client_options_;
  std::shared_ptr<WatchThread> watch_thread_;  // started by the first watch that asks for its own thread
  std::string current_auth_;
  async::RateLimiter budget_;
  http::ApiStats stats_;
  std::set<std::string> warned_;  // warning texts logged so far
};

}  // namespace bootstorm::kube
