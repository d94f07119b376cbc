// The beacon listener over real loopback sockets (port 0): a blocking HTTP/1.1 client on a test thread talks
// to the listener running on its own io_context thread.
#include "orchestrator/beacon/listener.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "common/log.hpp"
#include "tests/support/beacon_listener_thread.hpp"
#include "tests/support/loopback.hpp"

namespace bootstorm::beacon {
namespace {

using nlohmann::json;

struct Reply {
  int status = 0;
  std::string body;
  json j() const { return json::parse(body, nullptr, false); }
};

// One request on its own connection ("Connection: close"), read to EOF.
Reply http_call(unsigned short port, const std::string& method, const std::string& path,
                const std::string& body) {
  const int fd = test_support::connect_loopback(port);
  if (fd < 0) return {};
  std::string req = method + " " + path +
                    " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    "Content-Type: application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  std::size_t off = 0;
  while (off < req.size()) {
    auto n = ::send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  std::string resp;
  char buf[4096];
  for (;;) {
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    resp.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  Reply r;
  if (resp.size() > 12 && resp.rfind("HTTP/1.1 ", 0) == 0) r.status = std::stoi(resp.substr(9, 3));
  auto split = resp.find("\r\n\r\n");
  if (split != std::string::npos) r.body = resp.substr(split + 4);
  return r;
}

class BeaconTest : public ::testing::Test {
 protected:
  void start(ListenerOptions o = {}) {
    o.run_id = o.run_id.empty() ? "3f9a2c" : o.run_id;
    auto started = beacon_.start(o, [](Listener& listener) {
      listener.expect("bs-3f9a2c-s-001", "vm-101");
      listener.expect("bs-3f9a2c-s-002", "vm-102");
    });
    ASSERT_TRUE(started) << started.error().what();
    listener_ = &beacon_.listener();
  }
  std::vector<api::MilestoneEvent> events() { return beacon_.events(); }
  // Runs `f` on the listener's thread (the listener is single-threaded like the engine that owns it).
  template <class F>
  void on_listener_thread(F f) {
    beacon_.on_listener<void>(f);
  }
  Reply post(const json& body) { return http_call(listener_->port(), "POST", "/v1/ready", body.dump()); }
  std::string token(const std::string& vm) { return hmac_sha256_hex(secret_, "3f9a2c:" + vm); }

  test_support::BeaconListenerThread beacon_;
  Listener* listener_ = nullptr;
  std::string secret_ = "per-run-secret-for-tests-0123456789";
};

TEST(BeaconCrypto, HmacSha256MatchesRfc4231) {
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(BeaconCrypto, ConstantTimeEqual) {
  EXPECT_TRUE(constant_time_equal("abcdef", "abcdef"));
  EXPECT_FALSE(constant_time_equal("abcdef", "abcdeg"));
  EXPECT_FALSE(constant_time_equal("abcdef", "abcde"));
  EXPECT_TRUE(constant_time_equal("", ""));
}

TEST(BeaconCrypto, SplitHostPort) {
  std::string h;
  unsigned short p = 1;
  EXPECT_TRUE(split_host_port("127.0.0.1:0", h, p));
  EXPECT_EQ(h, "127.0.0.1");
  EXPECT_EQ(p, 0);
  EXPECT_TRUE(split_host_port("[::1]:8080", h, p));
  EXPECT_EQ(h, "::1");
  EXPECT_EQ(p, 8080);
  EXPECT_FALSE(split_host_port("127.0.0.1", h, p));
  EXPECT_FALSE(split_host_port("::1:80", h, p));
  EXPECT_FALSE(split_host_port("host:99999", h, p));
  EXPECT_FALSE(split_host_port("host:8a", h, p));
}

TEST_F(BeaconTest, TokensAreHmacOfRunIdAndNameAndRegisteredAsSecrets) {
  ListenerOptions o;
  o.secret = secret_;
  start(o);
  auto t = listener_->token_for("bs-3f9a2c-s-001");
  EXPECT_EQ(t, token("bs-3f9a2c-s-001"));
  EXPECT_EQ(t.size(), 64u);
  EXPECT_NE(t, listener_->token_for("bs-3f9a2c-s-002"));
  EXPECT_EQ(log::redact("token=" + t), "token=***");
  EXPECT_EQ(listener_->url(), "http://127.0.0.1:" + std::to_string(listener_->port()) + "/v1/ready");
}

TEST_F(BeaconTest, RandomSecretsDifferPerListener) {
  start();
  boost::asio::io_context other;
  Listener second(other.get_executor(), ListenerOptions{.run_id = "3f9a2c"});
  EXPECT_NE(listener_->token_for("bs-3f9a2c-s-001"), second.token_for("bs-3f9a2c-s-001"));
}

TEST_F(BeaconTest, FirstValidCallWinsAndIsStampedOnArrival) {
  ListenerOptions o;
  o.secret = secret_;
  start(o);
  const auto before = std::chrono::steady_clock::now();
  auto r = post({{"vm", "bs-3f9a2c-s-001"}, {"token", token("bs-3f9a2c-s-001")}, {"ip", "10.1.2.3"}});
  const auto after = std::chrono::steady_clock::now();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.j().value("status", ""), "accepted");
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].vm, "bs-3f9a2c-s-001");
  EXPECT_EQ(ev[0].milestone, api::Milestone::beacon);
  EXPECT_EQ(ev[0].source, api::Source::beacon);
  EXPECT_EQ(ev[0].detail, "10.1.2.3");
  EXPECT_LT(ev[0].resolution_s, 0.01);
  EXPECT_GE(ev[0].observed_mono, before);
  EXPECT_LE(ev[0].observed_mono, after);

  // Replay: 200 "duplicate", nothing new.
  auto again = post({{"vm", "bs-3f9a2c-s-001"}, {"token", token("bs-3f9a2c-s-001")}});
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.j().value("status", ""), "duplicate");
  EXPECT_EQ(events().size(), 1u);
  EXPECT_EQ(listener_->stats().duplicates, 1u);
}

TEST_F(BeaconTest, PlatformIdIsAcceptedAndMappedToTheName) {
  ListenerOptions o;
  o.secret = secret_;
  start(o);
  auto r = post({{"vm", "vm-102"}, {"token", token("bs-3f9a2c-s-002")}});
  EXPECT_EQ(r.status, 200);
  auto ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].vm, "bs-3f9a2c-s-002");
}

