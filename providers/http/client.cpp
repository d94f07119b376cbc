// HTTP/1.1 client: keep-alive pool with a connection cap, per-request deadline, TLS verification, retries,
// line streaming. Beast stays in this file.
#include "providers/http/client.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cerrno>
#include <charconv>
#include <deque>
#include <random>
#include <sstream>
#include <stdexcept>

#include "common/log.hpp"
#include "providers/http/detail/beast_names.hpp"
#include "providers/http/detail/tls_context.hpp"

namespace bootstorm::http {
namespace {

using namespace detail;  // beast_names.hpp: the Beast and Asio names of this folder

// A reused connection that turns out to be dead before any response byte is retried on another connection
// without consuming an attempt; this bounds how many dead pooled connections one request may run into.
constexpr int kMaxStaleRetries = 8;
constexpr std::chrono::seconds kMaxRetryAfter{300};
constexpr std::chrono::seconds kPrewarmTimeout{30};
constexpr std::size_t kIdleBufferBytes = 8 * 1024;

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

bool is_sensitive_header(std::string_view name) {
  std::string lower(name);
  for (auto& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return lower == "authorization" || lower == "proxy-authorization" || lower == "cookie" ||
         lower == "vmware-api-session-id" || lower.find("token") != std::string::npos;
}

void register_header_secret(std::string_view name, std::string_view value) {
  if (!is_sensitive_header(name)) return;
  log::register_secret(value);
  if (auto space = value.find(' '); space != std::string_view::npos)
    log::register_secret(value.substr(space + 1));
}

bool default_idempotent(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" || method == "OPTIONS";
}

bool is_retryable_status(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

// Retry-After in delta-seconds; the HTTP-date form is not used by the APIs we talk to and falls back to
// backoff.
std::optional<std::chrono::milliseconds> parse_retry_after(const Response& response) {
  auto value = response.header("Retry-After");
  if (!value) return std::nullopt;
  std::string_view text = *value;
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  long long seconds = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || ptr != text.data() + text.size() || seconds < 0) return std::nullopt;
  return std::chrono::milliseconds(std::min<long long>(seconds, kMaxRetryAfter.count()) * 1000);
}

Headers to_headers(const bhttp::fields& fields) {
  Headers headers;
  for (const auto& field : fields)
    headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  return headers;
}

bool is_timeout(const boost::system::error_code& ec) {
  return ec == beast::error::timeout;
}

}  // namespace

struct Client::Impl : std::enable_shared_from_this<Impl> {
  Impl(net::any_io_executor ex, ClientOptions opts) : executor(std::move(ex)), options(std::move(opts)) {
    auto parsed = parse_url(options.base_url);
    if (!parsed) {
      throw std::invalid_argument("invalid base URL '" + options.base_url +
                                  "': expected an absolute http:// or https:// URL");
    }
    origin = *parsed;
    tls_enabled = origin.scheme == "https";
    bool default_port = origin.port == (tls_enabled ? 443 : 80);
    std::string host_part =
        origin.host.find(':') != std::string::npos ? "[" + origin.host + "]" : origin.host;
    host_header = default_port ? host_part : host_part + ":" + std::to_string(origin.port);
    base_path = origin.target == "/" ? std::string() : origin.target;
    if (!base_path.empty() && base_path.back() == '/') base_path.pop_back();
    tls_name = options.tls.server_name.empty() ? origin.host : options.tls.server_name;
    insecure = options.tls.insecure_skip_verify || !options.tls.verify;
    if (options.max_connections == 0) options.max_connections = 1;
    if (options.max_connecting == 0) options.max_connecting = 1;
    if (options.retry.max_attempts < 1) options.retry.max_attempts = 1;
    if (tls_enabled) {
      log::register_secret(options.tls.client_key_data);
      ssl_context.emplace(detail::make_client_context(options.tls));
      if (insecure) {
        spdlog::warn(
            "TLS certificate verification is DISABLED for {} (insecure mode): the connection is "
            "encrypted but the server is not authenticated; use a CA file instead outside a lab",
            origin.origin());
      }
    }
    for (const auto& [name, value] : options.default_headers) register_header_secret(name, value);
    boost::system::error_code ec;
    auto address = net::ip::make_address(origin.host, ec);
    if (!ec) literal_endpoint = tcp::endpoint(address, origin.port);
    rng.seed(std::random_device{}());
  }

