// Line streaming (Kubernetes watch style) over chunked responses: arbitrary chunk boundaries, no size limit,
// cancellation, dropped connections, non-2xx bodies.
#include <boost/asio/detached.hpp>
#include <thread>

#include "support.hpp"

namespace bootstorm::http::test {
namespace {

using Clock = std::chrono::steady_clock;

const std::string kPayload =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"vm-001\",\"resourceVersion\":\"17\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"status\":{\"printableStatus\":\"Running\"}}}\r\n"
    "\n"
    "{\"type\":\"BOOKMARK\",\"note\":\"caf\xc3\xa9\"}\n"
    "trailing-without-newline";
const std::vector<std::string> kExpectedLines = {
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"vm-001\",\"resourceVersion\":\"17\"}}}",
    "{\"type\":\"MODIFIED\",\"object\":{\"status\":{\"printableStatus\":\"Running\"}}}",
    "",
    "{\"type\":\"BOOKMARK\",\"note\":\"caf\xc3\xa9\"}",
    "trailing-without-newline",
};

struct Collected {
  int status = 0;
  Headers headers;
  std::vector<std::string> lines;
};

net::awaitable<Expected<void>> collect(Client& client, std::string target, Collected& out,
                                       CancelSignal cancel = CancelSignal()) {
  co_return co_await client.stream(
      Request("GET", std::move(target)),
      [&](int status, const Headers& headers) {
        out.status = status;
        out.headers = headers;
      },
      [&](std::string_view line) { out.lines.emplace_back(line); }, cancel);
}

// Writes kPayload as two chunks split at ?split=K, or one chunk per byte for ?split=bytes.
Server make_split_server(net::io_context& io) {
  return Server(io.get_executor(), ServerOptions{},
                [](ServerRequest& request) -> net::awaitable<ServerResponse> {
                  ServerResponse response;
                  response.headers.emplace_back("Content-Type", "application/json");
                  std::string split = request.query_param("split").value_or("0");
                  response.stream = [split](StreamWriter& writer) -> net::awaitable<void> {
                    if (split == "bytes") {
                      for (char c : kPayload) {
                        if (!co_await writer.write(std::string(1, c))) co_return;
                      }
                      co_return;
                    }
                    std::size_t at = std::stoul(split);
                    if (!co_await writer.write(kPayload.substr(0, at))) co_return;
                    co_await sleep_for(1ms);  // lets the first part reach the client on its own
                    co_await writer.write(kPayload.substr(at));
                  };
                  co_return response;
                });
}

TEST(HttpStream, SplitAtEveryByteOffsetYieldsTheSameLines) {
  net::io_context io;
  Server server = make_split_server(io);
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), ClientOptions{.base_url = server.base_url()});
  run(
      io,
      [&]() -> net::awaitable<void> {
        for (std::size_t k = 0; k <= kPayload.size(); ++k) {
          Collected got;
          auto result = co_await collect(client, "/watch?split=" + std::to_string(k), got);
          EXPECT_TRUE(result) << "split " << k << ": " << (result ? "" : result.error().what());
          EXPECT_EQ(got.status, 200);
          EXPECT_EQ(find_header(got.headers, "transfer-encoding"), "chunked");
          EXPECT_EQ(got.lines, kExpectedLines) << "split at " << k;
        }
      },
      15s);
}

TEST(HttpStream, OneChunkPerByteYieldsTheSameLines) {
  net::io_context io;
  Server server = make_split_server(io);
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), ClientOptions{.base_url = server.base_url()});
  run(io, [&]() -> net::awaitable<void> {
    Collected got;
    auto result = co_await collect(client, "/watch?split=bytes", got);
    EXPECT_TRUE(result);
    EXPECT_EQ(got.lines, kExpectedLines);
  });
}

TEST(HttpStream, DeliversLinesAsTheyArriveWithoutSizeLimit) {
  net::io_context io;
  constexpr int kLines = 10'000;
  const std::string line(1000, 'x');  // 10 MB in total: beyond Beast's default 8 MB body limit
  bool first_line_seen_before_end = false;
  bool producer_done = false;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    ServerResponse response;
    response.stream = [&](StreamWriter& writer) -> net::awaitable<void> {
      co_await writer.write("first\n");
      co_await sleep_for(100ms);
      std::string batch;
      for (int i = 0; i < kLines; ++i) {
        batch += line;
        batch += '\n';
        if (batch.size() > 256 * 1024) {
          if (!co_await writer.write(std::move(batch))) co_return;
          batch.clear();
        }
      }
      co_await writer.write(std::move(batch));
      producer_done = true;
    };
    co_return response;
  });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), ClientOptions{.base_url = server.base_url()});
  std::size_t lines = 0;
  std::size_t bytes = 0;
  run(io, [&]() -> net::awaitable<void> {
    auto result =
        co_await client.stream(with_timeout(Request("GET", "/big"), 5s), nullptr, [&](std::string_view text) {
          if (lines == 0) first_line_seen_before_end = !producer_done && text == "first";
          ++lines;
          bytes += text.size();
        });
    EXPECT_TRUE(result) << (result ? "" : result.error().what());
  });
  EXPECT_TRUE(first_line_seen_before_end);
  EXPECT_EQ(lines, static_cast<std::size_t>(kLines) + 1);
  EXPECT_EQ(bytes, static_cast<std::size_t>(kLines) * line.size() + 5);
}

