// Client and server over real loopback sockets: keep-alive, the pool cap, deadlines, retries, limits, stop.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <set>
#include <stdexcept>
#include <thread>

#include "support.hpp"

namespace bootstorm::http::test {
namespace {

using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

ClientOptions client_options(const Server& server) {
  ClientOptions options;
  options.base_url = server.base_url();
  options.retry.initial_backoff = 10ms;
  options.retry.max_backoff = 50ms;
  return options;
}

TEST(HttpClientServer, KeepAliveReusesOneConnection) {
  net::io_context io;
  std::set<std::uint64_t> connection_ids;
  Server server(io.get_executor(), ServerOptions{},
                [&](ServerRequest& request) -> net::awaitable<ServerResponse> {
                  connection_ids.insert(request.connection_id);
                  co_return text(200, "hello " + request.path);
                });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  run(io, [&]() -> net::awaitable<void> {
    for (int i = 0; i < 20; ++i) {
      auto response = co_await client.request(Request("GET", "/n/" + std::to_string(i)));
      if (!response) {
        ADD_FAILURE() << response.error().what();
        co_return;
      }
      EXPECT_EQ(response->status, 200);
      EXPECT_EQ(response->body, "hello /n/" + std::to_string(i));
      EXPECT_EQ(response->reused_connection, i > 0);
      EXPECT_EQ(response->attempts, 1);
    }
  });
  EXPECT_EQ(connection_ids.size(), 1u);
  EXPECT_EQ(server.stats().connections_accepted, 1u);
  EXPECT_EQ(server.stats().requests, 20u);
  EXPECT_EQ(client.stats().connections_opened, 1u);
  EXPECT_EQ(client.stats().requests, 20u);
}

TEST(HttpClientServer, ServerSeesRequestDetails) {
  net::io_context io;
  std::optional<ServerRequest> seen;
  Server server(io.get_executor(), ServerOptions{},
                [&](ServerRequest& request) -> net::awaitable<ServerResponse> {
                  seen = request;
                  ServerResponse response = text(201, "created");
                  response.headers.emplace_back("X-Answer", "42");
                  co_return response;
                });
  ASSERT_TRUE(server.start());
  ClientOptions options = client_options(server);
  options.user_agent = "bootstorm-test/1";
  options.default_headers.emplace_back("Authorization", "Bearer s3cr3t-token");
  Client client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    Request request("POST", "/api/a%20b/c+d?names=x%2Cy&flag", R"({"k":1})");
    request.headers.emplace_back("Content-Type", "application/json");
    auto response = co_await client.request(request);
    if (!response) {
      ADD_FAILURE() << response.error().what();
      co_return;
    }
    EXPECT_EQ(response->status, 201);
    EXPECT_EQ(response->body, "created");
    EXPECT_EQ(response->header("x-answer"), "42");
    EXPECT_EQ(response->header("Content-Length"), "7");
  });
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->method, "POST");
  EXPECT_EQ(seen->target, "/api/a%20b/c+d?names=x%2Cy&flag");
  EXPECT_EQ(seen->path, "/api/a b/c+d");
  EXPECT_EQ(seen->query, "names=x%2Cy&flag");
  EXPECT_EQ(seen->query_params("names", true), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(seen->body, R"({"k":1})");
  EXPECT_EQ(seen->header("content-type"), "application/json");
  EXPECT_EQ(seen->header("Authorization"), "Bearer s3cr3t-token");
  EXPECT_EQ(seen->header("User-Agent"), "bootstorm-test/1");
  EXPECT_EQ(seen->header("Host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(seen->remote_address.rfind("127.0.0.1:", 0), 0u) << seen->remote_address;
  EXPECT_TRUE(seen->client_cert_subject.empty());
  EXPECT_GT(seen->connection_id, 0u);
}

TEST(HttpClientServer, PoolCapHoldsUnderThousandConcurrentRequests) {
  net::io_context io;
  std::size_t peak_server_connections = 0;
  Server server(
      io.get_executor(), ServerOptions{}, [&](ServerRequest& request) -> net::awaitable<ServerResponse> {
        peak_server_connections = std::max(peak_server_connections, server.stats().open_connections);
        co_await sleep_for(1ms);
        co_return text(200, request.query);
      });
  ASSERT_TRUE(server.start());
  ClientOptions options = client_options(server);
  options.max_connections = 8;
  Client client(io.get_executor(), options);
  constexpr int kRequests = 1000;
  int finished = 0;
  int succeeded = 0;
  run(io, [&]() -> net::awaitable<void> {
    for (int i = 0; i < kRequests; ++i) {
      net::co_spawn(
          io,
          [&, i]() -> net::awaitable<void> {
            auto response = co_await client.request(Request("GET", "/?i=" + std::to_string(i)));
            if (response && response->status == 200 && response->body == "i=" + std::to_string(i))
              ++succeeded;
            ++finished;
          },
          net::detached);
    }
    while (finished < kRequests) co_await sleep_for(5ms);
  });
  EXPECT_EQ(succeeded, kRequests);
  EXPECT_LE(peak_server_connections, 8u);
  EXPECT_GE(peak_server_connections, 2u);  // the requests did run concurrently
  EXPECT_LE(server.stats().connections_accepted, 8u);
  EXPECT_LE(client.stats().peak_connections, 8u);
  EXPECT_EQ(server.stats().requests, static_cast<std::uint64_t>(kRequests));
}

TEST(HttpClientServer, DeadlineFiresOnSlowServer) {
  net::io_context io;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    co_await sleep_for(3s);
    co_return text(200, "late");
  });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  run(io, [&]() -> net::awaitable<void> {
    auto started = Clock::now();
    auto response = co_await client.request(with_timeout(Request("GET", "/slow"), 200ms));
    auto elapsed = Clock::now() - started;
    CO_ASSERT(!response);
    EXPECT_EQ(response.error().kind, ErrorKind::timeout) << response.error().what();
    EXPECT_NE(response.error().message.find("/slow"), std::string::npos) << response.error().message;
    EXPECT_GE(elapsed, 200ms);
    EXPECT_LT(elapsed, 2s);
    server.stop_now();
  });
}

