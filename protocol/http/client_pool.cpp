// Client's keep-alive pool: the connection cap and its waiters, the cap on connections being opened at
// once, opening a connection (resolve, TCP, TLS with verification), prewarming and closing idle ones.
#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/http/detail/client_impl.hpp"
#include "protocol/http/detail/tls_context.hpp"

namespace bootstorm::http {

using namespace detail;  // the Beast and Asio names and the client's helper types

namespace {

constexpr std::chrono::seconds kPrewarmTimeout{30};
constexpr std::size_t kIdleBufferBytes = 8 * 1024;

}  // namespace

void Client::Impl::grant_slot() {
  if (waiters.empty() || slots >= options.max_connections) return;
  auto waiter = std::move(waiters.front());
  waiters.pop_front();
  ++slots;
  waiter->slot = true;
  waiter->timer.cancel();
}

void Client::Impl::discard(ConnectionPtr connection) {
  connection->close();
  connection_closed();
  --slots;
}

void Client::Impl::release(ConnectionPtr connection, bool reusable) {
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

awaitable<bool> Client::Impl::enter_connect(Clock::time_point deadline) {
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

void Client::Impl::leave_connect() {
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

awaitable<Expected<ConnectionPtr>> Client::Impl::connect(Clock::time_point deadline,
                                                         const std::string& what) {
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
  auto opened = co_await open_connection(deadline, what);
  note_opening(opened);
  co_return opened;
}

void Client::Impl::note_opening(const Expected<ConnectionPtr>& opened) {
  if (opened) {
    failed_openings = 0;
    unreachable_reported = false;
    return;
  }
  const auto now = Clock::now();
  if (failed_openings++ == 0) failing_since = now;
  if (!options.on_unreachable || unreachable_reported || options.unreachable_failures == 0) return;
  if (failed_openings < options.unreachable_failures || now - failing_since < options.unreachable_span)
    return;
  unreachable_reported = true;
  options.on_unreachable(fmt::format(
      "the API server at {} is gone: {} attempts in a row to connect failed over {:.0f} s (last: {})",
      origin.origin(), failed_openings, std::chrono::duration<double>(now - failing_since).count(),
      opened.error().message));
}

awaitable<Expected<ConnectionPtr>> Client::Impl::open_connection(Clock::time_point deadline,
                                                                 const std::string& what) {
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
    co_return make_error(ErrorKind::connect,
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

awaitable<Expected<ConnectionPtr>> Client::Impl::acquire(Clock::time_point deadline, bool& reused,
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

awaitable<Expected<void>> Client::Impl::prewarm(std::size_t count) {
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
  options.max_connections = std::max(options.max_connections, count);
  while (!waiters.empty() && slots < options.max_connections) grant_slot();
  std::size_t target = count;
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
      Clock::now() + std::max<Clock::duration>(
                         kPrewarmTimeout, std::chrono::milliseconds(10 * static_cast<std::int64_t>(to_open)));
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

void Client::Impl::close_idle() {
  for (auto& connection : idle) discard(std::move(connection));
  idle.clear();
  while (!waiters.empty() && slots < options.max_connections) grant_slot();
}

}  // namespace bootstorm::http
