// KubeApi over http::Client (see http_kube_api.hpp).
#include "protocol/kube/http_kube_api.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cctype>

#include "common/async/wait_group.hpp"
#include "common/header_text.hpp"
#include "common/log.hpp"
#include "protocol/kube/detail/line_relay.hpp"
#include "protocol/kube/lateness_monitor.hpp"
#include "protocol/kube/status_error.hpp"
#include "protocol/kube/watch_thread.hpp"

namespace bootstorm::kube {
namespace asio = boost::asio;
using asio::awaitable;
using std::chrono::steady_clock;
using std::chrono::system_clock;

namespace {

// A dry run makes every call that changes nothing: reads, and the access reviews (authorization.k8s.io's
// review resources are answered without being stored).
bool changes_state(const ApiCall& call) {
  if (call.method == "GET" || call.method == "HEAD") return false;
  return !(call.method == "POST" && call.target.starts_with("/apis/authorization.k8s.io/") &&
           call.target.find("reviews") != std::string::npos);
}

// The start instant of a first attempt is when the request was handed to the client, which writes it to its
// (pre-opened, dedicated) connection before it first suspends. The client's own written_at is stamped when
// the write completion runs: during a storm that is queued behind the other starts' writes and comes
// measurably (up to the whole fire window) after the server already received the request. A resend keeps the
// client's.
void stamp_handed(Expected<http::Response>& resp, steady_clock::time_point handed_mono,
                  system_clock::time_point handed_wall) {
  if (resp && resp->attempts <= 1 && resp->written_at >= handed_mono) {
    resp->written_at = handed_mono;
    resp->written_at_wall = handed_wall;
  }
}

}  // namespace

HttpKubeApi::HttpKubeApi(asio::any_io_executor executor, KubeClientConfig config, HttpKubeOptions options)
    : executor_(std::move(executor)),
      config_(std::move(config)),
      options_(std::move(options)),
      budget_(executor_, options_.requests_per_second, std::max(1.0, options_.burst)) {}

HttpKubeApi::~HttpKubeApi() {
  close();
}

void HttpKubeApi::close() {
  if (client_) client_->close_idle();
  watch_thread_.reset();
}

// --- connection ---

awaitable<Expected<void>> HttpKubeApi::connect(const ConnectProbe& probe) {
  auto url = http::parse_url(config_.server);
  if (!url || url->scheme != "https") {
    co_return make_error(
        ErrorKind::invalid_input,
        "the API server URL \"" + config_.server + "\" of " + config_.source + " is not an https URL",
        "Kubernetes API servers are reached over https");
  }
  prefix_ = url->target == "/" ? std::string() : url->target;
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  creds_.emplace(config_);
  http::ClientOptions client_options;
  client_options.base_url = url->origin();
  client_options.tls = config_.tls;
  if (config_.auth.exec) {
    auto cred = creds_->exec_credential(system_clock::now());
    if (!cred) co_return cred.error();
    if (!cred->client_certificate_data.empty()) {
      client_options.tls.client_cert_data = cred->client_certificate_data;
      client_options.tls.client_key_data = cred->client_key_data;
      client_options.tls.client_cert_file.clear();
      client_options.tls.client_key_file.clear();
    }
  }
  if (client_options.tls.insecure_skip_verify) {
    spdlog::warn(
        "TLS verification of {} is disabled (insecure-skip-tls-verify): anyone on the path can impersonate "
        "the API server; use it only in a lab",
        config_.server);
  }
  client_options.max_connections = std::max<std::size_t>(1, options_.max_connections);
  client_options.user_agent = options_.user_agent;
  client_options.default_headers = {{"Accept", "application/json"}};
  client_options.on_unreachable = [gone = gone_, report = options_.on_gone](const std::string& message) {
    {
      std::lock_guard lock(gone->mutex);
      if (gone->message) return;  // the other client said it first
      gone->message = message;
    }
    if (report) report(message);
  };
  watch_client_options_ = client_options;
  watch_client_options_->max_connections = std::max<std::size_t>(1, options_.watch_connections);
  try {
    client_ = std::make_unique<http::Client>(executor_, std::move(client_options));
  } catch (const std::exception& e) {
    co_return make_error(ErrorKind::tls, std::string("cannot set up TLS for ") + config_.server + " (" +
                                             config_.source + "): " + e.what());
  }
  const std::string what = "checking " + probe.what + " at " + config_.server;
  // Named first: g++ 12 miscompiles aggregate temporaries inside a co_await expression.
  ApiCall probe_call{"GET", probe.path, {}};
  auto resp = co_await call(std::move(probe_call), what);
  if (!resp) co_return resp.error();
  if (resp->status == 404) {
    co_return make_error(
        ErrorKind::not_found,
        "the API server " + config_.server + " does not serve " + probe.what + " (" + config_.source + ")",
        probe.missing_hint);
  }
  if (resp->status != 200) co_return status_error(resp->status, resp->body, what);
  co_return Expected<void>();
}

Expected<void> HttpKubeApi::refresh_auth() {
  auto auth = creds_->authorization(system_clock::now());
  if (!auth) return auth.error();
  if (*auth != current_auth_) {
    current_auth_ = *auth;
    log::register_secret(current_auth_);
    client_->set_default_header("Authorization", current_auth_);
  }
  return {};
}

bool HttpKubeApi::can_refresh_credentials() const {
  return config_.auth.exec.has_value() || !config_.auth.token_file.empty();
}

http::Request HttpKubeApi::request_for(const ApiCall& call) const {
  http::Request req(call.method, prefix_ + call.target, call.body);
  if (!req.body.empty()) req.headers.emplace_back("Content-Type", call.content_type);
  req.timeout = options_.request_timeout;
  return req;
}

// --- calls ---

awaitable<void> HttpKubeApi::wait_for_budget() {
  co_await budget_.acquire();
}

void HttpKubeApi::charge_budget() {
  budget_.charge();
}

void HttpKubeApi::count(const Expected<http::Response>& resp) {
  if (!resp) {
    stats_.requests++;
    stats_.errors++;
    return;
  }
  stats_.requests += static_cast<std::uint64_t>(std::max(1, resp->attempts));
  stats_.retries += static_cast<std::uint64_t>(std::max(0, resp->attempts - 1));
  if (resp->status >= 400) stats_.errors++;
  for (const auto& earlier : resp->retried) stats_.note_answer(earlier.status, earlier.headers);
  stats_.note_answer(resp->status, resp->headers);
}

void HttpKubeApi::log_warnings(const Expected<http::Response>& resp, const std::string& what) {
  if (!resp) return;
  for (const auto& [name, value] : resp->headers) {
    if (!equals_ignoring_ascii_case(name, "Warning")) continue;
    for (auto& text : warning_texts(value))
      if (warned_.insert(text).second)
        spdlog::warn(
            "the API server warned while {}: {} (further answers with this warning are counted in "
            "summary.json's apiAnswers.warnings)",
            what, text);
  }
}

awaitable<Expected<http::Response>> HttpKubeApi::call(ApiCall call, std::string what) {
  if (!client_) co_return make_error(ErrorKind::internal, what + ": not connected");
  if (options_.dry_run && changes_state(call)) {
    spdlog::info("dry run: {} {}{} {}", call.method, prefix_, call.target, log::redact(call.body));
    http::Response fake;
    fake.status = call.method == "POST" ? 201 : 200;
    fake.body = "{}";
    fake.written_at = fake.received_at = steady_clock::now();
    fake.written_at_wall = system_clock::now();
    co_return fake;
  }
  for (int auth_attempt = 0;; ++auth_attempt) {
    if (auto auth = refresh_auth(); !auth) co_return auth.error();
    if (call.budget == Budget::paced) co_await budget_.acquire();
    http::Request req = request_for(call);
    const auto handed_mono = steady_clock::now();
    const auto handed_wall = system_clock::now();
    auto resp = co_await client_->request(std::move(req));
    stamp_handed(resp, handed_mono, handed_wall);
    count(resp);
    log_warnings(resp, what);
    if (!resp) co_return tls_aware(resp.error(), what);
    if (resp->status == 401 && auth_attempt == 0 && can_refresh_credentials()) {
      creds_->invalidate();
      continue;
    }
    co_return resp;
  }
}

awaitable<std::vector<Expected<http::Response>>> HttpKubeApi::pipeline(std::vector<PipelinedCall> calls,
                                                                       std::size_t per_connection) {
  std::vector<Expected<http::Response>> results;
  results.reserve(calls.size());
  if (!client_ || options_.dry_run) {
    for (auto& c : calls) results.push_back(co_await call(c.call, c.what));
    co_return results;
  }
  if (auto auth = refresh_auth(); !auth) {
    for (std::size_t i = 0; i < calls.size(); ++i) results.emplace_back(auth.error());
    co_return results;
  }
  // Every request is built before the first batch leaves: building them batch by batch put the preparation of
  // all earlier batches between the first and the last start written (8 ms of fire skew at 1,000 starts).
  per_connection = std::max<std::size_t>(1, per_connection);
  std::vector<std::vector<http::Request>> batches;
  batches.reserve((calls.size() + per_connection - 1) / per_connection);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (i % per_connection == 0) batches.emplace_back().reserve(per_connection);
    batches.back().push_back(request_for(calls[i].call));
  }
  for (std::size_t i = 0; i < calls.size(); ++i)
    results.emplace_back(make_error(ErrorKind::internal, "not sent"));
  async::WaitGroup all(executor_);
  all.add(batches.size());
  for (std::size_t b = 0; b < batches.size(); ++b) {
    asio::co_spawn(
        executor_,
        [this, &results, &all, &calls, first = b * per_connection,
         requests = std::move(batches[b])]() mutable -> awaitable<void> {
          const std::size_t count = requests.size();
          const auto handed_mono = steady_clock::now();
          const auto handed_wall = system_clock::now();
          try {
            auto answered = co_await client_->pipeline(std::move(requests));
            for (std::size_t i = 0; i < answered.size() && i < count; ++i) {
              stamp_handed(answered[i], handed_mono, handed_wall);
              results[first + i] = std::move(answered[i]);
            }
          } catch (const std::exception& e) {
            // pipeline() throws only for requests that may not be pipelined (not idempotent): a bug above.
            for (std::size_t i = 0; i < count; ++i) {
              results[first + i] =
                  make_error(ErrorKind::internal, calls[first + i].what + ": pipelining failed: " + e.what());
            }
          }
          all.done();
        },
        asio::detached);
  }
  co_await all.wait();
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto& resp = results[i];
    count(resp);
    log_warnings(resp, calls[i].what);
    if (!resp) {
      resp = tls_aware(resp.error(), calls[i].what);
    } else if (resp->status == 401 && can_refresh_credentials()) {
      // Credentials expired under the burst: this call goes again on its own with fresh ones.
      creds_->invalidate();
      calls[i].call.budget = Budget::unpaced;
      resp = co_await call(std::move(calls[i].call), std::move(calls[i].what));
    }
  }
  co_return results;
}