// Ctrl-C reaches a request through its cancel signal, from another thread: an exchange waiting for its answer
// and a backoff before the next attempt both end at once, and the client stays usable.
TEST(HttpClientServer, ACancelledRequestEndsAtOnceInItsExchangeOrItsBackoff) {
  net::io_context io;
  int calls = 0;
  Server server(io.get_executor(), ServerOptions{},
                [&](ServerRequest& request) -> net::awaitable<ServerResponse> {
                  ++calls;
                  if (request.path == "/hung") co_await sleep_for(3s);
                  if (request.path == "/busy") {
                    ServerResponse busy = text(503, "busy");
                    busy.headers.emplace_back("Retry-After", "3");
                    co_return busy;
                  }
                  co_return text(200, "ok");
                });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  CancelSignal hung_cancel, busy_cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(200ms);
    hung_cancel.cancel();
    std::this_thread::sleep_for(500ms);
    busy_cancel.cancel();
  });
  run(io, [&]() -> net::awaitable<void> {
    for (auto [path, cancel] : {std::pair{"/hung", hung_cancel}, std::pair{"/busy", busy_cancel}}) {
      Request request("GET", path);
      request.timeout = 10s;
      request.cancel = cancel;
      auto started = Clock::now();
      auto response = co_await client.request(std::move(request));
      CO_ASSERT(!response);
      EXPECT_EQ(response.error().kind, ErrorKind::cancelled) << path << ": " << response.error().what();
      EXPECT_LT(Clock::now() - started, 2s) << path << ": its answer (or its retry) would come after 3 s";
    }
    Request fired("GET", "/");
    fired.cancel = hung_cancel;
    auto refused = co_await client.request(std::move(fired));
    CO_ASSERT(!refused);
    EXPECT_EQ(refused.error().kind, ErrorKind::cancelled) << "a signal that has fired sends nothing";
    auto after = co_await client.request(Request("GET", "/"));
    CO_ASSERT(after.has_value());
    EXPECT_EQ(after->status, 200);
    server.stop_now();
  });
  canceller.join();
  EXPECT_EQ(calls, 3) << "/hung, /busy once (cancelled in its backoff) and /";
}

