// Client's HTTP/1.1 pipelining (RFC 9112 section 9.3.2): a batch of idempotent requests written in one write
// on one pooled connection, responses read in order, and the requests left unanswered sent again one by one.
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/header_text.hpp"
#include "protocol/http/detail/client_impl.hpp"

namespace bootstorm::http {

using namespace detail;  // the Beast and Asio names and the client's helper types

// Where a pipelined batch stands: one slot per request; `redo` lists those to send again one by one.
struct Client::Impl::Batch {
  explicit Batch(const net::any_io_executor& ex) : timer(ex) {}
  std::vector<Request> requests;
  std::vector<std::optional<Expected<Response>>> results;
  std::vector<std::size_t> redo;
  std::vector<std::optional<RetriedAnswer>> pipelined_answers;  // a retryable answer that sent it to `redo`
  net::steady_timer timer;                                      // wakes the batch when the last redo finished
  std::size_t redo_pending = 0;
};

// Writes every request of the batch in one write on `connection`, then reads the responses in order.
// Returns whether the connection can be reused. A request whose response did not come (the connection
// dropped or the server closed it after an earlier response) or came with a retryable status goes to
// `redo`: pipelined requests are idempotent, so sending them again is safe.
template <class Stream>
awaitable<bool> Client::Impl::pipeline_exchange(Stream& stream, Connection& connection,
                                                const std::string& wire, Clock::time_point deadline,
                                                bool reused, Batch& batch) {
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
      batch.pipelined_answers[i] = RetriedAnswer{response.status, std::move(response.headers)};
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

// Sends one request of a batch again on its own (the normal path: pool, retries, backoff), after the wait its
// pipelined answer asked for (429 or 503 with Retry-After; a cancelled request does not wait).
awaitable<void> Client::Impl::redo_one(std::shared_ptr<Impl> self, std::shared_ptr<Batch> batch,
                                       std::size_t index) {
  const Request& request = batch->requests[index];
  if (const auto& answer = batch->pipelined_answers[index]) {
    const auto wait = find_header(answer->headers, "Retry-After");
    const auto seconds = wait ? retry_after_delta_seconds(*wait) : std::nullopt;
    if (seconds && !(request.cancel && request.cancel->cancelled())) {
      auto timer = std::make_shared<net::steady_timer>(self->executor);
      timer->expires_after(self->throttled_delay(std::chrono::seconds(std::min<long long>(*seconds, 300))));
      CancelSubscription stop;
      if (request.cancel) {
        CancelSignal cancel = *request.cancel;  // a copy shares the signal's state
        stop = cancel.subscribe(
            [timer, executor = self->executor] { net::post(executor, [timer] { timer->cancel(); }); });
      }
      co_await timer->async_wait(use_nothrow);
    }
  }
  auto result = co_await self->run(batch->requests[index]);
  if (result) {
    result->attempts += 1;  // the pipelined attempt
    if (auto& answer = batch->pipelined_answers[index])
      result->retried.insert(result->retried.begin(), *answer);
  }
  batch->results[index] = std::move(result);
  if (--batch->redo_pending == 0) batch->timer.cancel();
}

awaitable<std::vector<Expected<Response>>> Client::Impl::pipeline(std::vector<Request> requests) {
  auto self = shared_from_this();
  for (const auto& request : requests) {
    if (!request.idempotent.value_or(default_idempotent(request.method))) {
      throw std::invalid_argument("http::Client::pipeline: " + request.method + " " + request.target +
                                  " is not idempotent; only idempotent requests may be pipelined");
    }
  }
  auto batch = std::make_shared<Batch>(executor);
  batch->results.resize(requests.size());
  batch->pipelined_answers.resize(requests.size());
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
        reusable = co_await pipeline_exchange(*connection->tls, *connection, wire, deadline, reused, *batch);
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

}  // namespace bootstorm::http
