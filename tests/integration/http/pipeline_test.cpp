// HTTP/1.1 pipelining (http::Client::pipeline) over real loopback sockets: one write for the whole batch,
// responses matched in order, and what the server did not answer sent again on its own.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "support.hpp"

namespace bootstorm::http::test {
namespace {

using tcp = net::ip::tcp;

ClientOptions options_for(std::string base_url) {
  ClientOptions options;
  options.base_url = std::move(base_url);
  options.retry.initial_backoff = 5ms;
  options.retry.max_backoff = 20ms;
  return options;
}

std::vector<Request> numbered(int n, const char* method = "PUT") {
  std::vector<Request> requests;
  for (int i = 0; i < n; ++i)
    requests.emplace_back(method, "/r/" + std::to_string(i), "{\"n\":" + std::to_string(i) + "}");
  return requests;
}

std::size_t count_of(std::string_view text, std::string_view what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size()))
    ++count;
  return count;
}

// A raw server that answers nothing until it has received all `n` requests on its one connection: a client
// that waited for a response before sending the next request would wait here until its deadline.
net::awaitable<void> answer_after_all(tcp::acceptor& acceptor, int n, std::string& received) {
  auto [accept_ec, socket] = co_await acceptor.async_accept(net::as_tuple(net::use_awaitable));
  if (accept_ec) co_return;
  std::string data;
  char buffer[4096];
  // Each request is PUT with a JSON body that ends in '}'; a request is complete once its body is in.
  while (count_of(data, "}") < static_cast<std::size_t>(n)) {
    auto [ec, got] = co_await socket.async_read_some(net::buffer(buffer), net::as_tuple(net::use_awaitable));
    if (ec) co_return;
    data.append(buffer, got);
  }
  received = data;
  std::string responses;
  for (int i = 0; i < n; ++i) {
    const std::string body = "answer " + std::to_string(i);
    responses += "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }
  co_await net::async_write(socket, net::buffer(responses), net::as_tuple(net::use_awaitable));
}

TEST(HttpPipeline, WritesTheWholeBatchBeforeAnyResponseAndMatchesResponsesInOrder) {
  net::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  Client client(io.get_executor(),
                options_for("http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port())));
  constexpr int kRequests = 25;
  std::string received;
  net::co_spawn(io, answer_after_all(acceptor, kRequests, received), net::detached);
  run(io, [&]() -> net::awaitable<void> {
    std::vector<Request> requests = numbered(kRequests);
    for (auto& request : requests) request.timeout = 3s;
    auto results = co_await client.pipeline(std::move(requests));
    CO_ASSERT(results.size() == kRequests);
    for (int i = 0; i < kRequests; ++i) {
      if (!results[i]) {
        ADD_FAILURE() << i << ": " << results[i].error().what();
        continue;
      }
      EXPECT_EQ(results[i]->status, 200);
      EXPECT_EQ(results[i]->body, "answer " + std::to_string(i));
      EXPECT_EQ(results[i]->attempts, 1);
      EXPECT_EQ(results[i]->written_at, results[0]->written_at) << "one write for the batch";
      EXPECT_GE(results[i]->received_at, results[i]->written_at);
    }
  });
  // The requests arrived in order, each complete with its headers and body.
  std::size_t at = 0;
  for (int i = 0; i < kRequests; ++i) {
    auto line = received.find("PUT /r/" + std::to_string(i) + " HTTP/1.1\r\n", at);
    ASSERT_NE(line, std::string::npos) << "request " << i << " missing or out of order";
    auto body = received.find("{\"n\":" + std::to_string(i) + "}", line);
    ASSERT_NE(body, std::string::npos);
    at = body;
  }
  EXPECT_EQ(client.stats().connections_opened, 1u);
  EXPECT_EQ(client.stats().requests, static_cast<std::uint64_t>(kRequests));
}

TEST(HttpPipeline, RequestsTheServerClosedBeforeAnsweringAreSentAgainOnTheirOwn) {
  net::io_context io;
  std::map<std::string, int> seen;  // path -> times handled
  std::set<std::uint64_t> connections;
  int handled = 0;
  Server server(io.get_executor(), ServerOptions{},
                [&](ServerRequest& request) -> net::awaitable<ServerResponse> {
                  ++seen[request.path];
                  connections.insert(request.connection_id);
                  ServerResponse response = text(200, "done " + request.path + " " + request.body);
                  // The third request of the storm closes its connection: what was pipelined behind it is
                  // never read.
                  response.close = ++handled == 3;
                  co_return response;
                });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), options_for(server.base_url()));
  constexpr int kRequests = 10;
  run(io, [&]() -> net::awaitable<void> {
    auto results = co_await client.pipeline(numbered(kRequests));
    CO_ASSERT(results.size() == kRequests);
    for (int i = 0; i < kRequests; ++i) {
      if (!results[i]) {
        ADD_FAILURE() << i << ": " << results[i].error().what();
        continue;
      }
      EXPECT_EQ(results[i]->body, "done /r/" + std::to_string(i) + " {\"n\":" + std::to_string(i) + "}");
      EXPECT_EQ(results[i]->attempts, i < 3 ? 1 : 2) << i;
    }
  });
  for (int i = 0; i < kRequests; ++i) EXPECT_EQ(seen["/r/" + std::to_string(i)], 1) << "each handled once";
  EXPECT_GE(connections.size(), 2u);
  EXPECT_EQ(client.stats().retries, static_cast<std::uint64_t>(kRequests - 3));
}

TEST(HttpPipeline, RetryableStatusIsRetriedAloneAndTheRestStand) {
  net::io_context io;
  std::map<std::string, int> seen;
  Server server(io.get_executor(), ServerOptions{},
                [&](ServerRequest& request) -> net::awaitable<ServerResponse> {
                  if (++seen[request.path] == 1 && request.path == "/r/2") co_return text(503, "busy");
                  co_return text(200, "ok " + request.path);
                });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), options_for(server.base_url()));
  run(io, [&]() -> net::awaitable<void> {
    auto results = co_await client.pipeline(numbered(5, "GET"));
    CO_ASSERT(results.size() == 5u);
    for (int i = 0; i < 5; ++i) {
      CO_ASSERT(results[i].has_value());
      EXPECT_EQ(results[i]->status, 200);
      EXPECT_EQ(results[i]->body, "ok /r/" + std::to_string(i));
      EXPECT_EQ(results[i]->attempts, i == 2 ? 2 : 1);
    }
  });
  EXPECT_EQ(seen["/r/2"], 2);
  EXPECT_EQ(seen["/r/4"], 1);
  EXPECT_EQ(server.stats().connections_accepted, client.stats().connections_opened);
}

