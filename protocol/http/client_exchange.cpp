// Client's request/response exchange: builds the HTTP message, writes it on a pooled connection, reads the
// response, and retries what is safe to retry (backoff with jitter, Retry-After, dead pooled connections).
#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <system_error>

#include "common/header_text.hpp"
#include "protocol/http/detail/client_impl.hpp"

namespace bootstorm::http {

using namespace detail;  // the Beast and Asio names and the client's helper types

namespace {

// A reused connection that turns out to be dead before any response byte is retried on another connection
// without consuming an attempt; this bounds how many dead pooled connections one request may run into.
constexpr int kMaxStaleRetries = 8;
constexpr std::chrono::seconds kMaxRetryAfter{300};

std::optional<std::chrono::milliseconds> parse_retry_after(const Response& response) {
  auto value = response.header("Retry-After");
  if (!value) return std::nullopt;
  auto seconds = retry_after_delta_seconds(*value);  // an HTTP-date falls back to the backoff
  if (!seconds) return std::nullopt;
  return std::chrono::milliseconds(std::min<long long>(*seconds, kMaxRetryAfter.count()) * 1000);
}

}  // namespace

AttemptFailure Client::Impl::attempt_failure(const boost::system::error_code& ec, bool nothing_received,
                                             const char* phase, const Request& request) const {
  const std::string what = where(request);
  if (is_timeout(ec)) {
    return {make_error(
                ErrorKind::timeout,
                what + " timed out after " + std::to_string(request.timeout.count()) + " ms (" + phase + ")",
                "the server is slow or unreachable; retry later or raise the timeout"),
            false};
  }
  return {make_error(ErrorKind::io, what + " failed while " + phase + ": " + ec.message()), nothing_received};
}

template <class Stream>
awaitable<std::optional<AttemptFailure>> Client::Impl::exchange(Stream& stream, Connection& connection,
                                                                RequestMessage& message,
                                                                Clock::time_point deadline,
                                                                const Request& request, Response& response,
                                                                bool& keep_alive) {
  connection.tcp().expires_at(deadline);
  auto [write_ec, written] = co_await bhttp::async_write(stream, message, use_nothrow);
  if (write_ec) co_return attempt_failure(write_ec, true, "sending the request", request);
  response.written_at = Clock::now();
  response.written_at_wall = std::chrono::system_clock::now();
  ++stats.requests;
  co_return co_await read_response(stream, connection, deadline, request, response, keep_alive);
}

RequestMessage Client::Impl::build_message(Request& request) const {
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

std::chrono::milliseconds Client::Impl::backoff_delay(int retry_index) {
  double base = static_cast<double>(options.retry.initial_backoff.count());
  for (int i = 1; i < retry_index; ++i) base *= 2;
  base = std::min(base, static_cast<double>(options.retry.max_backoff.count()));
  double jitter = std::clamp(options.retry.jitter, 0.0, 1.0);
  std::uniform_real_distribution<double> spread(1.0 - jitter, 1.0 + jitter);
  return std::chrono::milliseconds(static_cast<long long>(base * spread(rng)));
}

std::chrono::milliseconds Client::Impl::throttled_delay(std::chrono::milliseconds retry_after) {
  const double base = static_cast<double>(std::max(retry_after, options.retry.initial_backoff).count());
  std::uniform_real_distribution<double> spread(1.0, 1.5);
  return std::chrono::milliseconds(static_cast<long long>(base * spread(rng)));
}

namespace {

// What a request's cancel callback reaches, on the client's executor: the connection of the attempt in flight
// and the backoff timer. The callback may outlive the request: it holds this weakly.
struct RequestCancelState {
  bool cancelled = false;
  Connection* in_flight = nullptr;
  net::steady_timer* backoff = nullptr;
};

}  // namespace

awaitable<Expected<Response>> Client::Impl::run(Request request) {
  auto self = shared_from_this();
  auto cancel_state = std::make_shared<RequestCancelState>();
  CancelSubscription cancel_subscription;
  if (request.cancel) {
    cancel_subscription = request.cancel->subscribe(
        [weak = std::weak_ptr<RequestCancelState>(cancel_state), executor = executor] {
          if (weak.expired()) return;
          net::post(executor, [weak] {
            if (auto state = weak.lock()) {
              state->cancelled = true;
              if (state->in_flight) state->in_flight->close();
              if (state->backoff) state->backoff->cancel();
            }
          });
        });
  }
  auto cancelled = [&] { return make_error(ErrorKind::cancelled, where(request) + " cancelled"); };
  // The backoff before another attempt; false when the request was cancelled meanwhile.
  auto back_off = [&](std::chrono::milliseconds delay) -> awaitable<bool> {
    net::steady_timer timer(executor);
    timer.expires_after(delay);
    cancel_state->backoff = &timer;
    co_await timer.async_wait(use_nothrow);
    cancel_state->backoff = nullptr;
    co_return !cancel_state->cancelled;
  };
  auto message = build_message(request);
  const bool idempotent = request.idempotent.value_or(default_idempotent(request.method));
  const std::string what = where(request);
  int attempt = 0;  // counted against RetryPolicy::max_attempts
  int writes = 0;   // every attempt, including transparent resends on dead pooled connections
  int stale_retries = 0;
  int throttled = 0;  // resends after 429 + Retry-After, counted against max_throttled_attempts
  std::vector<RetriedAnswer> retried;  // answers the loop did not hand over, for the caller's statistics
  while (true) {
    if (cancel_state->cancelled || (request.cancel && request.cancel->cancelled())) co_return cancelled();
    ++attempt;
    ++writes;
    const auto deadline = Clock::now() + request.timeout;
    bool reused = false;
    auto acquired = co_await acquire(deadline, reused, what);
    if (cancel_state->cancelled) {
      if (acquired) release(std::move(acquired.value()), false);
      co_return cancelled();
    }
    if (!acquired) {
      // Nothing was sent when the connection could not be opened: safe to retry whatever the method; but not
      // once the endpoint was declared gone (on_unreachable): then each request tries once and fails at once,
      // and the first one that connects again ends the outage.
      if (acquired.error().kind == ErrorKind::connect && attempt < options.retry.max_attempts &&
          !unreachable_reported) {
        ++stats.retries;
        if (!co_await back_off(backoff_delay(attempt))) co_return cancelled();
        continue;
      }
      co_return std::move(acquired.error());
    }
    ConnectionPtr connection = std::move(acquired.value());
    Response response;
    bool keep_alive = false;
    std::optional<AttemptFailure> failed;
    cancel_state->in_flight = connection.get();
    if (connection->tls) {
      failed =
          co_await exchange(*connection->tls, *connection, message, deadline, request, response, keep_alive);
    } else {
      failed = co_await exchange(*connection->plain, *connection, message, deadline, request, response,
                                 keep_alive);
    }
    cancel_state->in_flight = nullptr;
    if (cancel_state->cancelled) {
      release(std::move(connection), false);
      co_return cancelled();
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
    // 429 says the request was refused before it was handled (API Priority and Fairness, a proxy's limit):
    // sending it again is safe whatever the method.
    bool may_retry = idempotent || response.status == 429 ||
                     (response.status == 503 && options.retry.retry_non_idempotent_on_503);
    if (is_retryable_status(response.status) && may_retry) {
      std::optional<std::chrono::milliseconds> delay;
      const auto retry_after = parse_retry_after(response);
      if (response.status == 429 && retry_after && throttled < options.retry.max_throttled_attempts) {
        ++throttled;
        --attempt;
        delay = throttled_delay(*retry_after);
      } else if (attempt < options.retry.max_attempts) {
        delay = backoff_delay(attempt);
        if (retry_after) delay = std::max(*delay, *retry_after);
      }
      if (delay) {
        ++stats.retries;
        retried.push_back({response.status, std::move(response.headers)});
        if (!co_await back_off(*delay)) co_return cancelled();
        continue;
      }
    }
    response.retried = std::move(retried);
    co_return response;
  }
}

}  // namespace bootstorm::http
