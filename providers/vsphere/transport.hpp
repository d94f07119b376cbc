#pragma once
// The provider's only way to the network: one origin, pooled connections. The production implementation
// wraps http::Client (make_http_transport); unit tests substitute an in-memory fake vCenter.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/async/token_bucket.hpp"
#include "common/expected.hpp"
#include "protocol/http/types.hpp"
#include "providers/api/provider.hpp"

namespace bootstorm::vsphere {

class Transport {
 public:
  virtual ~Transport() = default;
  // One exchange. Any HTTP status is a Response; transport failures (connect, TLS, timeout) are Errors.
  virtual boost::asio::awaitable<Expected<http::Response>> send(http::Request request) = 0;
  // Opens up to `count` connections ahead of the storm.
  virtual boost::asio::awaitable<Expected<void>> prewarm(std::size_t count) = 0;
  // Closes idle pooled connections (after logout).
  virtual void close_idle() = 0;
  // Why the server is gone, once connections to it kept failing (http::ClientOptions::on_unreachable);
  // nullopt while it answers. Waits that cannot end without the server ask it instead of their deadline.
  virtual std::optional<std::string> gone() const { return std::nullopt; }
};

// http::Client on config.endpoint with the config's TLS settings (verification on unless
// insecure_skip_verify), max_connections = max_concurrent. Throws std::invalid_argument for a malformed
// endpoint and std::runtime_error for unreadable CA files (fatal setup errors).
std::unique_ptr<Transport> make_http_transport(boost::asio::any_io_executor executor,
                                               const api::ProviderConfig& config);

// Opens `count` connections before the storm, so that no start waits for a TLS handshake (both providers'
// prepare_storm). The error names the count and vCenter.
boost::asio::awaitable<Expected<void>> open_storm_connections(Transport& transport, std::size_t count,
                                                              const std::string& endpoint);

// One exchange of a session (REST or vim25) as the provider's statistics count it: the budget step
// (async::pay_for_call on `limiter`, which may be nullptr), then `request`; a transport failure is an error,
// resends by the client are retries, and every answer counts in ApiStats::note_answer. Whether an answer is
// an error is the session's to count.
inline boost::asio::awaitable<Expected<http::Response>> send_counted(Transport& transport,
                                                                     http::Request request,
                                                                     async::RateLimiter* limiter,
                                                                     async::CallPacing pacing,
                                                                     http::ApiStats& stats) {
  co_await async::pay_for_call(limiter, pacing);
  ++stats.requests;
  auto resp = co_await transport.send(std::move(request));
  if (!resp) {
    ++stats.errors;
  } else {
    if (resp->attempts > 1) stats.retries += static_cast<std::uint64_t>(resp->attempts - 1);
    for (const auto& earlier : resp->retried) stats.note_answer(earlier.status, earlier.headers);
    stats.note_answer(resp->status, resp->headers);
  }
  co_return resp;
}

}  // namespace bootstorm::vsphere