awaitable<Expected<void>> HttpKubeApi::prewarm(std::size_t connections) {
  if (!client_) co_return make_error(ErrorKind::internal, "opening connections before connect");
  if (auto auth = refresh_auth(); !auth) co_return auth.error();
  if (options_.dry_run || connections == 0) co_return Expected<void>();
  auto warmed = co_await client_->prewarm(connections);
  if (!warmed) co_return tls_aware(warmed.error(), "opening connections to " + config_.server);
  co_return Expected<void>();
}

// --- watch streams ---

awaitable<WatchOutcome> HttpKubeApi::watch(WatchRequest request, WatchEventHandler on_event,
                                           CancelSignal cancel) {
  if (!client_) co_return WatchOutcome{make_error(ErrorKind::internal, "watch before connect"), 0, {}};
  if (auto auth = refresh_auth(); !auth) co_return WatchOutcome{auth.error(), 0, {}};
  http::Request req("GET", prefix_ + request.target);
  req.timeout = options_.request_timeout;
  stats_.requests++;
  WatchOutcome outcome;
  if (request.own_thread && ensure_watch_thread()) {
    if (!current_auth_.empty()) req.headers.emplace_back("Authorization", current_auth_);
    outcome = co_await watch_on_own_thread(std::move(request), std::move(on_event), std::move(cancel),
                                           std::move(req));
  } else {
    outcome = co_await watch_here(std::move(request), std::move(on_event), std::move(cancel), std::move(req));
  }
  if (outcome.status >= 400) stats_.errors++;
  if (outcome.status > 0) stats_.note_answer(outcome.status, {});
  if (outcome.status == 401) creds_->invalidate();
  if (!outcome.result && outcome.result.error().kind == ErrorKind::tls) {
    outcome.result = tls_aware(outcome.result.error(), "watching " + request.target);
  }
  co_return outcome;
}