TEST_F(BeaconTest, BadTokensAre401) {
  ListenerOptions o;
  o.secret = secret_;
  start(o);
  auto wrong = post({{"vm", "bs-3f9a2c-s-001"}, {"token", std::string(64, 'a')}});
  EXPECT_EQ(wrong.status, 401);
  EXPECT_FALSE(wrong.j().value("error", "").empty());
  // Another VM's valid token does not work for this one.
  auto swapped = post({{"vm", "bs-3f9a2c-s-001"}, {"token", token("bs-3f9a2c-s-002")}});
  EXPECT_EQ(swapped.status, 401);
  auto empty = post({{"vm", "bs-3f9a2c-s-001"}, {"token", ""}});
  EXPECT_EQ(empty.status, 401);
  EXPECT_TRUE(events().empty());
  EXPECT_EQ(listener_->stats().unauthorized, 3u);
}

TEST_F(BeaconTest, MalformedRequestsAre400UnknownVms404) {
  start();
  auto port = listener_->port();
  EXPECT_EQ(http_call(port, "POST", "/v1/ready", "{not json").status, 400);
  EXPECT_EQ(http_call(port, "POST", "/v1/ready", "[1,2]").status, 400);
  EXPECT_EQ(post({{"token", "x"}}).status, 400);
  EXPECT_EQ(post({{"vm", 5}, {"token", "x"}}).status, 400);
  EXPECT_EQ(post({{"vm", "bs-3f9a2c-s-001"}}).status, 400);
  EXPECT_EQ(post({{"vm", "bs-3f9a2c-s-001"}, {"token", "x"}, {"ip", 7}}).status, 400);
  auto unknown = post({{"vm", "bs-3f9a2c-s-999"}, {"token", "x"}});
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(unknown.j().value("error", "").find("unknown vm"), std::string::npos);
  EXPECT_EQ(http_call(port, "POST", "/v2/other", "{}").status, 404);
  EXPECT_EQ(http_call(port, "GET", "/v1/ready", "").status, 405);
  EXPECT_TRUE(events().empty());
}

