// The vSphere REST provider (platform.api rest) against the lab simulator's vCenter front: session handling,
// TLS, inventory errors, a small storm checked against the simulator's ground truth, the API budget as the
// simulator counts it, and the delete interlock.
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vsphere_provider.hpp"
#include "tests/integration/vsphere/lab_fixture.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::testing::vsphere_lab;
using namespace std::chrono_literals;
using json = nlohmann::json;

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
  settings.vm = "win10-golden";
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
  storm_against_truth(*p, 6);
}

// A vCenter before 7.0U2 (the lab's `legacyRest: true`): no /api at all, so the provider detects the legacy
// /rest dialect on login and runs the whole storm through it — value-wrapped bodies, filter.<name>.<n> list
// filters, path-style power calls — with the same accuracy against the simulator's truth.
TEST_F(VsphereLabTest, LegacyRestVcenterRunsTheWholeStormThroughRest) {
  auto spec = slowed_small_lab();
  spec.vcenter.legacy_rest = true;
  start_lab(spec);
  // The REST provider itself (not through the API choice), to read the dialect it settled on.
  auto p = std::make_unique<vsphere::VsphereProvider>(
      io.get_executor(), provider_config(), vsphere::make_http_transport(io.get_executor(), config));
  auto* provider = p.get();
  ASSERT_TRUE(run(p->connect()));
  EXPECT_EQ(provider->dialect(), vsphere::Dialect::rest);
  storm_against_truth(*p, 6);
  auto stats = lab_call("GET", "/_lab/stats");
  std::size_t rest_calls = 0;
  for (auto& [route, n] : stats["byRoute"].items()) {
    const bool rest = route.find(" /rest/") != std::string::npos;
    // The only /api request is the login probe that found no /api/session.
    if (!rest) {
      EXPECT_EQ(route, "POST /api/session") << route;
    }
    if (rest) rest_calls += n.get<std::size_t>();
  }
  EXPECT_GT(rest_calls, 30u);
  EXPECT_TRUE(stats["byRoute"].contains("GET /rest/vcenter/vm")) << stats["byRoute"].dump();
  EXPECT_TRUE(stats["byRoute"].contains("POST /rest/vcenter/vm/{id}/power/start")) << stats["byRoute"].dump();
}

// ready: beacon on vSphere. The provider hands the beacon URL and each VM's token to the guest through the
// vCenter REST guest customization (cloud-init user data); the simulated guest applies it at power-on and
// calls the run's real beacon listener when it reaches logon. The beacon times must match the lab's truth.
class VsphereBeaconTest : public VsphereLabTest, public ::testing::WithParamInterface<bool> {};

TEST_P(VsphereBeaconTest, BeaconReadyTimesMatchTheTruth) {
  auto spec = slowed_small_lab();
  spec.vcenter.legacy_rest = GetParam();
  start_lab(spec);
  // The listener serves on its own thread, as the engine's does next to the provider's executor.
  asio::io_context beacon_io;
  auto work = asio::make_work_guard(beacon_io);
  beacon::ListenerOptions options;
  options.run_id = kRun;
  beacon::Listener listener(beacon_io.get_executor(), options);
  ASSERT_TRUE(listener.start());
  std::mutex mutex;
  std::map<std::string, api::MilestoneEvent> beacons;
  listener.set_sink([&](api::MilestoneEvent e) {
    std::lock_guard lock(mutex);
    if (e.milestone == api::Milestone::beacon) beacons[e.vm] = e;
  });
  std::thread beacon_thread([&] { beacon_io.run(); });
  config.beacon_url = listener.url();
  config.beacon_token = [&listener](const std::string& vm) { return listener.token_for(vm); };
  auto p = make_provider();
  const auto truth = storm_against_truth(*p, 6, &listener, [&] {
    std::lock_guard lock(mutex);
    return beacons.size();
  });
  asio::co_spawn(beacon_io, listener.stop(), asio::detached);
  work.reset();
  beacon_thread.join();
  ASSERT_EQ(beacons.size(), 6u);
  for (auto& [name, e] : beacons) {
    ASSERT_TRUE(truth.count(name)) << name;
    const auto& milestones = truth.at(name)["milestones"];
    ASSERT_TRUE(milestones.contains("beacon")) << name;
    const double real = milestones["beacon"].get<double>();
    const double observed = std::chrono::duration<double>(e.observed_wall.time_since_epoch()).count();
    std::printf("%s: beacon received %+.2f ms after the guest reached logon\n", name.c_str(),
                (observed - real) * 1e3);
    // Pushed by the guest: received after the truth, within loopback latency.
    EXPECT_GE(observed + 0.005, real) << name;
    EXPECT_LT(observed - real, 0.25) << name;
    EXPECT_EQ(e.source, api::Source::beacon);
  }
}

INSTANTIATE_TEST_SUITE_P(ApiAndLegacyRest, VsphereBeaconTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("legacy_rest") : std::string("api");
                         });

// Without a beacon nothing is customized, and the guests call no one.
TEST_F(VsphereLabTest, NoBeaconMeansNoGuestCustomization) {
  start_lab(slowed_small_lab());
  auto p = make_provider();
  ASSERT_TRUE(run(p->connect()));
  ASSERT_TRUE(run(p->check_inventory(api::InventoryRequest{{"host-01"}, 1})));
  auto h = run(p->provision(spec(1, "host-01")));
  ASSERT_TRUE(h) << h.error().what();
  auto stats = lab_call("GET", "/_lab/stats");
  for (auto& [route, n] : stats["byRoute"].items())
    EXPECT_EQ(route.find("customization"), std::string::npos) << route;
  EXPECT_TRUE(lab_call("GET", "/_lab/vms/" + h->id + "/guestinfo").empty());
  EXPECT_TRUE(run(p->destroy(*h)));
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