  net::any_io_executor executor;
  ClientOptions options;
  Url origin;
  bool tls_enabled = false;
  bool insecure = false;
  std::string host_header;
  std::string base_path;  // path prefix of base_url, prepended to every target
  std::string tls_name;
  std::optional<ssl::context> ssl_context;
  std::optional<tcp::endpoint> literal_endpoint;
  std::vector<ConnectionPtr> idle;  // most recently used last
  std::size_t slots = 0;            // pooled connections open or being opened (counts toward the cap)
  std::deque<std::shared_ptr<Waiter>> waiters;
  std::size_t connecting = 0;  // connections between TCP connect and the end of the TLS handshake
  std::deque<std::shared_ptr<ConnectTurn>> connect_queue;
  ClientStats stats;
  std::mt19937_64 rng;

  std::string where(const Request& request) const {
    return request.method + " " + origin.origin() + base_path + request.target;
  }

  void connection_closed() {
    if (stats.open_connections > 0) --stats.open_connections;
  }

  // Gives a freed slot to the first waiter, if any.
  void grant_slot() {
    if (waiters.empty() || slots >= options.max_connections) return;
    auto waiter = std::move(waiters.front());
    waiters.pop_front();
    ++slots;
    waiter->slot = true;
    waiter->timer.cancel();
  }

  void discard(ConnectionPtr connection) {
    connection->close();
    connection_closed();
    --slots;
  }

  void release(ConnectionPtr connection, bool reusable) {
    if (!reusable) {
      discard(std::move(connection));
      grant_slot();
      return;
    }
    connection->last_used = Clock::now();
    // A pooled connection keeps its read buffer between requests; one large response (a list) must not
    // pin its size on every idle connection of a storm-sized pool.
    if (connection->buffer.size() == 0 && connection->buffer.capacity() > kIdleBufferBytes) {
      connection->buffer.shrink_to_fit();
    }
    if (!waiters.empty()) {
      auto waiter = std::move(waiters.front());
      waiters.pop_front();
      waiter->connection = std::move(connection);
      waiter->timer.cancel();
      return;
    }
    idle.push_back(std::move(connection));
  }

  // Waits for a turn to open a connection (ClientOptions::max_connecting); false once the deadline passed.
  awaitable<bool> enter_connect(Clock::time_point deadline) {
    if (connecting < options.max_connecting && connect_queue.empty()) {
      ++connecting;
      stats.peak_connecting = std::max(stats.peak_connecting, connecting);
      co_return true;
    }
    auto turn = std::make_shared<ConnectTurn>(executor);
    connect_queue.push_back(turn);
    turn->timer.expires_at(deadline);
    co_await turn->timer.async_wait(use_nothrow);
    if (!turn->granted) std::erase(connect_queue, turn);
    co_return turn->granted;
  }

  void leave_connect() {
    --connecting;
    while (!connect_queue.empty() && connecting < options.max_connecting) {
      auto turn = std::move(connect_queue.front());
      connect_queue.pop_front();
      ++connecting;
      stats.peak_connecting = std::max(stats.peak_connecting, connecting);
      turn->granted = true;
      turn->timer.cancel();
    }
  }