TEST_F(BeaconTest, BodiesAreBoundedTo4KiB) {
  ListenerOptions o;
  o.secret = secret_;
  start(o);
  json big = {
      {"vm", "bs-3f9a2c-s-001"}, {"token", token("bs-3f9a2c-s-001")}, {"pad", std::string(5000, 'x')}};
  auto r = post(big);
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.j().value("error", "").find("4096"), std::string::npos);
  // Just under the limit is fine.
  json fits = {
      {"vm", "bs-3f9a2c-s-001"}, {"token", token("bs-3f9a2c-s-001")}, {"pad", std::string(3900, 'x')}};
  EXPECT_LE(fits.dump().size(), 4096u);
  EXPECT_TRUE(events().empty());
  EXPECT_EQ(post(fits).status, 200);
  EXPECT_EQ(events().size(), 1u);
}

TEST_F(BeaconTest, RateLimitedPerAddress) {
  ListenerOptions o;
  o.rate_per_second = 0.5;
  o.burst = 3;
  start(o);
  std::vector<int> statuses;
  for (int i = 0; i < 5; ++i) statuses.push_back(post({{"vm", "bs-3f9a2c-s-999"}, {"token", "x"}}).status);
  EXPECT_EQ(statuses[0], 404);
  EXPECT_EQ(statuses[2], 404);
  EXPECT_EQ(statuses[3], 429);
  EXPECT_EQ(statuses[4], 429);
  EXPECT_GE(listener_->stats().rate_limited, 2u);
}

TEST_F(BeaconTest, CallsAfterTheObservationWindowAre410AndIgnored) {
  ListenerOptions o;
  o.secret = secret_;
  start(o);
  EXPECT_EQ(post({{"vm", "bs-3f9a2c-s-001"}, {"token", token("bs-3f9a2c-s-001")}}).status, 200);
  on_listener_thread([&] {
    listener_->close_window();
    listener_->expect("bs-3f9a2c-s2-001", "");  // the next scenario's VM, expected after the window closed
  });
  auto late = post({{"vm", "bs-3f9a2c-s-002"}, {"token", token("bs-3f9a2c-s-002")}});
  EXPECT_EQ(late.status, 410);
  EXPECT_NE(late.j().value("error", "").find("too late"), std::string::npos);
  // A replay of a call that was accepted in time is late now as well.
  EXPECT_EQ(post({{"vm", "bs-3f9a2c-s-001"}, {"token", token("bs-3f9a2c-s-001")}}).status, 410);
  // A bad token stays a bad token: the window does not tell an attacker which names exist.
  EXPECT_EQ(post({{"vm", "bs-3f9a2c-s-002"}, {"token", std::string(64, 'b')}}).status, 401);
  EXPECT_EQ(post({{"vm", "bs-3f9a2c-s2-001"}, {"token", token("bs-3f9a2c-s2-001")}}).status, 200);
  auto ev = events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].vm, "bs-3f9a2c-s-001");
  EXPECT_EQ(ev[1].vm, "bs-3f9a2c-s2-001");
  EXPECT_EQ(listener_->stats().late, 2u);
  EXPECT_EQ(listener_->stats().accepted, 2u);
}

TEST_F(BeaconTest, FailuresDoNotCostAGuestItsValidCall) {
  // Guests and a misbehaving client behind the same address (a lab, a NAT): only failures are charged.
  ListenerOptions o;
  o.secret = secret_;
  o.rate_per_second = 0.1;
  o.burst = 2;
  start(o);
  for (int i = 0; i < 4; ++i) post({{"vm", "bs-3f9a2c-s-001"}, {"token", std::string(64, 'c')}});
  EXPECT_EQ(post({{"vm", "bs-3f9a2c-s-001"}, {"token", "nope"}}).status, 429);
  EXPECT_EQ(post({{"vm", "bs-3f9a2c-s-001"}, {"token", token("bs-3f9a2c-s-001")}}).status, 200);
  EXPECT_EQ(post({{"vm", "vm-102"}, {"token", token("bs-3f9a2c-s-002")}}).status, 200);
  EXPECT_EQ(events().size(), 2u);
  EXPECT_EQ(listener_->stats().unauthorized, 5u);
  EXPECT_EQ(listener_->stats().rate_limited, 3u);
}