// A loopback port nothing listens on (bound, then released): connections to it are refused.
unsigned short refused_port(net::io_context& io) {
  tcp::acceptor probe(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  return probe.local_endpoint().port();
}

TEST(HttpClientServer, ConnectionRefusedIsAConnectError) {
  net::io_context io;
  const unsigned short port = refused_port(io);
  ClientOptions options;
  options.base_url = "http://127.0.0.1:" + std::to_string(port);
  options.retry.max_attempts = 2;
  options.retry.initial_backoff = 1ms;
  Client client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    auto response = co_await client.request(Request("GET", "/"));
    CO_ASSERT(!response);
    EXPECT_EQ(response.error().kind, ErrorKind::connect) << response.error().what();
    EXPECT_FALSE(response.error().hint.empty());
  });
  EXPECT_EQ(client.stats().retries, 1u);
}

TEST(HttpClientServer, AnEndpointRefusingConnectionsInARowForTheSpanIsReportedGoneOnce) {
  net::io_context io;
  const unsigned short port = refused_port(io);
  ClientOptions options;
  options.base_url = "http://127.0.0.1:" + std::to_string(port);
  options.retry.max_attempts = 1;
  options.unreachable_failures = 3;
  options.unreachable_span = 300ms;
  std::vector<std::string> reports;
  std::vector<std::chrono::steady_clock::time_point> reported_at;
  options.on_unreachable = [&](const std::string& message) {
    reports.push_back(message);
    reported_at.push_back(std::chrono::steady_clock::now());
  };
  Client client(io.get_executor(), options);
  const auto first = std::chrono::steady_clock::now();
  run(io, [&]() -> net::awaitable<void> {
    // Three refusals at once are not yet an outage: the span has not passed.
    for (int i = 0; i < 3; ++i) {
      auto refused = co_await client.request(Request("GET", "/"));
      CO_ASSERT(!refused);
    }
    EXPECT_TRUE(reports.empty());
    net::steady_timer timer(co_await net::this_coro::executor);
    for (int i = 0; i < 8; ++i) {
      timer.expires_after(60ms);
      co_await timer.async_wait(net::use_awaitable);
      auto refused = co_await client.request(Request("GET", "/"));
      CO_ASSERT(!refused);
    }
  });
  ASSERT_EQ(reports.size(), 1u) << "told once per outage";
  EXPECT_GE(reported_at[0] - first, 300ms);
  EXPECT_NE(reports[0].find("the API server at http://127.0.0.1:" + std::to_string(port) + " is gone: "),
            std::string::npos)
      << reports[0];
  EXPECT_NE(reports[0].find("attempts in a row to connect failed over"), std::string::npos) << reports[0];
  EXPECT_NE(reports[0].find("(last: cannot connect to"), std::string::npos) << reports[0];
}

