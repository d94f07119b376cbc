// 10,000 bad requests during a storm must not move any VM's measured ready instant by more than 5 ms.
//
// The storm: 100 guests call POST /v1/ready, each on a connection it opened beforehand (a booted guest has
// its network up), from the same loopback address as the attackers (the harsh case: one address, like a lab
// or a NAT). Each guest stamps the instant right before its request goes to the kernel: that is the truth the
// listener's arrival stamp (the milestone's observed_mono) is compared with. The noise: bad tokens, malformed
// bodies, oversized bodies (read and refused, and announced-too-large), unknown paths, and slow clients that
// trickle their headers. Guests fire as the noise progresses (guest k once k/100 of it has been sent), so the
// storm overlaps the noise whatever the speed of the machine.
//
// Attackers run on other machines in reality: here their threads run at the lowest CPU priority so that the
// two CI cores do not turn the attackers' own CPU use into the listener's latency. The listener thread can
// still be preempted by other processes of a loaded machine for a few ms, which no listener design can
// prevent (a storm without any noise shows it: its worst error is printed next to each noisy storm's): the
// test passes when all 100 arrival stamps are within 5 ms of the truth in one of five noisy storms. A
// listener that lets noise delay guests (a busy event loop, a guest's call queued behind slow clients or
// refused by the rate limiter) fails every storm.
// Every guest must be accepted in every storm (a rate limiter that charged valid calls would refuse them).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "orchestrator/beacon/listener.hpp"
#include "tests/support/loopback.hpp"

