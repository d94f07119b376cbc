// Beacon listener capacity: valid POST /v1/ready calls (each for a different VM, so each is accepted, stamped
// and pushed to the sink) per second over loopback, with the round-trip latency of each call (request
// written -> response read, measured by the client: an upper bound of the listener's handling latency).
// The listener runs on its own thread like in a run; N client threads each own one keep-alive connection
// and send their calls back to back. Target: >= 20,000 calls/s with P99 <= 5 ms. The listener thread's own
// CPU time per call (listener_cpu_us_per_call, CLOCK_THREAD_CPUTIME_ID) gives its capacity per core
// independently of the load on the machine (the clients share its cores).
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <ctime>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/support/thread_cpu.hpp"
#include "orchestrator/beacon/listener.hpp"
#include "tests/support/beacon_listener_thread.hpp"
#include "tests/support/loopback.hpp"

namespace {

namespace net = boost::asio;
using namespace bootstorm;
using Clock = std::chrono::steady_clock;

constexpr int kCallsPerIteration = 20'000;

struct ListenerThread {
  explicit ListenerThread(int vms) {
    beacon::ListenerOptions options;
    options.run_id = "be4c0n";
    options.secret = "beacon-bench-secret-0123456789abcdef";  // the same tokens in every iteration
    auto started = running.start(options, [this, vms](beacon::Listener& listener) {
      listener.set_sink([this](api::MilestoneEvent) { ++accepted; });
      for (int i = 0; i < vms; ++i) {
        const std::string name = "bs-be4c0n-bench-" + std::to_string(i);
        listener.expect(name, "");
        const std::string body = nlohmann::json{{"vm", name}, {"token", listener.token_for(name)}}.dump();
        requests.push_back(
            "POST /v1/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Content-Length: " +
            std::to_string(body.size()) + "\r\n\r\n" + body);
      }
    });
    if (!started) throw std::runtime_error("beacon listener failed to start: " + started.error().what());
  }
  double cpu_seconds() { return bootstorm::bench::thread_cpu_seconds(running.thread()); }
  unsigned short port() { return running.listener().port(); }

  test_support::BeaconListenerThread running;
  std::vector<std::string> requests;
  std::atomic<int> accepted{0};  // written on the listener thread, read after the clients joined
};

// Sends one request and reads its response (headers + Content-Length body); false on a broken connection.
bool round_trip(int fd, const std::string& request, std::string& buffer) {
  for (std::size_t off = 0; off < request.size();) {
    auto n = ::send(fd, request.data() + off, request.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  char chunk[4096];
  for (;;) {
    const auto end = buffer.find("\r\n\r\n");
    if (end != std::string::npos) {
      std::size_t length = 0;
      if (auto at = buffer.find("Content-Length: "); at != std::string::npos && at < end)
        length = std::stoul(buffer.substr(at + 16));
      if (buffer.size() >= end + 4 + length) {
        const bool ok = buffer.compare(9, 3, "200") == 0;
        buffer.erase(0, end + 4 + length);
        return ok;
      }
    }
    auto n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

void BM_BeaconReadyCalls(benchmark::State& state) {
  const int connections = static_cast<int>(state.range(0));
  double listener_cpu_s = 0;
  std::vector<double> latencies_us;
  latencies_us.reserve(static_cast<std::size_t>(kCallsPerIteration) * 4);
  for (auto _ : state) {
    state.PauseTiming();
    auto listener = std::make_unique<ListenerThread>(kCallsPerIteration);
    std::vector<int> fds;
    for (int c = 0; c < connections; ++c) fds.push_back(test_support::connect_loopback(listener->port()));
    std::vector<std::vector<double>> per_thread(static_cast<std::size_t>(connections));
    std::atomic<bool> failed{false};
    const double cpu_before = listener->cpu_seconds();
    state.ResumeTiming();
    std::vector<std::thread> clients;
    for (int c = 0; c < connections; ++c)
      clients.emplace_back([&, c] {
        std::string buffer;
        auto& lat = per_thread[static_cast<std::size_t>(c)];
        for (int i = c; i < kCallsPerIteration; i += connections) {
          const auto t0 = Clock::now();
          if (!round_trip(fds[static_cast<std::size_t>(c)], listener->requests[static_cast<std::size_t>(i)],
                          buffer)) {
            failed = true;
            return;
          }
          lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
      });
    for (auto& t : clients) t.join();
    state.PauseTiming();
    listener_cpu_s += listener->cpu_seconds() - cpu_before;
    for (int fd : fds) ::close(fd);
    const int accepted = listener->accepted.load();
    listener.reset();
    for (auto& lat : per_thread) latencies_us.insert(latencies_us.end(), lat.begin(), lat.end());
    state.ResumeTiming();
    if (failed || accepted != kCallsPerIteration) {
      state.SkipWithError("a ready call was not accepted");
      break;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kCallsPerIteration);
  if (!latencies_us.empty()) {
    std::sort(latencies_us.begin(), latencies_us.end());
    auto pct = [&](double p) {
      return latencies_us[std::min(latencies_us.size() - 1,
                                   static_cast<std::size_t>(p * static_cast<double>(latencies_us.size())))];
    };
    state.counters["p50_us"] = pct(0.50);
    state.counters["p99_us"] = pct(0.99);
    state.counters["max_us"] = latencies_us.back();
    const double calls = static_cast<double>(latencies_us.size());
    state.counters["listener_cpu_us_per_call"] = listener_cpu_s * 1e6 / calls;
    state.counters["calls_per_core_second"] = listener_cpu_s > 0 ? calls / listener_cpu_s : 0;
  }
}
BENCHMARK(BM_BeaconReadyCalls)->Arg(1)->Arg(4)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
