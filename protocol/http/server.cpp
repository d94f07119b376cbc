// HTTP/1.1 server: coroutine accept loop, keep-alive, limits, timeouts, chunked streaming, graceful stop, TLS
// optional. Beast stays in this file.
#include "protocol/http/server.hpp"

#include <fmt/format.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <unordered_map>

#include "common/log.hpp"
#include "protocol/http/detail/beast_names.hpp"
#include "protocol/http/detail/tls_context.hpp"

namespace bootstorm::http {
namespace {

using namespace detail;  // beast_names.hpp: the Beast and Asio names of this folder
constexpr std::size_t kReadChunk = 8 * 1024;
constexpr std::chrono::milliseconds kLingerTime{1000};
constexpr std::size_t kLingerBytes = 1024 * 1024;

// Percent-decoding for the path: unlike a query component, '+' is a literal plus sign there.
std::string decode_path(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int hi = hex(text[i + 1]);
      int lo = hex(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

bool is_framing_header(std::string_view name) {
  return beast::iequals(name, "content-length") || beast::iequals(name, "transfer-encoding") ||
         beast::iequals(name, "connection");
}

// Per-connection bookkeeping the server needs to stop connections from outside their coroutine.
struct Session {
  beast::tcp_stream* tcp = nullptr;
  bool idle = true;  // waiting for the next request (safe to close on graceful stop)

  void close() {
    boost::system::error_code ec;
    tcp->socket().close(ec);
  }
};

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Impl> {
  Impl(net::any_io_executor ex, ServerOptions opts, Handler h)
      : executor(std::move(ex)),
        options(std::move(opts)),
        handler(std::move(h)),
        acceptor(executor),
        drained(executor) {
    if (options.tls) ssl_context.emplace(detail::make_server_context(*options.tls));
  }

  net::any_io_executor executor;
  ServerOptions options;
  Handler handler;
  std::optional<ssl::context> ssl_context;
  tcp::acceptor acceptor;
  net::steady_timer drained;  // woken when the last connection ends during a stop
  unsigned short port = 0;
  bool stopping = false;
  ServerStats stats;
  std::uint64_t next_connection_id = 1;
  std::unordered_map<std::uint64_t, Session*> sessions;

  Expected<void> start() {
    boost::system::error_code ec;
    auto address = net::ip::make_address(options.bind_address, ec);
    if (ec) {
      return make_error(ErrorKind::invalid_input, "invalid bind address '" + options.bind_address + "'",
                        "use an IP address such as 127.0.0.1 or 0.0.0.0");
    }
    tcp::endpoint endpoint(address, options.port);
    const std::string where = endpoint.address().to_string() + ":" + std::to_string(options.port);
    if (acceptor.open(endpoint.protocol(), ec); ec) {
      return make_error(ErrorKind::io, "cannot open a listening socket on " + where + ": " + ec.message());
    }
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (acceptor.bind(endpoint, ec); ec) {
      return make_error(ErrorKind::io, "cannot listen on " + where + ": " + ec.message(),
                        "pick another port (0 picks a free one) or stop the process using it");
    }
    if (acceptor.listen(net::socket_base::max_listen_connections, ec); ec) {
      return make_error(ErrorKind::io, "cannot listen on " + where + ": " + ec.message());
    }
    port = acceptor.local_endpoint(ec).port();
    net::co_spawn(executor, accept_loop(shared_from_this()), net::detached);
    return Expected<void>();
  }

  static awaitable<void> accept_loop(std::shared_ptr<Impl> self) {
    while (!self->stopping) {
      auto [ec, socket] = co_await self->acceptor.async_accept(use_nothrow);
      if (self->stopping) break;
      if (ec) {
        if (ec == net::error::operation_aborted || ec == net::error::bad_descriptor) break;
        // Out of descriptors or a transient network error: back off briefly instead of spinning.
        spdlog::warn("HTTP server on port {}: accept failed: {}", self->port, ec.message());
        net::steady_timer pause(self->executor);
        pause.expires_after(std::chrono::milliseconds(50));
        co_await pause.async_wait(use_nothrow);
        continue;
      }
      if (self->sessions.size() >= self->options.max_connections) {
        boost::system::error_code ignored;
        socket.close(ignored);
        continue;
      }
      const std::uint64_t id = self->next_connection_id++;
      ++self->stats.connections_accepted;
      ++self->stats.open_connections;
      net::co_spawn(self->executor, run_session(self, std::move(socket), id), net::detached);
    }
  }

  // Registers the session for stop(); unregisters on any exit, including the coroutine frame being destroyed.
  struct SessionGuard {
    std::shared_ptr<Impl> impl;
    std::uint64_t id;
    ~SessionGuard() {
      impl->sessions.erase(id);
      if (impl->stats.open_connections > 0) --impl->stats.open_connections;
      if (impl->sessions.empty()) impl->drained.cancel();
    }
  };

  static awaitable<void> run_session(std::shared_ptr<Impl> self, tcp::socket socket, std::uint64_t id) {
    boost::system::error_code ec;
    socket.set_option(tcp::no_delay(true), ec);
    std::string remote;
    if (auto endpoint = socket.remote_endpoint(ec); !ec) {
      remote = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
    }
    Session session;
    SessionGuard guard{self, id};
    try {
      if (self->ssl_context) {
        beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *self->ssl_context);
        session.tcp = &beast::get_lowest_layer(stream);
        self->sessions.emplace(id, &session);
        session.tcp->expires_after(self->options.read_timeout);
        auto [handshake_ec] = co_await stream.async_handshake(ssl::stream_base::server, use_nothrow);
        if (handshake_ec) {
          spdlog::debug("HTTP server: TLS handshake with {} failed: {}", remote, handshake_ec.message());
          co_return;
        }
        std::string subject = detail::verified_peer_common_name(stream.native_handle());
        co_await self->serve(stream, session, id, remote, subject);
      } else {
        beast::tcp_stream stream(std::move(socket));
        session.tcp = &stream;
        self->sessions.emplace(id, &session);
        co_await self->serve(stream, session, id, remote, std::string());
      }
    } catch (const std::exception& e) {
      spdlog::error("HTTP server: connection {} from {} ended by an unexpected error: {}", id, remote,
                    e.what());
    }
  }

  template <class Stream>
  awaitable<bool> write_simple(Stream& stream, beast::tcp_stream& tcp, bhttp::status status,
                               std::string body) {
    bhttp::response<bhttp::string_body> response(status, 11);
    response.set(bhttp::field::content_type, "text/plain");
    response.body() = std::move(body);
    response.keep_alive(false);
    response.prepare_payload();
    tcp.expires_after(options.read_timeout);
    auto [ec, n] = co_await bhttp::async_write(stream, response, use_nothrow);
    if (ec) co_return false;
    // Lingering close: the client may still be sending the request we refused. Closing with unread data would
    // make the kernel send a reset that can destroy the error response before the client reads it, so stop
    // sending, then drain (bounded in time and bytes) until the client closes.
    boost::system::error_code ignored;
    tcp.socket().shutdown(tcp::socket::shutdown_send, ignored);
    std::array<char, 4096> sink;
    std::size_t drained_bytes = 0;
    tcp.expires_after(kLingerTime);
    while (drained_bytes < kLingerBytes) {
      auto [read_ec, read] = co_await tcp.async_read_some(net::buffer(sink), use_nothrow);
      if (read_ec) break;
      drained_bytes += read;
    }
    co_return true;
  }

  template <class Stream>
  class ChunkWriter final : public StreamWriter {
   public:
    ChunkWriter(Impl& impl, Stream& stream, beast::tcp_stream& tcp)
        : impl_(impl), stream_(stream), tcp_(tcp) {}

    awaitable<bool> write(std::string data) override {
      if (!open()) co_return false;
      if (data.empty()) co_return true;  // an empty chunk would end the stream
      tcp_.expires_after(impl_.options.read_timeout);
      // One contiguous buffer (size line, data, CRLF), not Beast's chunk buffer sequence: a TLS stream
      // writes one buffer of a sequence per operation, so the three pieces took three turns of the event
      // loop, and on a busy server (the lab during a storm) the data reached the socket several turns after
      // the write began — which the lab's truth records as the watch event's delivery time.
      std::string framed = fmt::format("{:x}\r\n", data.size());
      framed.reserve(framed.size() + data.size() + 2);
      framed += data;
      framed += "\r\n";
      auto [ec, n] = co_await net::async_write(stream_, net::buffer(framed), use_nothrow);
      if (ec) {
        failed_ = true;
        co_return false;
      }
      co_return true;
    }
    bool open() const override { return !failed_ && !aborted_ && !impl_.stopping; }
    void abort() override {
      aborted_ = true;
      boost::system::error_code ec;
      tcp_.socket().close(ec);
    }
    boost::asio::any_io_executor executor() const override { return impl_.executor; }
    bool usable() const { return !failed_ && !aborted_; }

   private:
    Impl& impl_;
    Stream& stream_;
    beast::tcp_stream& tcp_;
    bool failed_ = false;
    bool aborted_ = false;
  };

  template <class Stream>
  awaitable<void> serve(Stream& stream, Session& session, std::uint64_t id, const std::string& remote,
                        const std::string& client_subject) {
    beast::tcp_stream& tcp = *session.tcp;
    beast::flat_buffer buffer;
    while (!stopping) {
      if (buffer.size() == 0) {
        // Keep-alive idle phase: wait for the first bytes of the next request under the idle timeout.
        session.idle = true;
        tcp.expires_after(options.idle_timeout);
        auto [ec, n] = co_await stream.async_read_some(buffer.prepare(kReadChunk), use_nothrow);
        session.idle = false;
        if (ec) co_return;
        buffer.commit(n);
      }
      session.idle = false;
      bhttp::request_parser<bhttp::string_body> parser;
      parser.header_limit(
          static_cast<std::uint32_t>(std::min<std::size_t>(options.max_header_bytes, UINT32_MAX)));
      parser.body_limit(options.max_body_bytes);
      tcp.expires_after(options.read_timeout);
      auto [header_ec, header_bytes] = co_await bhttp::async_read_header(stream, buffer, parser, use_nothrow);
      if (header_ec == bhttp::error::header_limit) {
        co_await write_simple(
            stream, tcp, bhttp::status::request_header_fields_too_large,
            "request headers exceed " + std::to_string(options.max_header_bytes) + " bytes\n");
        co_return;
      }
      if (header_ec == bhttp::error::body_limit) {  // Content-Length above the limit, seen with the headers
        co_await write_simple(stream, tcp, bhttp::status::payload_too_large,
                              "request body exceeds " + std::to_string(options.max_body_bytes) + " bytes\n");
        co_return;
      }
      if (header_ec) {
        const boost::system::error_code parse_error = bhttp::error::bad_method;
        if (header_ec.category() == parse_error.category() && header_ec != bhttp::error::end_of_stream &&
            header_ec != bhttp::error::partial_message) {
          co_await write_simple(stream, tcp, bhttp::status::bad_request, "malformed HTTP request\n");
        }
        co_return;
      }
      auto content_length = parser.content_length();
      if (content_length && *content_length > options.max_body_bytes) {
        co_await write_simple(stream, tcp, bhttp::status::payload_too_large,
                              "request body exceeds " + std::to_string(options.max_body_bytes) + " bytes\n");
        co_return;
      }
      if (auto expect = parser.get()[bhttp::field::expect]; beast::iequals(expect, "100-continue")) {
        bhttp::response<bhttp::empty_body> proceed(bhttp::status::continue_, 11);
        auto [continue_ec, continue_bytes] = co_await bhttp::async_write(stream, proceed, use_nothrow);
        if (continue_ec) co_return;
      }
      if (!parser.is_done()) {
        auto [body_ec, body_bytes] = co_await bhttp::async_read(stream, buffer, parser, use_nothrow);
        if (body_ec == bhttp::error::body_limit) {
          co_await write_simple(
              stream, tcp, bhttp::status::payload_too_large,
              "request body exceeds " + std::to_string(options.max_body_bytes) + " bytes\n");
          co_return;
        }
        if (body_ec) co_return;
      }
      auto message = parser.release();
      ++stats.requests;

      ServerRequest request;
      request.method = std::string(message.method_string());
      request.target = std::string(message.target());
      std::string_view target = request.target;
      std::size_t question = target.find('?');
      request.path = decode_path(target.substr(0, question));
      if (question != std::string_view::npos) request.query = std::string(target.substr(question + 1));
      request.headers.reserve(16);
      for (const auto& field : message) {
        request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
      request.body = std::move(message.body());
      request.remote_address = remote;
      request.client_cert_subject = client_subject;
      request.connection_id = id;

      ServerResponse response;
      try {
        response = co_await handler(request);
      } catch (const std::exception& e) {
        spdlog::error("HTTP handler for {} {} threw: {}", request.method, request.path, e.what());
        response = ServerResponse{};
        response.status = 500;
        response.body = "internal server error\n";
        response.close = true;
      }
      bool keep_alive = message.keep_alive() && !response.close && !stopping;

      if (response.stream) {
        bhttp::response<bhttp::empty_body> head(static_cast<bhttp::status>(response.status),
                                                message.version());
        for (const auto& [name, value] : response.headers) {
          if (!is_framing_header(name)) head.insert(name, value);
        }
        head.chunked(true);
        head.keep_alive(keep_alive);
        bhttp::response_serializer<bhttp::empty_body> serializer(head);
        tcp.expires_after(options.read_timeout);
        auto [head_ec, head_bytes] = co_await bhttp::async_write_header(stream, serializer, use_nothrow);
        if (head_ec) co_return;
        ChunkWriter<Stream> writer(*this, stream, tcp);
        try {
          co_await response.stream(writer);
        } catch (const std::exception& e) {
          spdlog::error("HTTP stream producer for {} {} threw: {}", request.method, request.path, e.what());
          writer.abort();
        }
        if (!writer.usable()) co_return;
        tcp.expires_after(options.read_timeout);
        auto [last_ec, last_bytes] = co_await net::async_write(stream, bhttp::make_chunk_last(), use_nothrow);
        if (last_ec) co_return;
      } else {
        bhttp::response<bhttp::string_body> out(static_cast<bhttp::status>(response.status),
                                                message.version());
        for (const auto& [name, value] : response.headers) {
          if (!is_framing_header(name)) out.insert(name, value);
        }
        out.keep_alive(keep_alive);
        if (message.method() == bhttp::verb::head) {
          out.content_length(response.body.size());
        } else {
          out.body() = std::move(response.body);
          out.prepare_payload();
        }
        tcp.expires_after(options.read_timeout);
        auto [write_ec, written] = co_await bhttp::async_write(stream, out, use_nothrow);
        if (write_ec) co_return;
      }
      if (!keep_alive) {
        boost::system::error_code ignored;
        tcp.socket().shutdown(tcp::socket::shutdown_send, ignored);
        co_return;
      }
    }
  }

  void close_acceptor() {
    boost::system::error_code ec;
    acceptor.close(ec);
  }

  static awaitable<void> stop(std::shared_ptr<Impl> self) {
    self->stopping = true;
    self->close_acceptor();
    // Idle keep-alive connections have nothing in flight: close them now; busy ones finish their request.
    std::vector<Session*> idle_sessions;
    for (auto& [id, session] : self->sessions) {
      if (session->idle) idle_sessions.push_back(session);
    }
    for (auto* session : idle_sessions) session->close();
    const auto grace_end = Clock::now() + self->options.stop_grace;
    while (!self->sessions.empty() && Clock::now() < grace_end) {
      self->drained.expires_at(grace_end);
      co_await self->drained.async_wait(use_nothrow);
    }
    // Past the grace period: close what is left. A handler still running finds its socket closed when it
    // tries to answer; we do not wait for it.
    for (auto& [id, session] : self->sessions) session->close();
  }

  void stop_now() {
    stopping = true;
    close_acceptor();
    for (auto& [id, session] : sessions) session->close();
  }
};

Server::Server(boost::asio::any_io_executor executor, ServerOptions options, Handler handler)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(options), std::move(handler))) {}

Server::~Server() {
  impl_->stop_now();
}

Expected<void> Server::start() {
  return impl_->start();
}

unsigned short Server::port() const {
  return impl_->port;
}

std::string Server::base_url() const {
  std::string host = impl_->options.bind_address;
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return std::string(impl_->ssl_context ? "https" : "http") + "://" + host + ":" +
         std::to_string(impl_->port);
}

boost::asio::awaitable<void> Server::stop() {
  return Impl::stop(impl_);
}

void Server::stop_now() {
  impl_->stop_now();
}

const ServerStats& Server::stats() const {
  return impl_->stats;
}

}  // namespace bootstorm::http