// Once the endpoint is declared gone, a request whose connection cannot be opened fails at its first
// attempt: retrying against a server that is gone would only delay the end of the run.
TEST(HttpClientServer, AGoneEndpointFailsARequestAtItsFirstAttempt) {
  net::io_context io;
  const unsigned short port = refused_port(io);
  ClientOptions options;
  options.base_url = "http://127.0.0.1:" + std::to_string(port);
  options.retry.max_attempts = 4;
  options.retry.initial_backoff = 100ms;
  options.unreachable_failures = 2;
  options.unreachable_span = 1ms;
  int reports = 0;
  options.on_unreachable = [&](const std::string&) { ++reports; };
  Client client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    // Before the outage it retries once (with backoff); its second failure declares the outage, and then
    // the request ends without the two attempts it had left.
    auto first = co_await client.request(Request("GET", "/"));
    CO_ASSERT(!first);
    EXPECT_EQ(client.stats().retries, 1u);
    EXPECT_EQ(reports, 1);
    // During the outage: one attempt, no backoff.
    const std::uint64_t retries = client.stats().retries;
    const auto during = std::chrono::steady_clock::now();
    auto second = co_await client.request(Request("GET", "/"));
    CO_ASSERT(!second);
    EXPECT_LT(std::chrono::steady_clock::now() - during, 90ms);
    EXPECT_EQ(client.stats().retries, retries);
  });
  EXPECT_EQ(reports, 1);
}

TEST(HttpClientServer, RetriesIdempotentRequestOn503HonouringRetryAfter) {
  net::io_context io;
  int calls = 0;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    if (++calls == 1) {
      ServerResponse busy = text(503, "busy");
      busy.headers.emplace_back("Retry-After", "1");
      co_return busy;
    }
    co_return text(200, "ok");
  });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  run(io, [&]() -> net::awaitable<void> {
    auto started = Clock::now();
    auto response = co_await client.request(Request("GET", "/"));
    auto elapsed = Clock::now() - started;
    if (!response) {
      ADD_FAILURE() << response.error().what();
      co_return;
    }
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->attempts, 2);
    // The backoff alone would be ~10 ms: waiting a second proves Retry-After was honoured.
    EXPECT_GE(elapsed, 950ms);
  });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(client.stats().retries, 1u);
}

// 429 means the request was refused before it was handled (API Priority and Fairness): a POST is sent again
// too, and the refusals the client swallowed are handed over with the answer that ended the exchange.
TEST(HttpClientServer, ResendsARefusedPostAndHandsOverTheRefusals) {
  net::io_context io;
  int calls = 0;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    if (++calls <= 2) {
      ServerResponse refused = text(429, "too many requests");
      refused.headers.emplace_back("Retry-After", "0");
      refused.headers.emplace_back("X-Kubernetes-PF-PriorityLevel-UID", "level-" + std::to_string(calls));
      co_return refused;
    }
    co_return text(201, "created");
  });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  run(io, [&]() -> net::awaitable<void> {
    Request create("POST", "/things", "{}");
    auto response = co_await client.request(std::move(create));
    if (!response) {
      ADD_FAILURE() << response.error().what();
      co_return;
    }
    EXPECT_EQ(response->status, 201);
    EXPECT_EQ(response->attempts, 3);
    EXPECT_EQ(response->retried.size(), 2u);
    for (std::size_t i = 0; i < std::min<std::size_t>(2, response->retried.size()); ++i) {
      EXPECT_EQ(response->retried[i].status, 429);
      EXPECT_EQ(
          std::string(
              find_header(response->retried[i].headers, "x-kubernetes-pf-prioritylevel-uid").value_or("")),
          "level-" + std::to_string(i + 1));
    }
  });
  EXPECT_EQ(calls, 3);
}

// A server that keeps answering 429 with Retry-After is throttling, not failing: the request goes out again
// as long as it says to come back (beyond max_attempts), each time no sooner than it said.
TEST(HttpClientServer, AThrottledRequestIsSentAgainBeyondMaxAttemptsAfterEachRetryAfter) {
  net::io_context io;
  int calls = 0;
  std::vector<std::chrono::steady_clock::time_point> arrivals;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    arrivals.push_back(std::chrono::steady_clock::now());
    if (++calls <= 6) {
      ServerResponse refused = text(429, "too many requests");
      refused.headers.emplace_back("Retry-After", "0");
      co_return refused;
    }
    co_return text(202, "started");
  });
  ASSERT_TRUE(server.start());
  ClientOptions options = client_options(server);
  options.retry.max_attempts = 2;
  options.retry.initial_backoff = 20ms;
  Client client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    Request start("PUT", "/start", "{}");
    auto response = co_await client.request(std::move(start));
    if (!response) {
      ADD_FAILURE() << response.error().what();
      co_return;
    }
    EXPECT_EQ(response->status, 202);
    EXPECT_EQ(response->retried.size(), 6u);
  });
  EXPECT_EQ(calls, 7);
  // Retry-After 0: at least the initial backoff between two sends.
  for (std::size_t i = 1; i < arrivals.size(); ++i) EXPECT_GE(arrivals[i] - arrivals[i - 1], 19ms) << i;
}

