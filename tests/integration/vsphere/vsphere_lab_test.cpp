// Integration tests of the vSphere provider against the lab simulator's vCenter front over HTTPS on
// loopback (real sockets, port 0, certificate verification against the lab's CA): session handling, TLS,
// inventory errors, a small storm checked against the simulator's ground truth, the API budget as the
// simulator counts it, and the delete interlock.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "providers/http/client.hpp"
#include "providers/vsphere/vsphere_provider.hpp"
#include "simulator/lab/lab_server.hpp"

namespace asio = boost::asio;
using namespace bootstorm;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

constexpr const char* kRun = "5eed01";

// The small lab, with boots slowed to about a second so that observe() has something to poll.
sim::model::LabSpec slowed_small_lab() {
  auto spec = sim::model::load_lab_spec("small");
  if (!spec) throw std::runtime_error(spec.error().what());
  for (auto& p : spec->profiles) {
    p.power_on_s = 0.15;
    p.ip_delay_s = 0.25;
    if (!p.phases.empty()) p.phases.front().fixed_s = 0.6;
  }
  return *spec;
}

class VsphereLabTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { vsphere::register_provider(); }

  void start_lab(std::optional<sim::model::LabSpec> spec = std::nullopt) {
    sim::LabServerOptions options;
    options.lab = "small";
    options.spec = std::move(spec);
    auto lab = sim::LabServer::start(options);
    ASSERT_TRUE(lab) << lab.error().what();
    lab_ = std::move(*lab);
    config.kind = "vsphere";
    config.endpoint = lab_->endpoints().vcenter_url;
    config.simulated = true;
    config.username = lab_->endpoints().username;
    config.password = lab_->endpoints().password;
    config.ca_data = lab_->endpoints().ca_pem;
    config.golden_vm = "tiny-golden";
    config.clone_type = "full";
    config.run_id = kRun;
    config.requests_per_second = 50;
    config.max_concurrent = 16;
    config.request_timeout = 30s;
  }

  std::unique_ptr<api::Provider> make_provider() {
    auto p = api::create_provider("vsphere", io.get_executor(), config);
    EXPECT_NE(p, nullptr);
    return p;
  }

  template <class T>
  T run(asio::awaitable<T> aw) {
    std::optional<T> out;
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { out.emplace(co_await std::move(aw)); },
        [](std::exception_ptr e) {
          if (e) std::rethrow_exception(e);
        });
    io.restart();
    io.run();
    return std::move(*out);
  }
  void run_void(asio::awaitable<void> aw) {
    asio::co_spawn(io, std::move(aw), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
    io.restart();
    io.run();
  }

  // GET/POST on the lab's unauthenticated /_lab endpoints.
  json lab_call(const std::string& method, const std::string& target, const std::string& body = {}) {
    http::ClientOptions options;
    options.base_url = config.endpoint;
    options.tls.ca_data = lab_->endpoints().ca_pem;
    http::Client client(io.get_executor(), options);
    http::Request req(method, target, body);
    if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
    auto resp = run(client.request(std::move(req)));
    EXPECT_TRUE(resp) << (resp ? "" : resp.error().what());
    if (!resp) return {};
    EXPECT_LT(resp->status, 300) << target << ": " << resp->body;
    return json::parse(resp->body, nullptr, false);
  }

  api::VmSpec spec(int i, const std::string& host) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "bs-%s-lab-%03d", kRun, i);
    return api::VmSpec{buf, "lab", host, i};
  }

  asio::io_context io;
  api::ProviderConfig config;
  std::unique_ptr<sim::LabServer> lab_;
};

TEST_F(VsphereLabTest, LogsInOnceAndLogsOut) {
  start_lab();
  auto p = make_provider();
  auto c = run(p->connect());
  ASSERT_TRUE(c) << c.error().what();
  auto inv = run(p->check_inventory(api::InventoryRequest{{"host-01", "host-02"}, 4}));
  ASSERT_TRUE(inv) << inv.error().what();
  auto stats = lab_call("GET", "/_lab/stats");
  EXPECT_EQ(stats["sessionsCreated"], 1);
  EXPECT_EQ(stats["sessionsActive"], 1);
  run_void(p->disconnect());
  stats = lab_call("GET", "/_lab/stats");
  EXPECT_EQ(stats["sessionsActive"], 0);
  EXPECT_EQ(stats["sessionsCreated"], 1);
}