// True when the peer has closed the connection (recv returns 0 or an error without blocking).
bool peer_closed(int fd) {
  char c;
  auto n = ::recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

TEST_F(BeaconTest, SlowClientTricklingItsHeadersIsDisconnected) {
  ListenerOptions o;
  o.secret = secret_;
  o.request_timeout = std::chrono::milliseconds(800);
  start(o);
  int fd = test_support::connect_loopback(listener_->port());
  ASSERT_GE(fd, 0);
  const std::string request =
      "POST /v1/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + std::string(400, 'p') + "\r\n\r\n";
  const auto begin = std::chrono::steady_clock::now();
  std::size_t sent = 0;
  bool dropped = false;
  while (sent < request.size()) {
    if (peer_closed(fd) || ::send(fd, request.data() + sent, 1, MSG_NOSIGNAL) != 1) {
      dropped = true;
      break;
    }
    ++sent;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));  // 40 bytes/s: the whole request needs 11 s
  }
  const auto elapsed = std::chrono::steady_clock::now() - begin;
  ::close(fd);
  EXPECT_TRUE(dropped) << "the listener kept a client that trickled " << sent << " bytes";
  EXPECT_GE(elapsed, std::chrono::milliseconds(750));
  EXPECT_LT(elapsed, std::chrono::seconds(4));
  // The listener still serves well-behaved guests.
  EXPECT_EQ(post({{"vm", "bs-3f9a2c-s-001"}, {"token", token("bs-3f9a2c-s-001")}}).status, 200);
}

TEST_F(BeaconTest, SlowClientTricklingItsBodyIsDisconnected) {
  ListenerOptions o;
  o.request_timeout = std::chrono::milliseconds(600);
  start(o);
  int fd = test_support::connect_loopback(listener_->port());
  ASSERT_GE(fd, 0);
  const std::string head = "POST /v1/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3000\r\n\r\n{";
  ASSERT_EQ(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  const auto begin = std::chrono::steady_clock::now();
  bool dropped = false;
  for (int i = 0; i < 200 && !dropped; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    dropped = peer_closed(fd) || ::send(fd, " ", 1, MSG_NOSIGNAL) != 1;
  }
  const auto elapsed = std::chrono::steady_clock::now() - begin;
  ::close(fd);
  EXPECT_TRUE(dropped);
  EXPECT_LT(elapsed, std::chrono::seconds(3));
  EXPECT_TRUE(events().empty());
}

TEST_F(BeaconTest, IdleConnectionsAreClosed) {
  ListenerOptions o;
  o.idle_timeout = std::chrono::milliseconds(300);
  start(o);
  int fd = test_support::connect_loopback(listener_->port());
  ASSERT_GE(fd, 0);
  const auto begin = std::chrono::steady_clock::now();
  char c;
  auto n = ::recv(fd, &c, 1, 0);  // blocks until the listener closes the connection
  const auto elapsed = std::chrono::steady_clock::now() - begin;
  ::close(fd);
  EXPECT_EQ(n, 0);
  EXPECT_GE(elapsed, std::chrono::milliseconds(250));
  EXPECT_LT(elapsed, std::chrono::seconds(3));
}

TEST_F(BeaconTest, DeclaredOversizedBodiesAreRefusedBeforeTheyAreRead) {
  start();
  int fd = test_support::connect_loopback(listener_->port());
  ASSERT_GE(fd, 0);
  // 64 MiB announced, nothing sent: the answer must come from the headers alone.
  const std::string head = "POST /v1/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 67108864\r\n\r\n";
  ASSERT_EQ(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  std::string resp;
  char buf[1024];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) resp.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  EXPECT_EQ(resp.rfind("HTTP/1.1 413", 0), 0u) << resp;
}

}  // namespace
}  // namespace bootstorm::beacon