TEST(HttpPipeline, AnUnreachableServerFailsEveryRequestWithAConnectError) {
  net::io_context io;
  std::uint16_t port = 0;
  {
    tcp::acceptor probe(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    port = probe.local_endpoint().port();
  }  // closed: nothing listens there now
  ClientOptions options = options_for("http://127.0.0.1:" + std::to_string(port));
  options.retry.max_attempts = 2;
  Client client(io.get_executor(), options);
  run(io, [&]() -> net::awaitable<void> {
    auto results = co_await client.pipeline(numbered(4));
    CO_ASSERT(results.size() == 4u);
    for (const auto& result : results) {
      CO_ASSERT(!result.has_value());
      EXPECT_EQ(result.error().kind, ErrorKind::connect) << result.error().what();
    }
  });
}

TEST(HttpPipeline, OnlyIdempotentRequestsMayBePipelined) {
  net::io_context io;
  Client client(io.get_executor(), options_for("http://127.0.0.1:9"));
  run(io, [&]() -> net::awaitable<void> {
    bool thrown = false;
    try {
      (void)co_await client.pipeline(numbered(2, "POST"));
    } catch (const std::invalid_argument& e) {
      thrown = true;
      EXPECT_NE(std::string(e.what()).find("not idempotent"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(thrown);
    // One request, or none, is simply a request.
    auto none = co_await client.pipeline({});
    EXPECT_TRUE(none.empty());
  });
}

}  // namespace
}  // namespace bootstorm::http::test