TEST_F(VsphereLabTest, ExpiredSessionIsRenewedOnce) {
  start_lab();
  auto p = make_provider();
  ASSERT_TRUE(run(p->connect()));
  lab_call("POST", "/_lab/faults", R"({"expireSessions": true})");
  auto inv = run(p->check_inventory(api::InventoryRequest{{"host-01"}, 1}));
  ASSERT_TRUE(inv) << inv.error().what();
  EXPECT_EQ(lab_call("GET", "/_lab/stats")["sessionsCreated"], 2);
  run_void(p->disconnect());
}

TEST_F(VsphereLabTest, WrongPasswordIsRejectedClearly) {
  start_lab();
  config.password = "not-the-password";
  auto p = make_provider();
  auto c = run(p->connect());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, ErrorKind::auth);
  EXPECT_EQ(c.error().message, "vCenter at " + config.endpoint + " rejected the credentials of " +
                                   config.username + ": check VSPHERE_USER/VSPHERE_PASSWORD");
}

TEST_F(VsphereLabTest, CertificateIsVerifiedByDefault) {
  start_lab();
  config.ca_data.clear();  // system trust store: the lab's CA is not in it
  auto p = make_provider();
  auto c = run(p->connect());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, ErrorKind::tls) << c.error().what();
  config.insecure_skip_verify = true;  // explicit opt-out
  auto insecure = make_provider();
  auto c2 = run(insecure->connect());
  EXPECT_TRUE(c2) << c2.error().what();
  run_void(insecure->disconnect());
}

