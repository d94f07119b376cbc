#pragma once
// Async HTTP/1.1 server on Boost.Beast + Asio C++20 coroutines, TLS optional. The beacon listener and the
// lab simulator's API fronts are built on it.
//
// Coroutine accept loop; keep-alive; limits on header and body size (413/431 answered, then close); a
// per-connection idle timeout; graceful stop (stop accepting, let in-flight requests finish up to a grace
// period, then close). Handlers run on the server's executor, one coroutine per connection, requests of one
// connection in order.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/expected.hpp"
#include "protocol/http/tls.hpp"
#include "protocol/http/types.hpp"

namespace bootstorm::http {

struct ServerRequest {
  std::string method;
  std::string target;  // raw path + query
  std::string path;    // decoded path without query
  std::string query;   // raw query string without '?'
  Headers headers;
  std::string body;
  std::string remote_address;       // "127.0.0.1:54321"
  std::string client_cert_subject;  // CN of a verified client certificate, empty otherwise
  std::uint64_t connection_id = 0;  // unique per accepted connection (tests count connections)

  std::optional<std::string_view> header(std::string_view name) const { return find_header(headers, name); }
  // Decoded value of a query parameter (first occurrence); nullopt when absent.
  std::optional<std::string> query_param(std::string_view name) const;
  // All decoded values of a repeated query parameter (names=a&names=b) — also splits "a,b" when
  // `split_commas`.
  std::vector<std::string> query_params(std::string_view name, bool split_commas = false) const;
};

// Writes a chunked response body piece by piece (Kubernetes watch). write() returns false once the client
// has gone or the server is stopping: the producer must then return.
class StreamWriter {
 public:
  virtual ~StreamWriter() = default;
  virtual boost::asio::awaitable<bool> write(std::string data) = 0;
  virtual bool open() const = 0;
  // Drops the connection abruptly, without the terminating chunk (fault injection: dropped watch).
  virtual void abort() = 0;
  virtual boost::asio::any_io_executor executor() const = 0;
};

struct ServerResponse {
  int status = 200;
  Headers headers;  // Content-Type etc.; Content-Length/Transfer-Encoding are set by the server
  std::string body;
  // When set, the body is produced by this coroutine as a chunked stream after the headers are sent.
  std::function<boost::asio::awaitable<void>(StreamWriter&)> stream;
  bool close = false;  // close the connection after this response
};

using Handler = std::function<boost::asio::awaitable<ServerResponse>(ServerRequest&)>;

struct ServerOptions {
  std::string bind_address = "127.0.0.1";
  unsigned short port = 0;  // 0: ephemeral
  std::optional<TlsServerOptions> tls;
  std::size_t max_header_bytes = 16 * 1024;
  std::size_t max_body_bytes = 8 * 1024 * 1024;
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(60)};  // keep-alive idle
  std::chrono::milliseconds read_timeout{std::chrono::seconds(30)};  // one request's headers+body
  std::chrono::milliseconds stop_grace{std::chrono::seconds(2)};
  std::size_t max_connections = 20000;
};

struct ServerStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t requests = 0;
  std::size_t open_connections = 0;
};

class Server {
 public:
  Server(boost::asio::any_io_executor executor, ServerOptions options, Handler handler);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens (synchronously, so the port is known on return) and starts the accept loop.
  Expected<void> start();
  unsigned short port() const;
  std::string base_url() const;  // "https://127.0.0.1:PORT" or "http://..."
  // Graceful stop; the returned awaitable completes when every connection is closed.
  boost::asio::awaitable<void> stop();
  // Immediate stop from the server's executor (closes everything now).
  void stop_now();
  const ServerStats& stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace bootstorm::http
