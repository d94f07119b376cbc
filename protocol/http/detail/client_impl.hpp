#pragma once
// Internal to protocol/http: Client::Impl, the state behind http::Client, and the helper types it is built
// from. Its member functions are defined by job: client.cpp (construction), client_pool.cpp (pool and
// connect), client_exchange.cpp (one request with retries), client_pipeline.cpp (HTTP/1.1 pipelining),
// client_stream.cpp (line streaming). read_response is defined here because the exchange and the pipeline
// both read responses with it. Included only by those files (it brings in Beast).
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "protocol/http/client.hpp"
#include "protocol/http/detail/beast_names.hpp"
#include "protocol/http/types.hpp"

namespace bootstorm::http {
namespace detail {

using RequestMessage = bhttp::request<bhttp::string_body>;

struct Connection {
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  Clock::time_point last_used{};

  beast::tcp_stream& tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
  void close() {
    boost::system::error_code ec;
    tcp().socket().close(ec);
  }
  // An idle keep-alive connection is only worth reusing if the peer has not closed it and, for plain HTTP,
  // has sent nothing unsolicited: a non-blocking peek tells without consuming data. Over TLS, pending bytes
  // are normal (TLS 1.3 session tickets arrive after the handshake), so only EOF and errors count there; a
  // close_notify that slipped through is caught by the resend-before-any-response-byte rule.
  bool looks_alive() {
    auto& socket = tcp().socket();
    if (!socket.is_open() || buffer.size() != 0) return false;
    char byte;
    ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return false;
    if (n > 0) return tls != nullptr;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
};
using ConnectionPtr = std::unique_ptr<Connection>;

// A request waiting for a pooled connection: the releaser hands over either an idle connection or the right
// to open a new one (a slot), then cancels the timer to wake the waiter.
struct Waiter {
  explicit Waiter(const net::any_io_executor& executor) : timer(executor) {}
  net::steady_timer timer;
  ConnectionPtr connection;
  bool slot = false;
};

struct ConnectTurn {
  explicit ConnectTurn(const net::any_io_executor& executor) : timer(executor) {}
  net::steady_timer timer;
  bool granted = false;
};

struct AttemptFailure {
  Error error;
  bool nothing_received = false;  // the failure happened before any response byte: safe to resend
};

inline bool default_idempotent(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" || method == "OPTIONS";
}

inline bool is_retryable_status(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

inline Headers to_headers(const bhttp::fields& fields) {
  Headers headers;
  for (const auto& field : fields)
    headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  return headers;
}

inline bool is_timeout(const boost::system::error_code& ec) {
  return ec == beast::error::timeout;
}

}  // namespace detail

struct Client::Impl : std::enable_shared_from_this<Impl> {
  Impl(boost::asio::any_io_executor ex, ClientOptions opts);

  boost::asio::any_io_executor executor;
  ClientOptions options;
  Url origin;
  bool tls_enabled = false;
  bool insecure = false;
  std::string host_header;
  std::string base_path;  // path prefix of base_url, prepended to every target
  std::string tls_name;
  std::optional<boost::asio::ssl::context> ssl_context;
  std::optional<detail::tcp::endpoint> literal_endpoint;
  std::vector<detail::ConnectionPtr> idle;  // most recently used last
  std::size_t slots = 0;                    // pooled connections open or being opened (counts toward the cap)
  std::deque<std::shared_ptr<detail::Waiter>> waiters;
  std::size_t connecting = 0;  // connections between TCP connect and the end of the TLS handshake
  std::deque<std::shared_ptr<detail::ConnectTurn>> connect_queue;
  ClientStats stats;
  std::mt19937_64 rng;
  // Connection openings that failed in a row, since when, and whether on_unreachable was told.
  std::size_t failed_openings = 0;
  detail::Clock::time_point failing_since{};
  bool unreachable_reported = false;

  std::string where(const Request& request) const {
    return request.method + " " + origin.origin() + base_path + request.target;
  }

  void connection_closed() {
    if (stats.open_connections > 0) --stats.open_connections;
  }

  void count_open() {
    ++stats.open_connections;
    stats.peak_connections = std::max(stats.peak_connections, stats.open_connections);
  }

  // --- connection pool and connect (client_pool.cpp) ---

