#include "orchestrator/beacon/listener.hpp"

#include <fmt/format.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "common/async/token_bucket.hpp"
#include "common/log.hpp"
#include "protocol/http/server.hpp"

namespace bootstorm::beacon {

namespace {

using Clock = std::chrono::steady_clock;

http::ServerResponse json_response(int status, nlohmann::json body) {
  http::ServerResponse r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  r.headers.emplace_back("Cache-Control", "no-store");
  r.body = body.dump();
  return r;
}

http::ServerResponse error_response(int status, const std::string& reason) {
  return json_response(status, {{"error", reason}});
}

std::string hex(const unsigned char* data, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[data[i] >> 4];
    out[2 * i + 1] = digits[data[i] & 0xF];
  }
  return out;
}

std::string address_without_port(const std::string& remote) {
  auto colon = remote.rfind(':');
  if (colon == std::string::npos) return remote;
  return remote.substr(0, colon);
}

// Failure buckets kept before full ones are forgotten (a bound on memory under failures from many addresses).
constexpr std::size_t kMaxBuckets = 4096;

}  // namespace

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (!mac) throw std::runtime_error("OpenSSL: HMAC is not available");
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  char digest_name[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
                         OSSL_PARAM_construct_end()};
  unsigned char out[EVP_MAX_MD_SIZE];
  std::size_t out_len = 0;
  bool ok =
      ctx && EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) == 1 &&
      EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1 &&
      EVP_MAC_final(ctx, out, &out_len, sizeof out) == 1;
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  if (!ok) throw std::runtime_error("OpenSSL: HMAC-SHA256 failed");
  return hex(out, out_len);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Length is not secret (every token has 64 hex digits); the content comparison must not exit early.
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool split_host_port(const std::string& text, std::string& host, unsigned short& port) {
  std::string h, p;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') return false;
    h = text.substr(1, close - 1);
    p = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) return false;
    h = text.substr(0, colon);
    p = text.substr(colon + 1);
  }
  if (h.empty() || p.empty() || p.size() > 5) return false;
  unsigned long v = 0;
  for (char c : p) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned long>(c - '0');
  }
  if (v > 65535) return false;
  host = h;
  port = static_cast<unsigned short>(v);
  return true;
}

struct Listener::Impl {
  boost::asio::any_io_executor executor;
  ListenerOptions options;
  std::unique_ptr<http::Server> server;
  std::map<std::string, std::string> expected;        // name or platform id -> name
  std::set<std::string> arrived;                      // names whose beacon was accepted
  std::map<std::string, async::TokenBucket> buckets;  // failed requests, per remote address
  api::MilestoneSink sink;
  ListenerStats stats;
  std::set<std::string> closed;  // names whose observation window is over

  std::string token(const std::string& vm) const {
    return hmac_sha256_hex(options.secret, options.run_id + ":" + vm);
  }

  // Charges one failed request to the remote address; false when its bucket is empty.
  bool charge_failure(const std::string& remote, Clock::time_point now) {
    if (buckets.size() >= kMaxBuckets) forget_refilled_buckets(now);
    auto it =
        buckets.try_emplace(address_without_port(remote), options.rate_per_second, options.burst, now).first;
    return it->second.try_take(now);
  }

  // Addresses whose bucket is full again behave exactly like unknown ones: dropping them bounds the map when
  // failures come from very many addresses.
  void forget_refilled_buckets(Clock::time_point now) {
    for (auto it = buckets.begin(); it != buckets.end();)
      it = it->second.full(now) ? buckets.erase(it) : std::next(it);
  }

  http::ServerResponse handle(const http::ServerRequest& req, Clock::time_point arrived_mono,
                              std::chrono::system_clock::time_point arrived_wall) {
    auto response = evaluate(req, arrived_mono, arrived_wall);
    // Valid calls are never charged: a flood of bad requests from a guest's address must not cost it its
    // own ready call.
    if (response.status >= 400 && !charge_failure(req.remote_address, arrived_mono)) {
      ++stats.rate_limited;
      auto r = error_response(429, "too many failed requests from this address; retry later");
      r.headers.emplace_back("Retry-After", "1");
      r.close = true;  // a client that keeps failing reconnects before its next attempt
      return r;
    }
    return response;
  }

