// Client's line streaming for watches: one connection of its own per stream, the response body delivered
// line by line as it arrives, cancellable from any thread.
#include <boost/asio/post.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/http/detail/client_impl.hpp"

namespace bootstorm::http {

using namespace detail;  // the Beast and Asio names and the client's helper types

// State shared with the cancel callback, which may outlive the stream call.
struct Client::Impl::StreamState {
  ConnectionPtr connection;
  bool cancelled = false;
};

template <class Stream>
awaitable<Expected<void>> Client::Impl::read_lines(Stream& stream, StreamState& state,
                                                   Clock::time_point deadline, RequestMessage& message,
                                                   const Request& request, const HeadersHandler& on_headers,
                                                   const LineHandler& on_line) {
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

  // Beast sizes each socket read by the free capacity of `connection.buffer` (at least 512 bytes). Left at
  // what the headers needed, a stream is read some 500 bytes at a time, one decryption and one parser pass
  // each: slower than a server writes during a storm, so the lines wait in the kernel.
  constexpr std::size_t kStreamRead = 64 * 1024;
  if (connection.buffer.capacity() < kStreamRead) connection.buffer.reserve(kStreamRead);
  std::vector<char> chunk(kStreamRead);
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

awaitable<Expected<void>> Client::Impl::stream(Request request, HeadersHandler on_headers,
                                               LineHandler on_line, CancelSignal cancel) {
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
    result =
        co_await read_lines(*state->connection->tls, *state, deadline, message, request, on_headers, on_line);
  } else {
    result = co_await read_lines(*state->connection->plain, *state, deadline, message, request, on_headers,
                                 on_line);
  }
  state->connection->close();
  co_return result;
}

}  // namespace bootstorm::http