  // Opens a connection (TCP, then TLS with verification) and returns it; does not touch the pool counters.
  awaitable<Expected<ConnectionPtr>> connect(Clock::time_point deadline, const std::string& what) {
    if (!co_await enter_connect(deadline)) {
      co_return make_error(ErrorKind::timeout,
                           "connecting to " + origin.origin() + " timed out (" + what +
                               "): still waiting for one of " + std::to_string(options.max_connecting) +
                               " concurrent connection openings",
                           "raise the request timeout, or lower the concurrency (apiBudget.maxConcurrent)");
    }
    struct Turn {
      Impl* impl;
      ~Turn() { impl->leave_connect(); }
    } turn{this};
    auto connection = std::make_unique<Connection>();
    if (tls_enabled) {
      connection->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(executor, *ssl_context);
    } else {
      connection->plain = std::make_unique<beast::tcp_stream>(executor);
    }
    auto& stream = connection->tcp();
    std::vector<tcp::endpoint> endpoints;
    if (literal_endpoint) {
      endpoints.push_back(*literal_endpoint);
    } else {
      tcp::resolver resolver(executor);
      auto [ec, results] =
          co_await resolver.async_resolve(origin.host, std::to_string(origin.port), use_nothrow);
      if (ec) {
        co_return make_error(ErrorKind::connect,
                             "cannot resolve host '" + origin.host + "' for " + what + ": " + ec.message(),
                             "check the endpoint host name and DNS");
      }
      for (const auto& entry : results) endpoints.push_back(entry.endpoint());
    }
    stream.expires_at(deadline);
    auto [connect_ec, endpoint] = co_await stream.async_connect(endpoints, use_nothrow);
    if (connect_ec) {
      if (is_timeout(connect_ec)) {
        co_return make_error(ErrorKind::timeout,
                             "connecting to " + origin.origin() + " timed out (" + what + ")",
                             "check that the endpoint is reachable (firewall, address, port)");
      }
      co_return make_error(
          ErrorKind::connect,
          "cannot connect to " + origin.origin() + " (" + what + "): " + connect_ec.message(),
          "check that the service is running and the address and port are right");
    }
    boost::system::error_code ignored;
    stream.socket().set_option(tcp::no_delay(true), ignored);
    if (tls_enabled) {
      auto& tls = *connection->tls;
      if (!detail::is_ip_literal(tls_name)) SSL_set_tlsext_host_name(tls.native_handle(), tls_name.c_str());
      auto failure = std::make_shared<std::string>();
      if (!insecure) {
        tls.set_verify_callback([check = ssl::host_name_verification(tls_name), failure](
                                    bool preverified, ssl::verify_context& ctx) {
          bool ok = check(preverified, ctx);
          if (!preverified) {
            int code = X509_STORE_CTX_get_error(ctx.native_handle());
            *failure = X509_verify_cert_error_string(code);
          } else if (!ok && failure->empty()) {
            *failure = "the certificate does not match the host name";
          }
          return ok;
        });
      }
      stream.expires_at(deadline);
      auto [handshake_ec] = co_await tls.async_handshake(ssl::stream_base::client, use_nothrow);
      if (handshake_ec) {
        if (is_timeout(handshake_ec)) {
          co_return make_error(ErrorKind::timeout,
                               "TLS handshake with " + origin.origin() + " timed out (" + what + ")");
        }
        if (!failure->empty()) {
          co_return make_error(
              ErrorKind::tls,
              "TLS certificate verification failed for " + origin.origin() + " (name '" + tls_name +
                  "'): " + *failure,
              "give the CA that signed the server certificate (CA file or certificate-authority-data), or "
              "set the "
              "expected server name if the certificate names another host; insecure mode skips verification "
              "(lab use only)");
        }
        if (handshake_ec.category() == net::error::get_ssl_category() ||
            handshake_ec == net::ssl::error::stream_truncated) {
          co_return make_error(
              ErrorKind::tls,
              "TLS handshake with " + origin.origin() + " failed (" + what + "): " + handshake_ec.message(),
              "check that the endpoint speaks TLS 1.2+ and, if it requires one, that a valid "
              "client certificate is configured");
        }
        co_return make_error(ErrorKind::io, "connection to " + origin.origin() +
                                                " failed during the TLS "
                                                "handshake (" +
                                                what + "): " + handshake_ec.message());
      }
    }
    ++stats.connections_opened;
    co_return connection;
  }

  void count_open() {
    ++stats.open_connections;
    stats.peak_connections = std::max(stats.peak_connections, stats.open_connections);
  }

