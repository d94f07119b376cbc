// Requests per second through bootstorm::http over loopback: one server thread (like the beacon listener or
// the simulator), one client thread with N keep-alive connections, small request and response bodies.
#include <benchmark/benchmark.h>
#include <pthread.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <ctime>
#include <thread>

#include "bench/support/thread_cpu.hpp"
#include "protocol/http/client.hpp"
#include "protocol/http/server.hpp"

namespace {

namespace net = boost::asio;
using namespace bootstorm;

constexpr int kRequestsPerIteration = 20'000;

struct ServerThread {
  explicit ServerThread(std::optional<http::TlsServerOptions> tls) {
    http::ServerOptions options;
    options.tls = std::move(tls);
    server = std::make_unique<http::Server>(
        io.get_executor(), options, [](http::ServerRequest& request) -> net::awaitable<http::ServerResponse> {
          http::ServerResponse response;
          response.status = 200;
          response.body = request.body.empty() ? "ok" : "{\"accepted\":true}";
          co_return response;
        });
    if (!server->start()) throw std::runtime_error("bench server failed to start");
    thread = std::thread([this] { io.run(); });
  }
  double cpu_seconds() { return bootstorm::bench::thread_cpu_seconds(thread); }
  ~ServerThread() {
    net::post(io, [this] { server->stop_now(); });
    work.reset();
    io.stop();
    thread.join();
  }
  net::io_context io;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work{io.get_executor()};
  std::unique_ptr<http::Server> server;
  std::thread thread;
};

void run_requests(benchmark::State& state, bool tls) {
  const auto connections = static_cast<std::size_t>(state.range(0));
  std::optional<http::GeneratedPki> pki;
  std::optional<http::TlsServerOptions> tls_options;
  if (tls) {
    pki = http::generate_pki("bench", {"127.0.0.1"});
    tls_options = http::TlsServerOptions{.cert_data = pki->leaf_cert_pem, .key_data = pki->leaf_key_pem};
  }
  ServerThread server(tls_options);
  net::io_context io;
  http::ClientOptions options;
  options.base_url = server.server->base_url();
  options.max_connections = connections;
  if (pki) options.tls.ca_data = pki->ca_cert_pem;
  http::Client client(io.get_executor(), options);
  int failures = 0;
  double server_cpu_start = server.cpu_seconds();
  for (auto _ : state) {
    int issued = 0;
    for (std::size_t worker = 0; worker < connections; ++worker) {
      net::co_spawn(
          io,
          [&]() -> net::awaitable<void> {
            while (issued < kRequestsPerIteration) {
              ++issued;
              http::Request request("POST", "/beacon/vm-0001?token=abcdef", R"({"milestone":"ready"})");
              auto response = co_await client.request(std::move(request));
              if (!response || response->status != 200) ++failures;
            }
          },
          net::detached);
    }
    io.restart();
    io.run();
  }
  state.counters["requests_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kRequestsPerIteration, benchmark::Counter::kIsRate);
  double total_requests = static_cast<double>(state.iterations()) * kRequestsPerIteration;
  double server_cpu = server.cpu_seconds() - server_cpu_start;
  state.counters["server_cpu_us_per_request"] = server_cpu * 1e6 / total_requests;
  state.counters["server_capacity_per_core"] = server_cpu > 0 ? total_requests / server_cpu : 0;
  state.counters["connections_opened"] = static_cast<double>(client.stats().connections_opened);
  state.counters["failures"] = failures;
}

void BM_PlainKeepAlive(benchmark::State& state) {
  run_requests(state, false);
}
void BM_TlsKeepAlive(benchmark::State& state) {
  run_requests(state, true);
}

BENCHMARK(BM_PlainKeepAlive)->Arg(1)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TlsKeepAlive)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