TEST(HttpClientServer, RetriesUpToMaxAttemptsThenReturnsTheStatus) {
  net::io_context io;
  int calls = 0;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    ++calls;
    co_return text(502, "bad gateway");
  });
  ASSERT_TRUE(server.start());
  ClientOptions options = client_options(server);
  options.retry.max_attempts = 3;
  Client client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    auto response = co_await client.request(Request("DELETE", "/x"));
    if (!response) {
      ADD_FAILURE() << response.error().what();
      co_return;
    }
    EXPECT_EQ(response->status, 502);
    EXPECT_EQ(response->attempts, 3);
  });
  EXPECT_EQ(calls, 3);
}

TEST(HttpClientServer, DoesNotRetryNonIdempotentPostOn503) {
  net::io_context io;
  int calls = 0;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    ++calls;
    co_return text(503, "busy");
  });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  run(io, [&]() -> net::awaitable<void> {
    auto response = co_await client.request(Request("POST", "/api/vm/1/power?action=start"));
    if (!response) {
      ADD_FAILURE() << response.error().what();
      co_return;
    }
    EXPECT_EQ(response->status, 503);
    EXPECT_EQ(response->attempts, 1);
    // Opting in per request makes the same POST retryable.
    calls = 0;
    auto retried = co_await client.request(as_idempotent(Request("POST", "/p")));
    if (!retried) {
      ADD_FAILURE() << retried.error().what();
      co_return;
    }
    EXPECT_EQ(retried->attempts, 4);
    EXPECT_EQ(calls, 4);
  });
  EXPECT_EQ(client.stats().retries, 3u);
}

// A POST answered 503 may have been handled (a proxy in front of a busy server): the policy decides. One
// answered 429 was refused before it was handled: it is sent again whatever the policy.
TEST(HttpClientServer, PolicyCanRetryNonIdempotentOn503AndA429IsAlwaysRetried) {
  for (const bool on_503_policy : {false, true}) {
    net::io_context io;
    int calls = 0;
    Server server(io.get_executor(), ServerOptions{},
                  [&](ServerRequest& request) -> net::awaitable<ServerResponse> {
                    ++calls;
                    co_return text(request.path == "/503" ? 503 : 429, "no");
                  });
    ASSERT_TRUE(server.start());
    ClientOptions options = client_options(server);
    options.retry.retry_non_idempotent_on_503 = on_503_policy;
    options.retry.max_attempts = 2;
    Client client(io.get_executor(), options);
    run(io, [&]() -> net::awaitable<void> {
      auto on_503 = co_await client.request(Request("POST", "/503"));
      auto on_429 = co_await client.request(Request("POST", "/429"));
      if (!on_503 || !on_429) {
        ADD_FAILURE() << "request failed";
        co_return;
      }
      EXPECT_EQ(on_503->attempts, on_503_policy ? 2 : 1);
      EXPECT_EQ(on_429->attempts, 2);
      EXPECT_EQ(on_429->retried.size(), 1u);
    });
    EXPECT_EQ(calls, on_503_policy ? 4 : 3);
  }
}

