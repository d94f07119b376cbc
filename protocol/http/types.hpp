#pragma once
// Plain HTTP message types shared by the client and the server. No Beast here: Beast stays inside
// protocol/http/*.cpp so that the rest of the tree compiles fast.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/cancel.hpp"

namespace bootstorm::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

// Case-insensitive header lookup; nullopt when absent.
std::optional<std::string_view> find_header(const Headers& headers, std::string_view name);

// Not an aggregate on purpose: g++ 12 miscompiles an aggregate temporary passed to a coroutine inside a
// co_await expression (`co_await client.request(Request{.target = "/"})` frees a dangling pointer at run
// time). With these constructors that spelling does not compile; write `Request("GET", "/x")` or fill a named
// Request instead.
struct Request {
  Request() = default;
  Request(std::string method_, std::string target_, std::string body_ = {})
      : method(std::move(method_)), target(std::move(target_)), body(std::move(body_)) {}

  std::string method = "GET";  // GET, POST, PUT, PATCH, DELETE, HEAD
  std::string target = "/";    // path and query, e.g. "/api/vcenter/vm?names=a"
  Headers headers;             // extra headers; Host, Content-Length, User-Agent are set by the client
  std::string body;
  // Deadline for the whole exchange (connect + TLS + write + read). For streams: connect + headers only.
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  // nullopt: derived from the method (GET, HEAD, PUT, DELETE, OPTIONS are idempotent).
  std::optional<bool> idempotent;
  // When it fires (Ctrl-C), the exchange ends at once with ErrorKind::cancelled: the connection in use is
  // closed and a backoff is cut short. Unset: the request runs to its answer or its deadline.
  std::optional<CancelSignal> cancel;

  std::optional<std::string_view> header(std::string_view name) const { return find_header(headers, name); }
};

// An answer the client did not hand over because it sent the request again (429, 502-504): kept so that the
// caller can count what the server said (throttled, failing), not only the answer that ended the exchange.
struct RetriedAnswer {
  int status = 0;
  Headers headers;
};

struct Response {
  int status = 0;
  Headers headers;
  std::string body;
  // Client side only: the answers to earlier attempts of this request that the client retried, oldest first.
  std::vector<RetriedAnswer> retried;
  // Client side only: how many attempts it took, and whether a pooled connection was reused.
  int attempts = 1;
  bool reused_connection = false;
  // Client side only: steady-clock instants at which the (last attempt's) request was completely written to
  // the socket and at which the response headers were read. The storm's start_requested is `written_at`.
  std::chrono::steady_clock::time_point written_at{};
  std::chrono::system_clock::time_point written_at_wall{};
  std::chrono::steady_clock::time_point received_at{};

  std::optional<std::string_view> header(std::string_view name) const { return find_header(headers, name); }
};

// Percent-encodes a query component (RFC 3986 unreserved characters pass through).
std::string url_encode(std::string_view text);
std::string url_decode(std::string_view text);

// An absolute URL split into its parts: scheme "http"/"https", host, port (defaulted), path+query target.
struct Url {
  std::string scheme;
  std::string host;
  unsigned short port = 0;
  std::string target = "/";
  std::string origin() const;  // scheme://host:port
};
// nullopt when not an absolute http(s) URL.
std::optional<Url> parse_url(std::string_view text);

}  // namespace bootstorm::http
