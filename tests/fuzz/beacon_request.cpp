// Fuzz target: beacon request handling end to end — the input is the raw bytes a client sends to the beacon
// listener over a loopback connection (request line, headers, body, pipelined requests, garbage), then the
// client half-closes and reads whatever comes back. Covers the HTTP server's parsing and limits and the
// listener's validation (JSON body, tokens, replays, late calls).
//
// Fixed secret and run id, so seeds can carry valid tokens: hex(HMAC-SHA256("fuzz-beacon-secret",
// "f0f0f0:bs-f0f0f0-fuzz-001")) is in corpus/beacon_request/ready-valid.http.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "orchestrator/beacon/listener.hpp"

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace bootstorm;

struct Fixture {
  asio::io_context io;
  beacon::Listener listener{io.get_executor(), [] {
                              beacon::ListenerOptions o;
                              o.run_id = "f0f0f0";
                              o.secret = "fuzz-beacon-secret";
                              o.rate_per_second = 1e9;  // every input reaches the validation
                              o.burst = 1e9;
                              o.request_timeout = std::chrono::seconds(2);
                              return o;
                            }()};
  std::size_t accepted = 0;
  Fixture() {
    if (!listener.start()) std::abort();
    listener.expect("bs-f0f0f0-fuzz-001", "vm-1001");
    listener.expect("bs-f0f0f0-fuzz-002", "");
    listener.set_sink([this](api::MilestoneEvent ev) {
      if (ev.vm != "bs-f0f0f0-fuzz-001" && ev.vm != "bs-f0f0f0-fuzz-002") std::abort();
      ++accepted;
    });
  }
};

asio::awaitable<void> exchange(Fixture& f, std::string request) {
  tcp::socket socket(f.io);
  auto [connect_ec] =
      co_await socket.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), f.listener.port()),
                                    asio::as_tuple(asio::use_awaitable));
  if (connect_ec) {
    std::fprintf(stderr, "cannot connect to the beacon listener: %s\n", connect_ec.message().c_str());
    std::abort();
  }
  auto [write_ec, written] =
      co_await asio::async_write(socket, asio::buffer(request), asio::as_tuple(asio::use_awaitable));
  boost::system::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  std::string response;
  auto [read_ec, read] =
      co_await asio::async_read(socket, asio::dynamic_buffer(response), asio::as_tuple(asio::use_awaitable));
  (void)write_ec;
  (void)written;
  (void)read_ec;
  (void)read;
}

// Outside the extern "C" function: g++ 12 mangles two lambdas of an extern "C" function to the same name.
void exchange_one(const std::uint8_t* data, std::size_t size) {
  static Fixture* fixture = new Fixture();  // one listener for the process, like one run's
  // Each VM is accepted at most once over the whole process (replays are duplicates).
  if (fixture->accepted > 2) std::abort();
  bool done = false;
  // An exception escaping the exchange is a bug: rethrown, it ends the process as a crash.
  asio::co_spawn(fixture->io, exchange(*fixture, std::string(reinterpret_cast<const char*>(data), size)),
                 [&done](std::exception_ptr e) {
                   done = true;
                   if (e) std::rethrow_exception(e);
                 });
  // The listener's accept loop never ends: run until this input's exchange has (the listener answers or
  // closes within its request timeout), then let the server finish what is ready.
  fixture->io.restart();
  while (!done) fixture->io.run_one();
  fixture->io.poll();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  exchange_one(data, size);
  return 0;
}