bool HttpKubeApi::ensure_watch_thread() {
  if (watch_thread_) return true;
  if (!watch_client_options_) return false;
  try {
    watch_thread_ = std::make_shared<WatchThread>(*watch_client_options_);
    return true;
  } catch (const std::exception& e) {
    spdlog::warn("cannot start the watch thread ({}); watches share the caller's event loop", e.what());
    watch_client_options_.reset();
    return false;
  }
}

asio::any_io_executor HttpKubeApi::watch_executor() {
  return ensure_watch_thread() ? watch_thread_->executor() : executor_;
}

awaitable<WatchOutcome> HttpKubeApi::watch_here(WatchRequest request, WatchEventHandler on_event,
                                                CancelSignal cancel, http::Request req) {
  WatchOutcome outcome;
  ClientInstant connected_at = ClientInstant::now();
  LatenessMonitor* lateness = request.lateness.get();
  const WatchDecode decode = request.decode;
  outcome.result = co_await client_->stream(
      std::move(req),
      [&](int status, const http::Headers&) {
        outcome.status = status;
        connected_at = ClientInstant::now();
      },
      [&](std::string_view line) {
        if (outcome.status != 200) {
          outcome.error_body.append(line);
          return;
        }
        if (line.empty()) return;
        ClientInstant at = ClientInstant::now();
        const double lateness_s = lateness ? lateness->line_started(at.mono) : 0.0;
        struct LineDone {
          LatenessMonitor* monitor;
          ~LineDone() {
            if (monitor) monitor->line_finished();
          }
        } line_done{lateness};
        on_event(decode_watch_line(line, decode), at, lateness_s, connected_at);
      },
      std::move(cancel));
  co_return outcome;
}