TEST_F(VsphereLabTest, InventoryErrorsNameTheMissingObjectAndListWhatExists) {
  start_lab();
  auto p = make_provider();
  ASSERT_TRUE(run(p->connect()));
  auto r = run(p->check_inventory(api::InventoryRequest{{"host-01", "r740-09"}, 2}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
  EXPECT_EQ(r.error().message, "host r740-09 not found in vCenter " + config.endpoint +
                                   "; hosts: host-01, host-02, host-03, host-04");
  config.golden_vm = "win10-golden";
  auto p2 = make_provider();
  ASSERT_TRUE(run(p2->connect()));
  auto g = run(p2->check_inventory(api::InventoryRequest{{"host-01"}, 1}));
  ASSERT_FALSE(g);
  EXPECT_NE(
      g.error().message.find("golden VM win10-golden not found in vCenter " + config.endpoint + "; VMs: "),
      std::string::npos)
      << g.error().message;
  EXPECT_NE(g.error().message.find("tiny-golden"), std::string::npos);
  run_void(p->disconnect());
  run_void(p2->disconnect());
}

TEST_F(VsphereLabTest, SmallStormMatchesTheSimulatorsTruthWithinTheStatedResolution) {
  start_lab(slowed_small_lab());
  auto p = make_provider();
  ASSERT_TRUE(run(p->connect()));
  const std::vector<std::string> hosts = {"host-01", "host-02"};
  ASSERT_TRUE(run(p->check_inventory(api::InventoryRequest{hosts, 6})));
  std::vector<api::VmHandle> vms;
  for (int i = 1; i <= 6; ++i) {
    auto h = run(p->provision(spec(i, hosts[i % 2])));
    ASSERT_TRUE(h) << h.error().what();
    ASSERT_TRUE(run(p->wait_startable(*h, 30s)));
    vms.push_back(*h);
  }
  ASSERT_TRUE(run(p->prepare_storm(vms.size())));

  std::map<std::string, api::StartResult> started;
  std::map<std::string, std::map<api::Milestone, api::MilestoneEvent>> seen;
  CancelSignal stop;
  asio::steady_timer guard(io, 60s);
  guard.async_wait([&](auto ec) {
    if (!ec) stop.cancel();
  });
  int pending_starts = static_cast<int>(vms.size());
  for (auto& v : vms)
    asio::co_spawn(
        io,
        [&, v]() -> asio::awaitable<void> {
          auto s = co_await p->start(v);
          EXPECT_TRUE(s) << (s ? "" : s.error().what());
          if (s) started[v.name] = *s;
          --pending_starts;
        },
        asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await p->observe(
            vms, [&](api::MilestoneEvent e) { seen[e.vm][e.milestone] = e; }, stop);
        guard.cancel();
      },
      asio::detached);
  io.restart();
  io.run();
  EXPECT_EQ(pending_starts, 0);

  auto truth = lab_call("GET", "/_lab/truth");
  std::map<std::string, json> truth_by_name;
  for (auto& v : truth["vms"]) truth_by_name[v["name"]] = v;
  constexpr double kClockSlack = 0.005;  // wall/steady conversion and the lab's clock reads
  for (auto& v : vms) {
    ASSERT_TRUE(truth_by_name.count(v.name)) << v.name;
    const auto& t = truth_by_name[v.name];
    const auto& s = started.at(v.name);
    const double written = std::chrono::duration<double>(s.written_wall.time_since_epoch()).count();
    const double acked = std::chrono::duration<double>(s.acknowledged_wall.time_since_epoch()).count();
    // The start request was written before the lab received it, and acknowledged once the VM was on.
    // start_requested is the HTTP client's written stamp, taken when the write completes on a busy executor:
    // it may trail the lab's receipt by a few ms (reported, not a provider property), never by much.
    const double received_minus_written_ms = (t["startReceived"].get<double>() - written) * 1e3;
    std::printf("%s: lab received the start %+.3f ms after the client's written stamp\n", v.name.c_str(),
                received_minus_written_ms);
    EXPECT_LT(std::abs(received_minus_written_ms), 50.0) << v.name;
    EXPECT_GE(acked + kClockSlack, t["milestones"]["running"].get<double>()) << v.name;
    ASSERT_EQ(seen[v.name].size(), 3u) << v.name;
    for (auto m : {api::Milestone::running, api::Milestone::guest_agent, api::Milestone::ip_assigned}) {
      const auto& e = seen[v.name].at(m);
      const double observed = std::chrono::duration<double>(e.observed_wall.time_since_epoch()).count();
      const double real = t["milestones"][std::string(api::to_string(m))].get<double>();
      EXPECT_GE(observed + kClockSlack, real) << v.name << " " << api::to_string(m);
      EXPECT_LE(observed - e.resolution_s - kClockSlack, real)
          << v.name << " " << api::to_string(m) << " resolution " << e.resolution_s;
      EXPECT_LT(e.resolution_s, 1.5) << v.name << " " << api::to_string(m);
    }
  }
  std::map<api::Milestone, std::vector<double>> resolutions;
  for (auto& [vm, events] : seen)
    for (auto& [m, e] : events) resolutions[m].push_back(e.resolution_s);
  for (auto& [m, r] : resolutions) {
    double sum = 0, max = 0;
    for (double x : r) sum += x, max = std::max(max, x);
    std::printf("%s: resolution mean %.1f ms, max %.1f ms over %zu VMs\n",
                std::string(api::to_string(m)).c_str(), 1e3 * sum / static_cast<double>(r.size()), 1e3 * max,
                r.size());
  }
  for (auto& v : vms) EXPECT_TRUE(run(p->destroy(v)));
  auto left = run(p->list_run_vms(kRun));
  ASSERT_TRUE(left);
  EXPECT_TRUE(left->empty());
  run_void(p->disconnect());
}

TEST_F(VsphereLabTest, ObserveStaysWithinTheRequestBudgetAsTheSimulatorCountsIt) {
  start_lab(slowed_small_lab());
  config.requests_per_second = 20;
  auto p = make_provider();
  ASSERT_TRUE(run(p->connect()));
  ASSERT_TRUE(run(p->check_inventory(api::InventoryRequest{{"host-01"}, 8})));
  std::vector<api::VmHandle> vms;
  std::vector<std::string> names;
  for (int i = 1; i <= 8; ++i) {
    auto h = run(p->provision(spec(i, "host-01")));
    ASSERT_TRUE(h) << h.error().what();
    vms.push_back(*h);
    names.push_back(h->name);
  }
  // Guests whose Tools never start keep observe() polling for as long as we let it.
  lab_call("POST", "/_lab/faults", json{{"agentNeverStartsVms", names}}.dump());
  for (auto& v : vms) ASSERT_TRUE(run(p->start(v)));

  const double before = lab_call("GET", "/_lab/stats")["requestsTotal"].get<double>();
  const auto t0 = std::chrono::steady_clock::now();
  CancelSignal stop;
  std::uint64_t peak_last_second = 0;
  std::size_t samples = 0;
  std::size_t events = 0;
  asio::co_spawn(io,
                 p->observe(
                     vms, [&](api::MilestoneEvent) { ++events; }, stop),
                 asio::detached);
  // Sample the simulator's per-second counter (its /_lab endpoints are not counted) from the second
  // calendar second of observation on, so that the storm's own starts are not in the window.
  http::ClientOptions options;
  options.base_url = config.endpoint;
  options.tls.ca_data = lab_->endpoints().ca_pem;
  http::Client stats_client(io.get_executor(), options);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(co_await asio::this_coro::executor);
        timer.expires_after(1100ms);
        co_await timer.async_wait(asio::use_awaitable);
        while (std::chrono::steady_clock::now() - t0 < 4s) {
          auto resp = co_await stats_client.request(http::Request("GET", "/_lab/stats"));
          if (resp && resp->status == 200) {
            auto j = json::parse(resp->body);
            peak_last_second =
                std::max<std::uint64_t>(peak_last_second, j["requestsLastSecond"].get<std::uint64_t>());
            ++samples;
          }
          timer.expires_after(250ms);
          co_await timer.async_wait(asio::use_awaitable);
        }
        stop.cancel();
      },
      asio::detached);
  io.restart();
  io.run();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double after = lab_call("GET", "/_lab/stats")["requestsTotal"].get<double>();
  std::printf(
      "observe with budget 20/s: peak %llu requests in one calendar second, %.1f requests/s on average\n",
      static_cast<unsigned long long>(peak_last_second), (after - before) / elapsed);
  EXPECT_GT(samples, 5u);
  EXPECT_EQ(events, 8u);  // every VM reached running, none reached guest_agent
  EXPECT_GT(peak_last_second, 5u) << "observe polled";
  EXPECT_LE(peak_last_second, 20u);
  EXPECT_LE(after - before, 20.0 * elapsed + 1.0);
  for (auto& v : vms) EXPECT_TRUE(run(p->destroy(v)));
  run_void(p->disconnect());
}

TEST_F(VsphereLabTest, RefusesToDeleteAVmThatDoesNotCarryTheRunId) {
  start_lab();
  auto p = make_provider();
  ASSERT_TRUE(run(p->connect()));
  auto r = run(p->destroy(api::VmHandle{"tiny-golden", "", "host-01", ""}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(r.error().message,
            std::string("refusing to delete VM tiny-golden: its name does not carry run id ") + kRun);
  // A VM of another run is refused too, even though it looks like bootstorm's.
  auto other = run(p->destroy(api::VmHandle{"bs-0ther1-lab-001", "", "host-01", ""}));
  ASSERT_FALSE(other);
  auto stats = lab_call("GET", "/_lab/stats");
  for (auto& [route, n] : stats["byRoute"].items())
    EXPECT_EQ(route.find("DELETE /api/vcenter/vm"), std::string::npos) << route;
  // The golden VM is still there.
  auto list = run(p->list_run_vms(kRun));
  ASSERT_TRUE(list);
  EXPECT_TRUE(list->empty());
  run_void(p->disconnect());
}

}  // namespace