// A watch that sends one event, then heartbeats until the client goes away.
Server make_endless_server(net::io_context& io, bool& producer_finished) {
  return Server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    ServerResponse response;
    response.stream = [&](StreamWriter& writer) -> net::awaitable<void> {
      co_await writer.write("{\"type\":\"ADDED\"}\n");
      while (co_await writer.write("{\"type\":\"HEARTBEAT\"}\n")) co_await sleep_for(10ms);
      producer_finished = true;
    };
    co_return response;
  });
}

TEST(HttpStream, CancelFromALineHandlerEndsTheStream) {
  net::io_context io;
  bool producer_finished = false;
  Server server = make_endless_server(io, producer_finished);
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), ClientOptions{.base_url = server.base_url()});
  run(io, [&]() -> net::awaitable<void> {
    CancelSignal cancel;
    std::vector<std::string> lines;
    auto result = co_await client.stream(
        Request("GET", "/watch"), nullptr,
        [&](std::string_view line) {
          lines.emplace_back(line);
          cancel.cancel();
        },
        cancel);
    CO_ASSERT(!result);
    EXPECT_EQ(result.error().kind, ErrorKind::cancelled) << result.error().what();
    CO_ASSERT(!lines.empty());
    EXPECT_EQ(lines.front(), "{\"type\":\"ADDED\"}");
    // The server notices the client went away on its next writes.
    for (int i = 0; i < 200 && !producer_finished; ++i) co_await sleep_for(10ms);
    EXPECT_TRUE(producer_finished);
  });
}

TEST(HttpStream, CancelFromAnotherThread) {
  net::io_context io;
  bool producer_finished = false;
  Server server = make_endless_server(io, producer_finished);
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), ClientOptions{.base_url = server.base_url()});
  CancelSignal cancel;
  std::thread canceller([cancel]() mutable {
    std::this_thread::sleep_for(150ms);
    cancel.cancel();
  });
  int lines = 0;
  run(io, [&]() -> net::awaitable<void> {
    auto started = Clock::now();
    auto result = co_await client.stream(
        Request("GET", "/watch"), nullptr, [&](std::string_view) { ++lines; }, cancel);
    CO_ASSERT(!result);
    EXPECT_EQ(result.error().kind, ErrorKind::cancelled);
    EXPECT_GE(Clock::now() - started, 140ms);
  });
  canceller.join();
  EXPECT_GE(lines, 2);
}

TEST(HttpStream, AlreadyCancelledSignalReturnsAtOnce) {
  net::io_context io;
  bool producer_finished = false;
  Server server = make_endless_server(io, producer_finished);
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), ClientOptions{.base_url = server.base_url()});
  run(io, [&]() -> net::awaitable<void> {
    CancelSignal cancel;
    cancel.cancel();
    Collected got;
    auto result = co_await collect(client, "/watch", got, cancel);
    CO_ASSERT(!result);
    EXPECT_EQ(result.error().kind, ErrorKind::cancelled);
    EXPECT_TRUE(got.lines.empty());
  });
}

TEST(HttpStream, AbortedStreamIsAnIoError) {
  net::io_context io;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    ServerResponse response;
    response.stream = [](StreamWriter& writer) -> net::awaitable<void> {
      co_await writer.write("one\ntw");
      co_await sleep_for(20ms);
      writer.abort();
      EXPECT_FALSE(writer.open());
      EXPECT_FALSE(co_await writer.write("o\n"));
    };
    co_return response;
  });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), ClientOptions{.base_url = server.base_url()});
  run(io, [&]() -> net::awaitable<void> {
    Collected got;
    auto result = co_await collect(client, "/watch", got);
    CO_ASSERT(!result);
    EXPECT_EQ(result.error().kind, ErrorKind::io) << result.error().what();
    EXPECT_EQ(got.lines, std::vector<std::string>{"one"});
  });
}

TEST(HttpStream, ErrorStatusBodyIsDeliveredAsLines) {
  net::io_context io;
  Server server(io.get_executor(), ServerOptions{}, [&](ServerRequest&) -> net::awaitable<ServerResponse> {
    co_return text(410, "{\"kind\":\"Status\",\"code\":410,\n\"reason\":\"Expired\"}");
  });
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), ClientOptions{.base_url = server.base_url()});
  run(io, [&]() -> net::awaitable<void> {
    Collected got;
    auto result = co_await collect(client, "/watch", got);
    EXPECT_TRUE(result);
    EXPECT_EQ(got.status, 410);
    EXPECT_EQ(got.lines,
              (std::vector<std::string>{"{\"kind\":\"Status\",\"code\":410,", "\"reason\":\"Expired\"}"}));
  });
}

TEST(HttpStream, ServerStopEndsStreamsCleanly) {
  net::io_context io;
  bool producer_finished = false;
  Server server = make_endless_server(io, producer_finished);
  ASSERT_TRUE(server.start());
  Client client(io.get_executor(), ClientOptions{.base_url = server.base_url()});
  run(io, [&]() -> net::awaitable<void> {
    std::optional<Expected<void>> result;
    int lines = 0;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
          result =
              co_await client.stream(Request("GET", "/watch"), nullptr, [&](std::string_view) { ++lines; });
        },
        net::detached);
    co_await sleep_for(50ms);
    co_await server.stop();
    while (!result) co_await sleep_for(5ms);
    EXPECT_TRUE(*result);  // terminating chunk sent: a clean end of stream
    EXPECT_TRUE(producer_finished);
    EXPECT_GE(lines, 2);
  });
}

}  // namespace
}  // namespace bootstorm::http::test