  // Gives a freed slot to the first waiter, if any.
  void grant_slot();
  void discard(detail::ConnectionPtr connection);
  void release(detail::ConnectionPtr connection, bool reusable);
  // Waits for a turn to open a connection (ClientOptions::max_connecting); false once the deadline passed.
  detail::awaitable<bool> enter_connect(detail::Clock::time_point deadline);
  void leave_connect();
  // Opens a connection (TCP, then TLS with verification) and returns it; does not touch the pool counters.
  detail::awaitable<Expected<detail::ConnectionPtr>> connect(detail::Clock::time_point deadline,
                                                             const std::string& what);
  // connect()'s work once it has its turn.
  detail::awaitable<Expected<detail::ConnectionPtr>> open_connection(detail::Clock::time_point deadline,
                                                                     const std::string& what);
  // Counts a connection opening toward ClientOptions::on_unreachable (a success resets the count).
  void note_opening(const Expected<detail::ConnectionPtr>& opened);
  // A pooled connection: an idle one if alive, else a new one under the cap, else wait in line for either.
  detail::awaitable<Expected<detail::ConnectionPtr>> acquire(detail::Clock::time_point deadline, bool& reused,
                                                             const std::string& what);
  detail::awaitable<Expected<void>> prewarm(std::size_t count);
  void close_idle();

  // --- one request/response exchange with retries (client_exchange.cpp) ---

  detail::AttemptFailure attempt_failure(const boost::system::error_code& ec, bool nothing_received,
                                         const char* phase, const Request& request) const;
  template <class Stream>
  detail::awaitable<std::optional<detail::AttemptFailure>> exchange(
      Stream& stream, detail::Connection& connection, detail::RequestMessage& message,
      detail::Clock::time_point deadline, const Request& request, Response& response, bool& keep_alive);
  // Reads one response from the connection into `response` (status, headers, body, received_at).
  template <class Stream>
  detail::awaitable<std::optional<detail::AttemptFailure>> read_response(
      Stream& stream, detail::Connection& connection, detail::Clock::time_point deadline,
      const Request& request, Response& response, bool& keep_alive);
  detail::RequestMessage build_message(Request& request) const;
  std::chrono::milliseconds backoff_delay(int retry_index);
  // The wait before a throttled request is sent again: Retry-After (at least the initial backoff) and up to
  // half as long again.
  std::chrono::milliseconds throttled_delay(std::chrono::milliseconds retry_after);
  detail::awaitable<Expected<Response>> run(Request request);

  // --- HTTP/1.1 pipelining, RFC 9112 section 9.3.2 (client_pipeline.cpp) ---

  struct Batch;
  template <class Stream>
  detail::awaitable<bool> pipeline_exchange(Stream& stream, detail::Connection& connection,
                                            const std::string& wire, detail::Clock::time_point deadline,
                                            bool reused, Batch& batch);
  static detail::awaitable<void> redo_one(std::shared_ptr<Impl> self, std::shared_ptr<Batch> batch,
                                          std::size_t index);
  detail::awaitable<std::vector<Expected<Response>>> pipeline(std::vector<Request> requests);

  // --- line streaming (client_stream.cpp) ---

  struct StreamState;
  template <class Stream>
  detail::awaitable<Expected<void>> read_lines(Stream& stream, StreamState& state,
                                               detail::Clock::time_point deadline,
                                               detail::RequestMessage& message, const Request& request,
                                               const HeadersHandler& on_headers, const LineHandler& on_line);
  detail::awaitable<Expected<void>> stream(Request request, HeadersHandler on_headers, LineHandler on_line,
                                           CancelSignal cancel);
};

template <class Stream>
detail::awaitable<std::optional<detail::AttemptFailure>> Client::Impl::read_response(
    Stream& stream, detail::Connection& connection, detail::Clock::time_point deadline,
    const Request& request, Response& response, bool& keep_alive) {
  using namespace detail;
  auto& tcp_stream = connection.tcp();
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(boost::none);
  if (request.method == "HEAD") parser.skip(true);
  tcp_stream.expires_at(deadline);
  auto [header_ec, header_bytes] =
      co_await bhttp::async_read_header(stream, connection.buffer, parser, use_nothrow);
  if (header_ec) {
    co_return attempt_failure(header_ec, !parser.got_some() && connection.buffer.size() == 0,
                              "reading the response", request);
  }
  response.received_at = Clock::now();
  if (!parser.is_done()) {
    tcp_stream.expires_at(deadline);
    auto [body_ec, body_bytes] = co_await bhttp::async_read(stream, connection.buffer, parser, use_nothrow);
    if (body_ec) co_return attempt_failure(body_ec, false, "reading the response body", request);
  }
  auto& message_in = parser.get();
  response.status = static_cast<int>(message_in.result_int());
  response.headers = to_headers(message_in.base());
  response.body = std::move(message_in.body());
  keep_alive = message_in.keep_alive() && parser.is_done();
  co_return std::nullopt;
}

}  // namespace bootstorm::http