  http::ServerResponse evaluate(const http::ServerRequest& req, Clock::time_point arrived_mono,
                                std::chrono::system_clock::time_point arrived_wall) {
    if (req.path != "/v1/ready") {
      ++stats.bad_request;
      return error_response(404, "unknown path; guests POST to /v1/ready");
    }
    if (req.method != "POST") {
      ++stats.bad_request;
      auto r = error_response(405, "method not allowed; use POST");
      r.headers.emplace_back("Allow", "POST");
      return r;
    }
    if (req.body.size() > options.max_body_bytes) {
      ++stats.bad_request;
      return error_response(413, fmt::format("body larger than {} bytes", options.max_body_bytes));
    }
    auto body = nlohmann::json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      ++stats.bad_request;
      return error_response(400, "body must be a JSON object {\"vm\": ..., \"token\": ...}");
    }
    auto vm_it = body.find("vm");
    auto token_it = body.find("token");
    if (vm_it == body.end() || !vm_it->is_string() || vm_it->get_ref<const std::string&>().empty()) {
      ++stats.bad_request;
      return error_response(400, "missing or invalid field \"vm\" (string: VM name or platform id)");
    }
    if (token_it == body.end() || !token_it->is_string()) {
      ++stats.bad_request;
      return error_response(400, "missing or invalid field \"token\" (string)");
    }
    std::string ip;
    if (auto ip_it = body.find("ip"); ip_it != body.end()) {
      if (!ip_it->is_string()) {
        ++stats.bad_request;
        return error_response(400, "field \"ip\" must be a string");
      }
      ip = ip_it->get<std::string>();
    }
    auto known = expected.find(vm_it->get<std::string>());
    if (known == expected.end()) {
      ++stats.unknown_vm;
      return error_response(404, "unknown vm: not part of this run's storm");
    }
    const std::string& name = known->second;
    if (!constant_time_equal(token_it->get_ref<const std::string&>(), token(name))) {
      ++stats.unauthorized;
      return error_response(401, "invalid token for this vm");
    }
    if (closed.count(name)) {
      ++stats.late;
      return error_response(410, "this run no longer observes its vms: the ready call came too late");
    }
    if (!arrived.insert(name).second) {
      ++stats.duplicates;
      return json_response(200, {{"status", "duplicate"}, {"vm", name}});
    }
    ++stats.accepted;
    if (sink) {
      api::MilestoneEvent ev;
      ev.vm = name;
      ev.milestone = api::Milestone::beacon;
      ev.observed_mono = arrived_mono;
      ev.observed_wall = arrived_wall;
      ev.resolution_s = 0.001;  // a push, stamped on arrival
      ev.source = api::Source::beacon;
      ev.detail = ip;
      sink(std::move(ev));
    }
    return json_response(200, {{"status", "accepted"}, {"vm", name}});
  }
};

Listener::Listener(boost::asio::any_io_executor executor, ListenerOptions options)
    : impl_(std::make_shared<Impl>()) {
  impl_->executor = executor;
  impl_->options = std::move(options);
  if (impl_->options.secret.empty()) {
    unsigned char key[32];
    if (RAND_bytes(key, sizeof key) != 1)
      throw std::runtime_error("OpenSSL: no randomness for the beacon key");
    impl_->options.secret = hex(key, sizeof key);
  }
  log::register_secret(impl_->options.secret);
  if (impl_->options.burst < 1) impl_->options.burst = 1;
  if (!(impl_->options.rate_per_second > 0))
    throw std::invalid_argument("beacon listener: rate_per_second must be > 0 (failed requests per second)");
}

Listener::~Listener() {
  if (impl_->server) impl_->server->stop_now();
}

Expected<void> Listener::start() {
  std::string host;
  unsigned short port = 0;
  if (!split_host_port(impl_->options.listen, host, port))
    return make_error(ErrorKind::invalid_input,
                      fmt::format("beacon listen address '{}' is not host:port", impl_->options.listen),
                      "write it like 127.0.0.1:0 or [::1]:8080");
  http::ServerOptions so;
  so.bind_address = host;
  so.port = port;
  // The server drops anything beyond 4x the limit outright (a declared Content-Length above it is refused
  // before the body is read); the handler answers 413 with a JSON reason for bodies between the two, so the
  // 4 KiB bound does not depend on how the server reports oversize bodies.
  so.max_body_bytes = impl_->options.max_body_bytes * 4;
  so.max_header_bytes = 8 * 1024;
  so.idle_timeout = impl_->options.idle_timeout;
  so.read_timeout = impl_->options.request_timeout;
  std::weak_ptr<Impl> weak = impl_;
  impl_->server = std::make_unique<http::Server>(
      impl_->executor, so, [weak](http::ServerRequest& req) -> boost::asio::awaitable<http::ServerResponse> {
        const auto mono = Clock::now();
        const auto wall = std::chrono::system_clock::now();
        auto impl = weak.lock();
        if (!impl) co_return error_response(503, "beacon listener is stopping");
        co_return impl->handle(req, mono, wall);
      });
  auto started = impl_->server->start();
  if (!started)
    return make_error(started.error().kind,
                      fmt::format("cannot start the beacon listener on {}: {}", impl_->options.listen,
                                  started.error().message),
                      "choose another ready.beacon.listen address");
  return {};
}

unsigned short Listener::port() const {
  return impl_->server ? impl_->server->port() : 0;
}

std::string Listener::url() const {
  std::string base = impl_->options.advertise_url;
  if (base.empty()) base = impl_->server ? impl_->server->base_url() : std::string();
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string suffix = "/v1/ready";
  if (base.size() >= suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0)
    return base;
  return base + suffix;
}

std::string Listener::token_for(const std::string& vm_name) {
  auto t = impl_->token(vm_name);
  log::register_secret(t);
  return t;
}

void Listener::expect(const std::string& vm_name, const std::string& platform_id) {
  log::register_secret(impl_->token(vm_name));
  impl_->expected[vm_name] = vm_name;
  if (!platform_id.empty()) impl_->expected[platform_id] = vm_name;
}

void Listener::set_sink(api::MilestoneSink sink) {
  impl_->sink = std::move(sink);
}

void Listener::close_window() {
  for (const auto& entry : impl_->expected) impl_->closed.insert(entry.second);
}

boost::asio::awaitable<void> Listener::stop() {
  if (impl_->server) co_await impl_->server->stop();
}

const ListenerStats& Listener::stats() const {
  return impl_->stats;
}

Expected<std::unique_ptr<ReadyListener>> start_listener(boost::asio::any_io_executor executor,
                                                        ListenerOptions options) {
  auto listener = std::make_unique<Listener>(std::move(executor), std::move(options));
  auto started = listener->start();
  if (!started) return started.error();
  return std::unique_ptr<ReadyListener>(std::move(listener));
}

}  // namespace bootstorm::beacon