namespace {

// A watch line as the WatchThread hands it to the caller's executor: compacted, with its stamps.
struct StampedLine {
  std::string text;
  ClientInstant at;
  double lateness_s = 0;
  ClientInstant connected_at;
};

// What a stream read on the WatchThread hands back to the caller's executor.
struct ThreadStreamState {
  WatchOutcome outcome;
  ClientInstant connected_at;
};

// Runs on the WatchThread: reads the stream, stamps each line as it is handed over, compacts it to the
// milestone fields and relays it to `main` (in order, in batches: detail/line_relay.hpp), where it is
// decoded. Raw VMI lines queued behind a busy caller loop were 147 MB of a 10,000-VM storm's heap; compacted
// they are a fraction of that. Decoding them here instead cost accuracy: the observation error against the
// lab's delivery went from 11-17 ms to 35-40 ms (P50, 1,000 VMs), so this thread only scans and copies.
// Parameters by value: the frame owns what it uses.
awaitable<WatchOutcome> read_stream_on_thread(WatchThread* watch, std::shared_ptr<LatenessMonitor> lateness,
                                              http::Request req, WatchDecode decode, CancelSignal cancel,
                                              asio::any_io_executor main, WatchEventHandler deliver) {
  auto state = std::make_shared<ThreadStreamState>();
  state->connected_at = ClientInstant::now();
  http::Client::HeadersHandler on_headers = [state](int s, const http::Headers&) {
    state->outcome.status = s;
    state->connected_at = ClientInstant::now();
  };
  auto relay = std::make_shared<detail::LineRelay<StampedLine>>(
      main, [deliver = std::move(deliver), decode](StampedLine& line) {
        deliver(decode_watch_line(line.text, decode), line.at, line.lateness_s, line.connected_at);
      });
  http::Client::LineHandler on_line = [state, lateness, relay, decode](std::string_view line) {
    if (state->outcome.status != 200) {
      state->outcome.error_body.append(line);
      return;
    }
    if (line.empty()) return;
    ClientInstant at = ClientInstant::now();
    const double lateness_s = lateness ? lateness->line_started(at.mono) : 0.0;
    auto compact = decode == WatchDecode::milestone_fields ? compact_watch_line(line) : std::nullopt;
    relay->push(
        StampedLine{compact ? std::move(*compact) : std::string(line), at, lateness_s, state->connected_at});
    if (lateness) lateness->line_finished();
  };
  state->outcome.result = co_await watch->client().stream(std::move(req), std::move(on_headers),
                                                          std::move(on_line), std::move(cancel));
  // The caller's handler (in the relay) is released on the caller's executor, as it is used there.
  asio::post(main, [relay = std::move(relay)] {});
  co_return std::move(state->outcome);
}

}  // namespace