// A hand-written server that answers the first request of its first connection, then reads the second one
// and closes without answering (as a server does when it times out a keep-alive connection just as the
// request arrives). Later connections answer everything.
TEST(HttpClientServer, ResendsOnDeadPooledConnectionBeforeAnyResponseByte) {
  net::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  int connections = 0;
  int requests_seen = 0;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        while (true) {
          auto [ec, socket] = co_await acceptor.async_accept(net::as_tuple(net::use_awaitable));
          if (ec) co_return;
          int connection = ++connections;
          net::co_spawn(
              io,
              [&, connection, socket = std::move(socket)]() mutable -> net::awaitable<void> {
                std::string data;
                for (int served = 0;; ++served) {
                  auto [read_ec, n] = co_await net::async_read_until(
                      socket, net::dynamic_buffer(data), "\r\n\r\n", net::as_tuple(net::use_awaitable));
                  if (read_ec) co_return;
                  data.erase(0, n);
                  ++requests_seen;
                  if (connection == 1 && served == 1) {
                    socket.close();
                    co_return;
                  }
                  std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                  co_await net::async_write(socket, net::buffer(answer), net::as_tuple(net::use_awaitable));
                }
              },
              net::detached);
        }
      },
      net::detached);
  ClientOptions options;
  options.base_url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
  Client client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    auto first = co_await client.request(Request("POST", "/a"));
    auto second = co_await client.request(Request("POST", "/b"));
    if (!first || !second) {
      ADD_FAILURE() << (first ? second.error().what() : first.error().what());
      co_return;
    }
    EXPECT_EQ(second->status, 200);
    EXPECT_EQ(second->body, "ok");
    EXPECT_EQ(second->attempts, 2);
    EXPECT_FALSE(second->reused_connection);  // the resend went over a fresh connection
    acceptor.close();
  });
  EXPECT_EQ(connections, 2);
  EXPECT_EQ(requests_seen, 3);
  EXPECT_EQ(client.stats().retries, 1u);
}

TEST(HttpClientServer, ServerIdleTimeoutClosesAndClientReconnects) {
  net::io_context io;
  ServerOptions server_options;
  server_options.idle_timeout = 100ms;
  Server server(io.get_executor(), server_options,
                [&](ServerRequest&) -> net::awaitable<ServerResponse> { co_return text(200, "ok"); });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  run(io, [&]() -> net::awaitable<void> {
    auto first = co_await client.request(Request("GET", "/"));
    EXPECT_TRUE(first);
    co_await sleep_for(300ms);
    EXPECT_EQ(server.stats().open_connections, 0u);
    auto second = co_await client.request(Request("POST", "/"));
    if (!second) {
      ADD_FAILURE() << second.error().what();
      co_return;
    }
    EXPECT_EQ(second->status, 200);
    EXPECT_FALSE(second->reused_connection);
  });
  EXPECT_EQ(server.stats().connections_accepted, 2u);
}

TEST(HttpClientServer, PrewarmOpensPooledConnectionsAhead) {
  net::io_context io;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    co_await sleep_for(20ms);
    co_return text(200, "ok");
  });
  ASSERT_TRUE(server.start());
  ClientOptions options = client_options(server);
  options.max_connections = 6;
  Client client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    auto warmed = co_await client.prewarm(4);
    EXPECT_TRUE(warmed);
    EXPECT_EQ(client.stats().connections_opened, 4u);
    EXPECT_EQ(client.stats().open_connections, 4u);
    // A burst wider than the pool: the cap rises to it, and every connection is open before the burst.
    auto raised = co_await client.prewarm(10);
    EXPECT_TRUE(raised);
    EXPECT_EQ(client.stats().connections_opened, 10u);
    EXPECT_EQ(client.stats().open_connections, 10u);
    int finished = 0;
    for (int i = 0; i < 10; ++i) {
      net::co_spawn(
          io,
          [&]() -> net::awaitable<void> {
            auto response = co_await client.request(Request("GET", "/"));
            EXPECT_TRUE(response && response->reused_connection);
            ++finished;
          },
          net::detached);
    }
    while (finished < 10) co_await sleep_for(5ms);
  });
  EXPECT_EQ(server.stats().connections_accepted, 10u);
  EXPECT_EQ(client.stats().connections_opened, 10u);
  EXPECT_EQ(client.stats().requests, 10u);
}