  // A pooled connection: an idle one if alive, else a new one under the cap, else wait in line for either.
  awaitable<Expected<ConnectionPtr>> acquire(Clock::time_point deadline, bool& reused,
                                             const std::string& what) {
    while (true) {
      while (!idle.empty()) {
        ConnectionPtr connection = std::move(idle.back());
        idle.pop_back();
        if (Clock::now() - connection->last_used <= options.idle_timeout && connection->looks_alive()) {
          reused = true;
          co_return connection;
        }
        discard(std::move(connection));
        grant_slot();
      }
      bool have_slot = false;
      if (slots < options.max_connections && waiters.empty()) {
        ++slots;
        have_slot = true;
      } else {
        auto waiter = std::make_shared<Waiter>(executor);
        waiters.push_back(waiter);
        waiter->timer.expires_at(deadline);
        co_await waiter->timer.async_wait(use_nothrow);
        if (waiter->connection) {
          if (waiter->connection->looks_alive()) {
            reused = true;
            co_return std::move(waiter->connection);
          }
          discard(std::move(waiter->connection));
          ++slots;  // the discarded connection's slot is ours now
          have_slot = true;
        } else if (waiter->slot) {
          have_slot = true;
        } else {
          std::erase(waiters, waiter);
          co_return make_error(ErrorKind::timeout,
                               what + " timed out waiting for a free connection (all " +
                                   std::to_string(options.max_connections) + " pooled connections busy)",
                               "raise the request timeout or the connection cap, or lower the concurrency");
        }
      }
      if (have_slot) {
        auto connection = co_await connect(deadline, what);
        if (!connection) {
          --slots;
          grant_slot();
          co_return std::move(connection.error());
        }
        count_open();
        reused = false;
        co_return std::move(connection.value());
      }
    }
  }

  AttemptFailure attempt_failure(const boost::system::error_code& ec, bool nothing_received,
                                 const char* phase, const Request& request) const {
    const std::string what = where(request);
    if (is_timeout(ec)) {
      return {make_error(ErrorKind::timeout,
                         what + " timed out after " + std::to_string(request.timeout.count()) + " ms (" +
                             phase + ")",
                         "the server is slow or unreachable; retry later or raise the timeout"),
              false};
    }
    return {make_error(ErrorKind::io, what + " failed while " + phase + ": " + ec.message()),
            nothing_received};
  }

  template <class Stream>
  awaitable<std::optional<AttemptFailure>> exchange(Stream& stream, Connection& connection,
                                                    bhttp::request<bhttp::string_body>& message,
                                                    Clock::time_point deadline, const Request& request,
                                                    Response& response, bool& keep_alive) {
    connection.tcp().expires_at(deadline);
    auto [write_ec, written] = co_await bhttp::async_write(stream, message, use_nothrow);
    if (write_ec) co_return attempt_failure(write_ec, true, "sending the request", request);
    response.written_at = Clock::now();
    response.written_at_wall = std::chrono::system_clock::now();
    ++stats.requests;
    co_return co_await read_response(stream, connection, deadline, request, response, keep_alive);
  }

