#include "protocol/http/client.hpp"
#include "providers/vsphere/transport.hpp"

namespace bootstorm::vsphere {
namespace {

// The message of http::ClientOptions::on_unreachable, kept for gone() (told from the client's thread).
struct GoneState {
  mutable std::mutex mutex;
  std::optional<std::string> message;
};

class HttpTransport final : public Transport {
 public:
  HttpTransport(boost::asio::any_io_executor executor, http::ClientOptions options,
                std::shared_ptr<GoneState> gone)
      : client_(std::move(executor), std::move(options)), gone_(std::move(gone)) {}

  boost::asio::awaitable<Expected<http::Response>> send(http::Request request) override {
    co_return co_await client_.request(std::move(request));
  }
  boost::asio::awaitable<Expected<void>> prewarm(std::size_t count) override {
    co_return co_await client_.prewarm(count);
  }
  void close_idle() override { client_.close_idle(); }
  std::optional<std::string> gone() const override {
    std::lock_guard lock(gone_->mutex);
    return gone_->message;
  }

 private:
  http::Client client_;
  std::shared_ptr<GoneState> gone_;
};

}  // namespace

std::unique_ptr<Transport> make_http_transport(boost::asio::any_io_executor executor,
                                               const api::ProviderConfig& config) {
  http::ClientOptions options;
  options.base_url = config.endpoint;
  options.tls.verify = !config.insecure_skip_verify;
  options.tls.insecure_skip_verify = config.insecure_skip_verify;
  options.tls.ca_file = config.ca_file;
  options.tls.ca_data = config.ca_data;
  options.max_connections = static_cast<std::size_t>(std::max(1, config.max_concurrent));
  // The provider retries power starts itself (RESOURCE_BUSY is a 500); the client retries idempotent reads.
  // Six attempts (backoff 0.1, 0.2, 0.4, 0.8, 1.6 s, or Retry-After): a vCenter shedding load with 503 on one
  // request in five then fails a read about once in 15,000, instead of once in 125 with three attempts.
  options.retry.max_attempts = 6;
  options.user_agent = "bootstorm-vsphere";
  auto gone = std::make_shared<GoneState>();
  options.on_unreachable = [gone, report = config.platform_gone](const std::string& message) {
    {
      std::lock_guard lock(gone->mutex);
      gone->message = message;
    }
    if (report) report(message);
  };
  return std::make_unique<HttpTransport>(std::move(executor), std::move(options), gone);
}

}  // namespace bootstorm::vsphere