// Connections kept since provisioning would be dropped as too old (or found closed) at the burst and
// reopened inside the fire window: prewarm replaces the ones older than half the idle timeout now.
TEST(HttpClientServer, PrewarmReplacesIdleConnectionsThatWouldBeStaleAtTheBurst) {
  net::io_context io;
  Server server(io.get_executor(), ServerOptions{},
                [&](ServerRequest&) -> net::awaitable<ServerResponse> { co_return text(200, "ok"); });
  ASSERT_TRUE(server.start());
  ClientOptions options = client_options(server);
  options.max_connections = 3;
  options.idle_timeout = 400ms;
  Client client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    CO_ASSERT(co_await client.prewarm(3));
    EXPECT_EQ(client.stats().connections_opened, 3u);
    CO_ASSERT(co_await client.prewarm(3));  // fresh: nothing to do
    EXPECT_EQ(client.stats().connections_opened, 3u);
    co_await sleep_for(250ms);  // older than half the idle timeout
    CO_ASSERT(co_await client.prewarm(3));
    EXPECT_EQ(client.stats().connections_opened, 6u);
    EXPECT_EQ(client.stats().open_connections, 3u);
    const int reused = co_await concurrent_gets_on_reused_connections(client, 3);
    EXPECT_EQ(reused, 3);
  });
  EXPECT_EQ(client.stats().connections_opened, 6u);
}

TEST(HttpClientServer, TimestampsBracketTheServerWork) {
  net::io_context io;
  Clock::time_point handler_started{};
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    handler_started = Clock::now();
    co_await sleep_for(50ms);
    co_return text(200, "ok");
  });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  run(io, [&]() -> net::awaitable<void> {
    auto before = Clock::now();
    auto wall_before = std::chrono::system_clock::now();
    auto response = co_await client.request(Request("POST", "/", "x"));
    if (!response) {
      ADD_FAILURE() << response.error().what();
      co_return;
    }
    EXPECT_GE(response->written_at, before);
    EXPECT_LE(response->written_at, handler_started);
    EXPECT_GE(response->received_at - response->written_at, 50ms);
    EXPECT_GE(response->written_at_wall, wall_before);
    EXPECT_LE(response->written_at_wall - wall_before, 1s);
  });
}

TEST(HttpClientServer, HeadAndEmptyBodies) {
  net::io_context io;
  Server server(io.get_executor(), ServerOptions{},
                [&](ServerRequest& request) -> net::awaitable<ServerResponse> {
                  if (request.path == "/empty") co_return text(204, "");
                  co_return text(200, "twelve bytes");
                });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  run(io, [&]() -> net::awaitable<void> {
    auto head = co_await client.request(Request("HEAD", "/"));
    auto empty = co_await client.request(Request("DELETE", "/empty"));
    auto get = co_await client.request(Request("GET", "/"));
    if (!head || !empty || !get) {
      ADD_FAILURE() << "request failed";
      co_return;
    }
    EXPECT_EQ(head->status, 200);
    EXPECT_EQ(head->header("Content-Length"), "12");
    EXPECT_TRUE(head->body.empty());
    EXPECT_EQ(empty->status, 204);
    EXPECT_EQ(get->body, "twelve bytes");
    EXPECT_TRUE(get->reused_connection);
  });
  EXPECT_EQ(server.stats().connections_accepted, 1u);
}