  // Reads one response from the connection into `response` (status, headers, body, received_at).
  template <class Stream>
  awaitable<std::optional<AttemptFailure>> read_response(Stream& stream, Connection& connection,
                                                         Clock::time_point deadline, const Request& request,
                                                         Response& response, bool& keep_alive) {
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

  // --- HTTP/1.1 pipelining (RFC 9112 section 9.3.2) ---

  // Where a pipelined batch stands: one slot per request; `redo` lists those to send again one by one.
  struct Batch {
    explicit Batch(const net::any_io_executor& ex) : timer(ex) {}
    std::vector<Request> requests;
    std::vector<std::optional<Expected<Response>>> results;
    std::vector<std::size_t> redo;
    net::steady_timer timer;  // wakes the batch when the last redo finished
    std::size_t redo_pending = 0;
  };

  // Writes every request of the batch in one write on `connection`, then reads the responses in order.
  // Returns whether the connection can be reused. A request whose response did not come (the connection
  // dropped or the server closed it after an earlier response) or came with a retryable status goes to
  // `redo`: pipelined requests are idempotent, so sending them again is safe.
  template <class Stream>
  awaitable<bool> pipeline_exchange(Stream& stream, Connection& connection, const std::string& wire,
                                    Clock::time_point deadline, bool reused, Batch& batch) {
    const std::size_t n = batch.requests.size();
    auto redo_from = [&](std::size_t first) {
      for (std::size_t j = first; j < n; ++j) batch.redo.push_back(j);
    };
    connection.tcp().expires_at(deadline);
    auto [write_ec, written] = co_await net::async_write(stream, net::buffer(wire), use_nothrow);
    if (write_ec) {
      redo_from(0);
      co_return false;
    }
    const auto written_at = Clock::now();
    const auto written_wall = std::chrono::system_clock::now();
    stats.requests += n;
    for (std::size_t i = 0; i < n; ++i) {
      Response response;
      response.written_at = written_at;
      response.written_at_wall = written_wall;
      response.reused_connection = reused;
      bool keep_alive = false;
      auto failed =
          co_await read_response(stream, connection, deadline, batch.requests[i], response, keep_alive);
      if (failed) {
        // A timeout is final for this request (its deadline passed); the ones behind it had the same deadline
        // but nothing was read for them yet, so they get a fresh one.
        if (failed->error.kind == ErrorKind::timeout) {
          batch.results[i] = std::move(failed->error);
          redo_from(i + 1);
        } else {
          redo_from(i);
        }
        co_return false;
      }
      if (is_retryable_status(response.status) && options.retry.max_attempts > 1) {
        batch.redo.push_back(i);
      } else {
        batch.results[i] = std::move(response);
      }
      if (!keep_alive) {
        // The server closes after this response and does not process what was pipelined behind it.
        redo_from(i + 1);
        co_return false;
      }
    }
    co_return true;
  }

  // Sends one request of a batch again on its own (the normal path: pool, retries, backoff).
  static awaitable<void> redo_one(std::shared_ptr<Impl> self, std::shared_ptr<Batch> batch,
                                  std::size_t index) {
    auto result = co_await self->run(batch->requests[index]);
    if (result) result->attempts += 1;  // the pipelined attempt
    batch->results[index] = std::move(result);
    if (--batch->redo_pending == 0) batch->timer.cancel();
  }

  awaitable<std::vector<Expected<Response>>> pipeline(std::vector<Request> requests) {
    auto self = shared_from_this();
    for (const auto& request : requests) {
      if (!request.idempotent.value_or(default_idempotent(request.method))) {
        throw std::invalid_argument("http::Client::pipeline: " + request.method + " " + request.target +
                                    " is not idempotent; only idempotent requests may be pipelined");
      }
    }
    auto batch = std::make_shared<Batch>(executor);
    batch->results.resize(requests.size());
    batch->requests = std::move(requests);
    const std::size_t n = batch->requests.size();
    if (n > 1) {
      auto timeout = std::chrono::milliseconds::zero();
      std::string wire;
      for (const auto& request : batch->requests) {
        timeout = std::max(timeout, request.timeout);
        Request copy = request;  // build_message consumes the body; the original stays for a resend
        std::ostringstream text;
        text << build_message(copy);
        wire += text.str();
      }
      const auto deadline = Clock::now() + timeout;
      bool reused = false;
      const std::string what =
          where(batch->requests.front()) + " and " + std::to_string(n - 1) + " more requests, pipelined";
      auto acquired = co_await acquire(deadline, reused, what);
      if (acquired) {
        ConnectionPtr connection = std::move(acquired.value());
        bool reusable = false;
        if (connection->tls) {
          reusable =
              co_await pipeline_exchange(*connection->tls, *connection, wire, deadline, reused, *batch);
        } else {
          reusable =
              co_await pipeline_exchange(*connection->plain, *connection, wire, deadline, reused, *batch);
        }
        release(std::move(connection), reusable);
      } else if (acquired.error().kind == ErrorKind::connect) {
        for (std::size_t i = 0; i < n; ++i) batch->redo.push_back(i);  // nothing was sent
      } else {
        for (auto& result : batch->results) result = acquired.error();
      }
    } else if (n == 1) {
      batch->results[0] = co_await run(std::move(batch->requests[0]));
    }
    if (!batch->redo.empty()) {
      stats.retries += batch->redo.size();
      batch->redo_pending = batch->redo.size();
      for (std::size_t index : batch->redo)
        net::co_spawn(executor, redo_one(self, batch, index), net::detached);
      batch->timer.expires_at(Clock::time_point::max());
      while (batch->redo_pending > 0) co_await batch->timer.async_wait(use_nothrow);
    }
    std::vector<Expected<Response>> out;
    out.reserve(n);
    for (auto& result : batch->results) out.push_back(std::move(*result));
    co_return out;
  }

  bhttp::request<bhttp::string_body> build_message(Request& request) const {
    bhttp::request<bhttp::string_body> message;
    bhttp::verb verb = bhttp::string_to_verb(request.method);
    if (verb == bhttp::verb::unknown) {
      message.method_string(request.method);
    } else {
      message.method(verb);
    }
    message.target(base_path + request.target);
    message.version(11);
    message.set(bhttp::field::host, host_header);
    message.set(bhttp::field::user_agent, options.user_agent);
    for (const auto& [name, value] : options.default_headers) message.set(name, value);
    for (const auto& [name, value] : request.headers) message.set(name, value);
    bool has_body = !request.body.empty() || request.method == "POST" || request.method == "PUT" ||
                    request.method == "PATCH";
    message.body() = std::move(request.body);  // the request body is not needed after this
    if (has_body) message.prepare_payload();
    return message;
  }

  std::chrono::milliseconds backoff_delay(int retry_index) {
    double base = static_cast<double>(options.retry.initial_backoff.count());
    for (int i = 1; i < retry_index; ++i) base *= 2;
    base = std::min(base, static_cast<double>(options.retry.max_backoff.count()));
    double jitter = std::clamp(options.retry.jitter, 0.0, 1.0);
    std::uniform_real_distribution<double> spread(1.0 - jitter, 1.0 + jitter);
    return std::chrono::milliseconds(static_cast<long long>(base * spread(rng)));
  }

  awaitable<void> sleep(std::chrono::milliseconds delay) {
    net::steady_timer timer(executor);
    timer.expires_after(delay);
    co_await timer.async_wait(use_nothrow);
  }

  awaitable<Expected<Response>> run(Request request) {
    auto self = shared_from_this();
    auto message = build_message(request);
    const bool idempotent = request.idempotent.value_or(default_idempotent(request.method));
    const std::string what = where(request);
    int attempt = 0;  // counted against RetryPolicy::max_attempts
    int writes = 0;   // every attempt, including transparent resends on dead pooled connections
    int stale_retries = 0;
    while (true) {
      ++attempt;
      ++writes;
      const auto deadline = Clock::now() + request.timeout;
      bool reused = false;
      auto acquired = co_await acquire(deadline, reused, what);
      if (!acquired) {
        // Nothing was sent when the connection could not be opened: safe to retry whatever the method.
        if (acquired.error().kind == ErrorKind::connect && attempt < options.retry.max_attempts) {
          ++stats.retries;
          co_await sleep(backoff_delay(attempt));
          continue;
        }
        co_return std::move(acquired.error());
      }
      ConnectionPtr connection = std::move(acquired.value());
      Response response;
      bool keep_alive = false;
      std::optional<AttemptFailure> failed;
      if (connection->tls) {
        failed = co_await exchange(*connection->tls, *connection, message, deadline, request, response,
                                   keep_alive);
      } else {
        failed = co_await exchange(*connection->plain, *connection, message, deadline, request, response,
                                   keep_alive);
      }
      if (failed) {
        release(std::move(connection), false);
        if (reused && failed->nothing_received && stale_retries < kMaxStaleRetries) {
          // The server closed an idle keep-alive connection under us before processing anything.
          ++stale_retries;
          ++stats.retries;
          --attempt;
          continue;
        }
        co_return std::move(failed->error);
      }
      release(std::move(connection), keep_alive);
      response.attempts = writes;
      response.reused_connection = reused;
      bool may_retry = idempotent || (response.status == 503 && options.retry.retry_non_idempotent_on_503);
      if (is_retryable_status(response.status) && may_retry && attempt < options.retry.max_attempts) {
        auto delay = backoff_delay(attempt);
        if (auto retry_after = parse_retry_after(response)) delay = std::max(delay, *retry_after);
        ++stats.retries;
        co_await sleep(delay);
        continue;
      }
      co_return response;
    }
  }

  // State shared with the cancel callback, which may outlive the stream call.
  struct StreamState {
    ConnectionPtr connection;
    bool cancelled = false;
  };

  template <class Stream>
  awaitable<Expected<void>> read_lines(Stream& stream, StreamState& state, Clock::time_point deadline,
                                       bhttp::request<bhttp::string_body>& message, const Request& request,
                                       const HeadersHandler& on_headers, const LineHandler& on_line) {
    Connection& connection = *state.connection;
    auto& tcp_stream = connection.tcp();
    const std::string what = where(request);
    auto failed = [&](const boost::system::error_code& ec, const char* phase) -> Error {
      if (state.cancelled) return make_error(ErrorKind::cancelled, what + " stream cancelled");
      if (is_timeout(ec)) {
        return make_error(
            ErrorKind::timeout,
            what + " timed out after " + std::to_string(request.timeout.count()) + " ms (" + phase + ")");
      }
      return make_error(ErrorKind::io, what + " stream failed while " + phase + ": " + ec.message(),
                        "the connection dropped; resume the stream from the last position seen");
    };
    tcp_stream.expires_at(deadline);
    auto [write_ec, written] = co_await bhttp::async_write(stream, message, use_nothrow);
    if (write_ec) co_return failed(write_ec, "sending the request");
    ++stats.requests;
    bhttp::response_parser<bhttp::buffer_body> parser;
    parser.body_limit(boost::none);
    tcp_stream.expires_at(deadline);
    auto [header_ec, header_bytes] =
        co_await bhttp::async_read_header(stream, connection.buffer, parser, use_nothrow);
    if (header_ec) co_return failed(header_ec, "reading the response headers");
    if (on_headers) on_headers(static_cast<int>(parser.get().result_int()), to_headers(parser.get().base()));
    tcp_stream.expires_never();

    std::vector<char> chunk(64 * 1024);
    std::string pending;
    auto deliver = [&](std::size_t size) {
      std::string_view data(chunk.data(), size);
      while (!data.empty()) {
        std::size_t newline = data.find('\n');
        if (newline == std::string_view::npos) {
          pending.append(data);
          break;
        }
        std::string_view piece = data.substr(0, newline);
        data.remove_prefix(newline + 1);
        std::string_view line = piece;
        if (!pending.empty()) {
          pending.append(piece);
          line = pending;
        }
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (on_line) on_line(line);
        pending.clear();
      }
    };
    while (!parser.is_done()) {
      if (state.cancelled) co_return make_error(ErrorKind::cancelled, what + " stream cancelled");
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      auto [read_ec, read_bytes] =
          co_await bhttp::async_read_some(stream, connection.buffer, parser, use_nothrow);
      std::size_t produced = chunk.size() - parser.get().body().size;
      if (produced > 0) deliver(produced);
      if (read_ec && read_ec != bhttp::error::need_buffer) co_return failed(read_ec, "reading the stream");
    }
    if (!pending.empty()) {
      std::string_view line = pending;
      if (line.back() == '\r') line.remove_suffix(1);
      if (on_line) on_line(line);
    }
    co_return Expected<void>();
  }

  awaitable<Expected<void>> stream(Request request, HeadersHandler on_headers, LineHandler on_line,
                                   CancelSignal cancel) {
    auto self = shared_from_this();
    const std::string what = where(request);
    auto message = build_message(request);
    auto state = std::make_shared<StreamState>();
    // Registered for as long as this coroutine frame lives. cancel() may run on another thread while the
    // stream ends: the callback then only posts while the stream state is alive.
    auto cancel_subscription =
        cancel.subscribe([weak = std::weak_ptr<StreamState>(state), executor = executor] {
          if (weak.expired()) return;
          net::post(executor, [weak] {
            if (auto locked = weak.lock()) {
              locked->cancelled = true;
              if (locked->connection) locked->connection->close();
            }
          });
        });
    const auto deadline = Clock::now() + request.timeout;
    auto connection = co_await connect(deadline, what);
    if (state->cancelled) co_return make_error(ErrorKind::cancelled, what + " stream cancelled");
    if (!connection) co_return std::move(connection.error());
    state->connection = std::move(connection.value());
    Expected<void> result;
    if (state->connection->tls) {
      result = co_await read_lines(*state->connection->tls, *state, deadline, message, request, on_headers,
                                   on_line);
    } else {
      result = co_await read_lines(*state->connection->plain, *state, deadline, message, request, on_headers,
                                   on_line);
    }
    state->connection->close();
    co_return result;
  }

  awaitable<Expected<void>> prewarm(std::size_t count) {
    auto self = shared_from_this();
    // Idle connections the peer has closed, or older than half the idle timeout, would be dropped when the
    // burst takes them and reopened inside the fire window (at 10,000 VMs provisioning outlasts the idle
    // timeout: the storm then reopened thousands of connections and its fire skew was 2.2 s). Replace them
    // now.
    const auto now = Clock::now();
    for (auto it = idle.begin(); it != idle.end();) {
      if (now - (*it)->last_used > options.idle_timeout / 2 || !(*it)->looks_alive()) {
        discard(std::move(*it));
        it = idle.erase(it);
      } else {
        ++it;
      }
    }
    while (!waiters.empty() && slots < options.max_connections) grant_slot();
    std::size_t target = std::min(count, options.max_connections);
    std::size_t to_open = target > slots ? target - slots : 0;
    if (to_open == 0) co_return Expected<void>();
    struct Join {
      explicit Join(const net::any_io_executor& ex) : timer(ex) {}
      net::steady_timer timer;
      std::size_t pending = 0;
      std::optional<Error> first_error;
    };
    auto join = std::make_shared<Join>(executor);
    join->pending = to_open;
    // At least kPrewarmTimeout, and 10 ms per connection: openings are queued max_connecting at a time.
    const auto deadline =
        Clock::now() +
        std::max<Clock::duration>(kPrewarmTimeout,
                                  std::chrono::milliseconds(10 * static_cast<std::int64_t>(to_open)));
    for (std::size_t i = 0; i < to_open; ++i) {
      ++slots;
      net::co_spawn(
          executor,
          [self, join, deadline]() -> awaitable<void> {
            auto connection = co_await self->connect(deadline, "prewarming " + self->origin.origin());
            if (connection) {
              self->count_open();
              self->release(std::move(connection.value()), true);
            } else {
              --self->slots;
              self->grant_slot();
              if (!join->first_error) join->first_error = connection.error();
            }
            if (--join->pending == 0) join->timer.cancel();
          },
          net::detached);
    }
    join->timer.expires_at(Clock::time_point::max());
    while (join->pending > 0) co_await join->timer.async_wait(use_nothrow);
    if (join->first_error) co_return *join->first_error;
    co_return Expected<void>();
  }

  void close_idle() {
    for (auto& connection : idle) discard(std::move(connection));
    idle.clear();
    while (!waiters.empty() && slots < options.max_connections) grant_slot();
  }
};

Client::Client(boost::asio::any_io_executor executor, ClientOptions options)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(options))) {}

Client::~Client() {
  impl_->close_idle();
}

boost::asio::awaitable<Expected<Response>> Client::request(Request request) {
  auto impl = impl_;
  co_return co_await impl->run(std::move(request));
}

boost::asio::awaitable<std::vector<Expected<Response>>> Client::pipeline(std::vector<Request> requests) {
  auto impl = impl_;
  co_return co_await impl->pipeline(std::move(requests));
}

boost::asio::awaitable<Expected<void>> Client::stream(Request request, HeadersHandler on_headers,
                                                      LineHandler on_line, CancelSignal cancel) {
  auto impl = impl_;
  co_return co_await impl->stream(std::move(request), std::move(on_headers), std::move(on_line),
                                  std::move(cancel));
}

boost::asio::awaitable<Expected<void>> Client::prewarm(std::size_t count) {
  auto impl = impl_;
  co_return co_await impl->prewarm(count);
}

void Client::close_idle() {
  impl_->close_idle();
}

const ClientStats& Client::stats() const {
  return impl_->stats;
}

const ClientOptions& Client::options() const {
  return impl_->options;
}

void Client::set_default_header(std::string name, std::string value) {
  register_header_secret(name, value);
  for (auto& [existing_name, existing_value] : impl_->options.default_headers) {
    if (existing_name.size() == name.size() &&
        std::equal(name.begin(), name.end(), existing_name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      existing_value = std::move(value);
      return;
    }
  }
  impl_->options.default_headers.emplace_back(std::move(name), std::move(value));
}

}  // namespace bootstorm::http
