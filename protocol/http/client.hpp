#pragma once
// Async HTTP/1.1 client on Boost.Beast + Asio C++20 coroutines + OpenSSL.
//
// One Client per origin (scheme://host:port). It keeps a keep-alive pool with a hard cap on concurrent
// connections (requests beyond the cap wait for a free connection, they are not refused), applies a deadline
// to every request, verifies TLS certificates and hostnames by default (SNI always sent), and retries what is
// safe to retry: idempotent requests on 429/502/503/504 and on a connection reset of a reused connection,
// with exponential backoff + jitter, honouring Retry-After.
//
// All member functions must be called from the executor the client was created with (single strand model:
// each component runs its own io_context thread).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "protocol/http/tls.hpp"
#include "protocol/http/types.hpp"

namespace bootstorm::http {

struct RetryPolicy {
  int max_attempts = 4;  // 1 = no retry
  // 429 with Retry-After (API Priority and Fairness, a proxy's limit): the request was refused before it was
  // handled, and the server said when to come back. Those resends spend none of max_attempts, up to this
  // many, each after Retry-After and up to half as long again, so that what was refused together does not
  // come back together.
  int max_throttled_attempts = 30;
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  double jitter = 0.2;  // +/- fraction of each backoff
  bool retry_non_idempotent_on_503 =
      false;  // vCenter power start: opt-in per request via Request::idempotent
};

struct ClientOptions {
  std::string base_url;  // "https://127.0.0.1:8443" — the origin; Request::target is appended
  TlsClientOptions tls;
  std::size_t max_connections = 64;  // cap on concurrent connections to the origin
  // Cap on connections being opened (TCP connect + TLS handshake) at the same time. Opening thousands at
  // once overflows the server's accept queue (SOMAXCONN, 4096 on Linux): the kernel drops the handshakes
  // it cannot queue and the client sees resets a minute later. 10,000 creates on a 10,000-connection pool
  // did exactly that against the lab; queued here they open at the server's handshake rate instead.
  std::size_t max_connecting = 64;
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(30)};  // pooled connections older are closed
  RetryPolicy retry;
  std::string user_agent = "bootstorm";
  Headers default_headers;  // sent with every request (e.g. Authorization); values are never logged
  // The endpoint is gone: once `unreachable_failures` connection openings in a row (resolve, TCP connect,
  // TLS handshake, timeouts included) have failed over at least `unreachable_span`, `on_unreachable` is
  // called with a sentence naming the endpoint, the count, the span and the last failure. Once per outage:
  // again only after a connection opened. Called on the client's executor. During the outage a request whose
  // connection cannot be opened fails at once instead of retrying (a wait for a server declared gone only
  // delays the run's end).
  std::size_t unreachable_failures = 5;
  std::chrono::milliseconds unreachable_span{std::chrono::seconds(10)};
  std::function<void(const std::string& message)> on_unreachable;
};

struct ClientStats {
  std::uint64_t requests = 0;  // attempts written
  std::uint64_t connections_opened = 0;
  std::uint64_t retries = 0;
  std::size_t open_connections = 0;
  std::size_t peak_connections = 0;
  std::size_t peak_connecting =
      0;  // most connections being opened at once (<= ClientOptions::max_connecting)
};

class Client {
 public:
  // Throws std::invalid_argument on a malformed base_url and std::runtime_error on unreadable TLS files
  // (fatal setup errors).
  Client(boost::asio::any_io_executor executor, ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // One request/response exchange with pooling, deadline and retry. Expected failures (connect refused, TLS,
  // timeout, reset) come back as Error; any HTTP status (including 4xx/5xx after retries) is a Response.
  boost::asio::awaitable<Expected<Response>> request(Request request);

  // HTTP/1.1 pipelining: writes all `requests` back to back in one write on one pooled connection, then reads
  // the responses in order; results come back in the order of the requests. One connection carries a whole
  // burst this way (a storm's 10,000 starts need not hold 10,000 TLS connections, ~90 KB each). Only
  // idempotent requests may be pipelined (std::invalid_argument otherwise): a request whose response did not
  // come — the connection dropped, or the server closed it after an earlier response — or came with a
  // retryable status is sent again on its own through request(), and its `attempts` counts the pipelined
  // try. Every request's written_at is the instant the whole batch was written. The server processes a
  // connection's requests one after another, so the last response of a deep batch waits for the others.
  boost::asio::awaitable<std::vector<Expected<Response>>> pipeline(std::vector<Request> requests);

  // Streams the response body line by line (newline-delimited; a final unterminated line is delivered too).
  // `on_headers` is called once with the status and headers before any line; for a non-2xx status the body
  // is read whole and delivered as lines as well. No body-size limit. Returns when the server ends the
  // stream, the connection drops (Error io), or `cancel` fires (Error cancelled). Streams use their own
  // connection, outside the pool cap. Streams are never retried (the caller resumes from its own position).
  using LineHandler = std::function<void(std::string_view line)>;
  using HeadersHandler = std::function<void(int status, const Headers& headers)>;
  boost::asio::awaitable<Expected<void>> stream(Request request, HeadersHandler on_headers,
                                                LineHandler on_line, CancelSignal cancel = CancelSignal());

  // Opens `count` pooled connections ahead of time (StartBarrier: no TCP/TLS handshake at fire time),
  // raising the pool's cap (max_connections) to `count` when it is lower: a start burst is wider than the
  // budget's concurrency, and every connection it needs must be open before the barrier opens.
  boost::asio::awaitable<Expected<void>> prewarm(std::size_t count);

  // Closes idle pooled connections; in-flight requests finish. The client stays usable.
  void close_idle();

  const ClientStats& stats() const;
  const ClientOptions& options() const;
  void set_default_header(std::string name, std::string value);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace bootstorm::http