TEST(HttpServer, RejectsOversizedBodyWith413AndHeadersWith431) {
  net::io_context io;
  ServerOptions server_options;
  server_options.max_body_bytes = 1024;
  server_options.max_header_bytes = 1024;
  int handled = 0;
  Server server(io.get_executor(), server_options, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    ++handled;
    co_return text(200, "ok");
  });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  run(io, [&]() -> net::awaitable<void> {
    auto big_body = co_await client.request(Request("POST", "/", std::string(64 * 1024, 'b')));
    Request big_headers("GET", "/");
    big_headers.headers.emplace_back("X-Padding", std::string(2048, 'h'));
    auto too_many_headers = co_await client.request(big_headers);
    auto fine = co_await client.request(Request("POST", "/", std::string(1024, 'b')));
    if (!big_body || !too_many_headers || !fine) {
      ADD_FAILURE() << "request failed";
      co_return;
    }
    EXPECT_EQ(big_body->status, 413);
    EXPECT_EQ(too_many_headers->status, 431);
    EXPECT_EQ(fine->status, 200);
  });
  EXPECT_EQ(handled, 1);
  EXPECT_EQ(server.stats().connections_accepted, 3u);  // each refusal closed its connection
}

TEST(HttpServer, HandlerExceptionBecomes500) {
  net::io_context io;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    throw std::runtime_error("handler bug");
    co_return text(200, "unreachable");
  });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), client_options(server));
  run(io, [&]() -> net::awaitable<void> {
    auto response = co_await client.request(Request("GET", "/"));
    EXPECT_TRUE(response && response->status == 500);
  });
}

TEST(HttpServer, GracefulStopFinishesInFlightRequestsAndClosesIdleOnes) {
  net::io_context io;
  Server server(io.get_executor(), ServerOptions{},
                [&](ServerRequest& request) -> net::awaitable<ServerResponse> {
                  if (request.path == "/slow") co_await sleep_for(300ms);
                  co_return text(200, "done " + request.path);
                });
  ASSERT_TRUE(server.start());
  ClientOptions options = client_options(server);
  options.retry.max_attempts = 1;
  Client idle_client(io.get_executor(), options);
  Client busy_client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    EXPECT_TRUE(co_await idle_client.request(Request("GET", "/fast")));
    std::optional<Expected<Response>> slow;
    net::co_spawn(
        io, [&]() -> net::awaitable<void> { slow = co_await busy_client.request(Request("GET", "/slow")); },
        net::detached);
    co_await sleep_for(50ms);
    EXPECT_EQ(server.stats().open_connections, 2u);
    auto stop_started = Clock::now();
    co_await server.stop();
    EXPECT_LT(Clock::now() - stop_started, 1500ms);
    EXPECT_EQ(server.stats().open_connections, 0u);
    while (!slow) co_await sleep_for(5ms);
    if (!*slow) {
      ADD_FAILURE() << slow->error().what();
      co_return;
    }
    EXPECT_EQ((*slow)->status, 200);
    EXPECT_EQ((*slow)->body, "done /slow");
    EXPECT_EQ((*slow)->header("Connection"), "close");
    auto after = co_await idle_client.request(Request("GET", "/fast"));
    CO_ASSERT(!after);
    EXPECT_EQ(after.error().kind, ErrorKind::connect) << after.error().what();
  });
}

TEST(HttpServer, StopClosesStuckConnectionsAfterGrace) {
  net::io_context io;
  ServerOptions server_options;
  server_options.stop_grace = 100ms;
  Server server(io.get_executor(), server_options, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    co_await sleep_for(1s);
    co_return text(200, "too late");
  });
  ASSERT_TRUE(server.start());
  ClientOptions options = client_options(server);
  options.retry.max_attempts = 1;
  Client client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    std::optional<Expected<Response>> stuck;
    net::co_spawn(
        io, [&]() -> net::awaitable<void> { stuck = co_await client.request(Request("GET", "/")); },
        net::detached);
    co_await sleep_for(50ms);
    auto stop_started = Clock::now();
    co_await server.stop();
    EXPECT_LT(Clock::now() - stop_started, 600ms);
    while (!stuck) co_await sleep_for(5ms);
    EXPECT_FALSE(*stuck);
  });
}

}  // namespace
}  // namespace bootstorm::http::test
