// RunEngine + the real beacon listener (http::Server on 127.0.0.1:0): the FakeProvider's "guests" are test
// threads that POST /v1/ready with the token the engine handed to the provider, like an in-guest agent.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "orchestrator/beacon/listener.hpp"
#include "orchestrator/engine/journal.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "protocol/http/types.hpp"
#include "tests/unit/orchestrator/engine/fake_provider.hpp"
#include "tests/unit/orchestrator/engine/test_support.hpp"

namespace bootstorm::engine {
namespace {

int post_ready(const std::string& url, const std::string& body) {
  auto parsed = http::parse_url(url);
  if (!parsed) return -1;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(parsed->port);
  ::inet_pton(AF_INET, parsed->host.c_str(), &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  std::string req = "POST " + parsed->target + " HTTP/1.1\r\nHost: " + parsed->host +
                    "\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string resp;
  char buf[2048];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) resp.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return resp.size() > 12 ? std::stoi(resp.substr(9, 3)) : -1;
}

struct Guests {
  std::mutex mutex;
  std::vector<std::thread> threads;
  std::vector<int> statuses;
  ~Guests() { join(); }
  void join() {
    for (auto& t : threads)
      if (t.joinable()) t.join();
  }
};

TEST(EngineWithBeacon, GuestsCallingBackMakeVmsReady) {
  test::ScratchDir dir;
  auto rec = std::make_shared<test::FakeRecord>();
  test::FakeBehaviour b;
  api::ProviderConfig seen;
  Guests guests;
  std::map<std::string, std::string> tokens;  // the listener is gone after the run: keep them for the checks
  const std::string bad_guest = "bs-beac0n-fake-scenario-1-003";
  b.on_start = [&](const std::string& vm) {
    // Runs on the engine's thread: read the URL and the token here, call back from a "guest" thread.
    tokens[vm] = seen.beacon_token(vm);
    std::string token = vm == bad_guest ? std::string(64, '0') : tokens[vm];
    std::string url = seen.beacon_url;
    std::lock_guard lock(guests.mutex);
    guests.threads.emplace_back([&guests, url, vm, token] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      nlohmann::json body = {{"vm", vm}, {"token", token}, {"ip", "192.0.2.7"}};
      int status = post_ready(url, body.dump());
      // A replay by the same guest is answered but changes nothing.
      if (status == 200) post_ready(url, body.dump());
      std::lock_guard lock2(guests.mutex);
      guests.statuses.push_back(status);
    });
  };

  auto plan = test::small_plan(3, 1);
  plan.ready.signal = "beacon";
  plan.ready.beacon.enabled = true;
  plan.ready.beacon.listen = "127.0.0.1:0";
  plan.storm.timeout = std::chrono::milliseconds(1500);

  RunOptions o;
  o.output_dir = dir.path();
  o.plan_yaml = "name: unit-plan\n";
  o.progress = Progress::Mode::none;
  o.handle_signals = false;
  o.observe_tick = std::chrono::milliseconds(10);
  o.run_id = "beac0n";
  EngineHooks hooks;
  auto factory = test::fake_factory(b, rec);
  hooks.make_provider = [&](boost::asio::any_io_executor ex, const api::ProviderConfig& c) {
    seen = c;
    return factory(ex, c);
  };
  hooks.make_beacon = [](boost::asio::any_io_executor ex, const beacon::ListenerOptions& opts) {
    return beacon::start_listener(std::move(ex), opts);
  };
  auto result = RunEngine(plan, o, hooks).run();
  guests.join();

  ASSERT_TRUE(seen.beacon_url.rfind("http://127.0.0.1:", 0) == 0) << seen.beacon_url;
  EXPECT_NE(seen.beacon_url.find("/v1/ready"), std::string::npos);
  std::sort(guests.statuses.begin(), guests.statuses.end());
  EXPECT_EQ(guests.statuses, (std::vector<int>{200, 200, 401}));

  EXPECT_EQ(result.exit_code, 1);  // one guest had a bad token and timed out
  ASSERT_EQ(result.record.vms.size(), 3u);
  for (auto& vm : result.record.vms) {
    if (vm.name == bad_guest) {
      EXPECT_EQ(vm.status, "failed");
      EXPECT_NE(vm.reason.find("timeout waiting for beacon"), std::string::npos) << vm.reason;
      continue;
    }
    EXPECT_EQ(vm.status, "ready") << vm.name;
    ASSERT_TRUE(vm.milestones.count(api::Milestone::beacon));
    const auto& m = vm.milestones.at(api::Milestone::beacon);
    EXPECT_EQ(m.source, "beacon");
    EXPECT_EQ(m.detail, "192.0.2.7");
    EXPECT_GE(m.offset_s, 0.030);
    EXPECT_LT(m.resolution_s, 0.01);
    EXPECT_EQ(*vm.ready_s, m.offset_s);
  }
  // The tokens are secrets: not one of them is in the journal.
  auto journal = test::read_file(result.run_dir / "journal.jsonl");
  ASSERT_EQ(tokens.size(), 3u);
  for (auto& [vm, token] : tokens) {
    EXPECT_EQ(token.size(), 64u);
    EXPECT_EQ(journal.find(token), std::string::npos) << vm;
  }
}

}  // namespace
}  // namespace bootstorm::engine