namespace bootstorm::beacon {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kGuests = 100;
constexpr int kBadRequests = 10000;
constexpr int kNoiseThreads = 3;
constexpr int kSlowClients = 20;
constexpr int kFloodRequests = kBadRequests - kSlowClients;  // each slow client counts as one bad request
constexpr auto kBound = std::chrono::milliseconds(5);
constexpr int kStorms = 5;  // noisy storms tried before the test fails

bool send_all(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    auto n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// A keep-alive HTTP/1.1 connection with a blocking reader: reconnects when the listener closed it.
struct Connection {
  unsigned short port = 0;
  int fd = -1;
  std::string buffer;

  ~Connection() { drop(); }
  void drop() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    buffer.clear();
  }
  bool open() {
    if (fd < 0) fd = test_support::connect_loopback(port);
    return fd >= 0;
  }
  // Reads one response; its status, or nullopt when the connection ended first.
  std::optional<int> read_response() {
    std::size_t header_end;
    while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return std::nullopt;
    const std::string head = buffer.substr(0, header_end);
    std::size_t length = 0;
    for (const char* name : {"Content-Length: ", "content-length: "})
      if (auto at = head.find(name); at != std::string::npos) length = std::stoul(head.substr(at + 15));
    while (buffer.size() < header_end + 4 + length)
      if (!fill()) return std::nullopt;
    const int status = head.size() > 12 ? std::stoi(head.substr(9, 3)) : -1;
    buffer.erase(0, header_end + 4 + length);
    if (head.find("Connection: close") != std::string::npos ||
        head.find("connection: close") != std::string::npos)
      drop();
    return status;
  }
  // Sends and reads the answer; nullopt when the connection failed (it is dropped, the next call reconnects).
  std::optional<int> exchange(const std::string& request) {
    if (!open()) return std::nullopt;
    if (!send_all(fd, request)) {
      drop();
      return std::nullopt;
    }
    auto status = read_response();
    if (!status) drop();
    return status;
  }

 private:
  bool fill() {
    char chunk[4096];
    auto n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
};

std::string post_request(const std::string& body, const std::string& path = "/v1/ready") {
  return "POST " + path +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string vm_name(int i) {
  char name[32];
  std::snprintf(name, sizeof name, "bs-n01se-storm-%03d", i);
  return name;
}

void lowest_cpu_priority() {
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);
}

struct StormResult {
  std::map<std::string, Clock::duration> error;  // arrival stamp - instant the guest sent its call
  std::map<std::string, int> status;
  int bad_sent = 0;
  ListenerStats stats;
  Clock::duration worst() const {
    Clock::duration w{};
    for (const auto& [vm, e] : error) w = std::max(w, e < Clock::duration::zero() ? -e : e);
    return w;
  }
};

class NoisyStorm {
 public:
  StormResult run(bool with_noise) {
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    ListenerOptions options;  // production limits: the defaults
    options.run_id = "n01se";
    Listener listener(io.get_executor(), options);
    auto started = listener.start();
    EXPECT_TRUE(started) << started.error().what();
    std::mutex mutex;
    std::map<std::string, Clock::time_point> arrived;
    listener.set_sink([&](api::MilestoneEvent ev) {
      std::lock_guard lock(mutex);
      arrived[ev.vm] = ev.observed_mono;
    });
    std::map<std::string, std::string> tokens;
    for (int i = 0; i < kGuests; ++i) {
      listener.expect(vm_name(i), "");
      tokens[vm_name(i)] = listener.token_for(vm_name(i));
    }
    std::thread loop([&] { io.run(); });
    const unsigned short port = listener.port();

    std::atomic<int> flood_sent{0}, slow_sent{0};
    std::atomic<bool> noise_over{!with_noise};
    std::vector<std::thread> noise;
    if (with_noise) {
      for (int t = 0; t < kNoiseThreads; ++t) noise.emplace_back([&, t] { flood(port, t, flood_sent); });
      noise.emplace_back([&] { trickle(port, slow_sent, noise_over); });
    }

    // Guests: guest k connects and fires once k/kGuests of the noise has been sent.
    StormResult result;
    std::map<std::string, Clock::time_point> sent_at;
    for (int i = 0; i < kGuests; ++i) {
      const int threshold = with_noise ? (kFloodRequests * i) / kGuests : 0;
      while (flood_sent.load() < threshold) std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (!with_noise) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const std::string name = vm_name(i);
      const std::string request =
          post_request(nlohmann::json{{"vm", name}, {"token", tokens[name]}, {"ip", "192.0.2.9"}}.dump());
      Connection guest;
      guest.port = port;
      EXPECT_TRUE(guest.open()) << name;
      // The truth: the request is complete in the kernel's hands right after this instant (the connection is
      // established; accepting it and reading the request are the listener's work, and part of the error).
      sent_at[name] = Clock::now();
      EXPECT_TRUE(send_all(guest.fd, request)) << name;
      result.status[name] = guest.read_response().value_or(-1);
    }
    noise_over = true;
    for (auto& t : noise) t.join();
    result.bad_sent = flood_sent.load() + slow_sent.load();

    std::promise<void> stopped;
    boost::asio::co_spawn(
        io,
        [&]() -> boost::asio::awaitable<void> {
          result.stats = listener.stats();
          co_await listener.stop();
          stopped.set_value();
        },
        boost::asio::detached);
    stopped.get_future().wait_for(std::chrono::seconds(10));
    work.reset();
    io.stop();
    loop.join();
    std::lock_guard lock(mutex);
    for (const auto& [name, sent] : sent_at)
      if (auto it = arrived.find(name); it != arrived.end()) result.error[name] = it->second - sent;
    return result;
  }

 private:
  // Bad requests over keep-alive connections (reconnecting when the listener closes one), in rotation.
  static void flood(unsigned short port, int thread, std::atomic<int>& flood_sent) {
    lowest_cpu_priority();
    Connection c;
    c.port = port;
    const std::string wrong_token =
        post_request(nlohmann::json{{"vm", vm_name(thread)}, {"token", std::string(64, 'f')}}.dump());
    const std::string unknown_vm =
        post_request(nlohmann::json{{"vm", "bs-n01se-nobody"}, {"token", std::string(64, '0')}}.dump());
    const std::string malformed = post_request("{\"vm\": \"bs-n01se-storm-001\", \"token\": ");
    const std::string not_object = post_request("[\"vm\", 1, 2, 3]");
    const std::string oversized = post_request(
        nlohmann::json{{"vm", vm_name(1)}, {"token", "x"}, {"pad", std::string(9000, 'x')}}.dump());
    const std::string announced_huge =
        "POST /v1/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 104857600\r\n\r\n";
    const std::string wrong_path = post_request("{}", "/v1/../../etc/passwd");
    const std::string* rotation[] = {&wrong_token, &unknown_vm,  &malformed,  &not_object,
                                     &oversized,   &wrong_token, &wrong_path, &announced_huge};
    for (int i = thread;; i += kNoiseThreads) {
      if (flood_sent.fetch_add(1) >= kFloodRequests) {
        flood_sent.fetch_sub(1);
        return;
      }
      (void)c.exchange(*rotation[i % std::size(rotation)]);
    }
  }

  // Slow clients: each trickles its headers a byte at a time until the listener drops it.
  static void trickle(unsigned short port, std::atomic<int>& slow_sent, std::atomic<bool>& over) {
    lowest_cpu_priority();
    const std::string head =
        "POST /v1/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(2000, 's');
    std::vector<int> fds;
    for (int i = 0; i < kSlowClients; ++i) {
      fds.push_back(test_support::connect_loopback(port));
      slow_sent.fetch_add(1);
    }
    for (std::size_t pos = 0; !over.load(); pos = (pos + 1) % head.size()) {
      for (int fd : fds)
        if (fd >= 0) (void)::send(fd, head.data() + pos, 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
};

double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

TEST(BeaconUnderNoise, TenThousandBadRequestsDoNotMoveReadyInstantsByMoreThan5Ms) {
  NoisyStorm storm;
  const StormResult quiet = storm.run(false);
  ASSERT_EQ(quiet.error.size(), static_cast<std::size_t>(kGuests));
  bool within_bound = false;
  for (int attempt = 1; attempt <= kStorms && !within_bound; ++attempt) {
    const StormResult noisy = storm.run(true);
    EXPECT_EQ(noisy.bad_sent, kBadRequests);
    // Every guest was accepted, exactly once, despite the failures charged to its address.
    for (const auto& [vm, status] : noisy.status) EXPECT_EQ(status, 200) << vm;
    ASSERT_EQ(noisy.error.size(), static_cast<std::size_t>(kGuests));
    EXPECT_EQ(noisy.stats.accepted, static_cast<std::uint64_t>(kGuests));
    // The noise was answered as noise.
    EXPECT_GT(noisy.stats.unauthorized + noisy.stats.rate_limited, 1000u);
    EXPECT_GT(noisy.stats.bad_request, 100u);
    std::string worst_vm;
    Clock::duration worst{};
    for (const auto& [vm, e] : noisy.error)
      if (e >= worst) worst = e, worst_vm = vm;
    within_bound = noisy.worst() <= kBound;
    std::printf(
        "storm %d: worst arrival error %.3f ms (%s), without noise %.3f ms; rate limited %llu, "
        "401 %llu, 400/404/405/413 %llu\n",
        attempt, ms(noisy.worst()), worst_vm.c_str(), ms(quiet.worst()),
        static_cast<unsigned long long>(noisy.stats.rate_limited),
        static_cast<unsigned long long>(noisy.stats.unauthorized),
        static_cast<unsigned long long>(noisy.stats.bad_request));
    if (HasFailure()) return;
  }
  EXPECT_TRUE(within_bound) << "in each of " << kStorms
                            << " storms some VM's ready instant moved by more than 5 ms";
}

}  // namespace
}  // namespace bootstorm::beacon