awaitable<WatchOutcome> HttpKubeApi::watch_on_own_thread(WatchRequest request, WatchEventHandler on_event,
                                                         CancelSignal cancel, http::Request req) {
  // Lines are relayed in order, each by a drain posted no later than the line, and the stream's completion
  // is posted after the last of them, so every on_event runs before co_await returns. `watch` keeps the
  // thread alive until then; the coroutine on it holds only a raw pointer, so the last reference is never
  // dropped on the thread itself (a self-join).
  std::shared_ptr<WatchThread> watch = watch_thread_;
  // A named awaitable rather than a temporary inside the co_await expression: g++ 12 mis-copies such
  // temporaries (valgrind: strings freed from this frame).
  awaitable<WatchOutcome> on_thread =
      read_stream_on_thread(watch.get(), request.lateness, std::move(req), request.decode, std::move(cancel),
                            executor_, std::move(on_event));
  WatchOutcome outcome =
      co_await asio::co_spawn(watch->executor(), std::move(on_thread), asio::use_awaitable);
  co_return outcome;
}

// --- errors ---

std::string HttpKubeApi::ca_description() const {
  if (!config_.tls.ca_file.empty()) return "CA file " + config_.tls.ca_file;
  if (!config_.tls.ca_data.empty()) return "the CA data of " + config_.source;
  return "the system trust store";
}

Error HttpKubeApi::tls_aware(Error e, const std::string& what) const {
  if (e.kind != ErrorKind::tls) {
    e.message = what + ": " + e.message;
    return e;
  }
  std::string lower = e.message;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("hostname") != std::string::npos || lower.find("host name") != std::string::npos) {
    return make_error(
        ErrorKind::tls,
        what + ": the server's certificate does not match the host name of " + config_.server + " (" +
            e.message + ")",
        "use the API server's DNS name as in its certificate, or set tls-server-name in the kubeconfig");
  }
  return make_error(ErrorKind::tls,
                    what + ": the server's certificate is not trusted by the configured CA (" +
                        ca_description() + ") — " + e.message,
                    "point the kubeconfig's certificate-authority(-data) or the plan's tls.caFile at the CA "
                    "that signed the API server's certificate (e.g. from `kubectl config view --raw` of a "
                    "working context); tls.insecureSkipVerify: true is for labs only");
}

}  // namespace bootstorm::kube
