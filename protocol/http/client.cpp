// http::Client's public member functions, thin forwards to Client::Impl (detail/client_impl.hpp), and the
// construction of Impl from ClientOptions.
#include "protocol/http/client.hpp"

#include <algorithm>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <cctype>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/log.hpp"
#include "protocol/http/detail/client_impl.hpp"
#include "protocol/http/detail/tls_context.hpp"

namespace bootstorm::http {

using namespace detail;  // the Beast and Asio names and the client's helper types

namespace {

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

}  // namespace

Client::Impl::Impl(net::any_io_executor ex, ClientOptions opts)
    : executor(std::move(ex)), options(std::move(opts)) {
  auto parsed = parse_url(options.base_url);
  if (!parsed) {
    throw std::invalid_argument("invalid base URL '" + options.base_url +
                                "': expected an absolute http:// or https:// URL");
  }
  origin = *parsed;
  tls_enabled = origin.scheme == "https";
  bool default_port = origin.port == (tls_enabled ? 443 : 80);
  std::string host_part = origin.host.find(':') != std::string::npos ? "[" + origin.host + "]" : origin.host;
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
