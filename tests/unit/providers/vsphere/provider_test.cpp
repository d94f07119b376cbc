// Unit tests of VsphereProvider's logic against an in-memory vCenter (fake_vcenter.hpp): session handling,
// inventory errors, clone bodies and per-host limits, start retries, observe bookkeeping and budget, name
// safety, dry run and the legacy /rest dialect.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "fake_vcenter.hpp"
#include "providers/vsphere/descriptor.hpp"
#include "providers/vsphere/settings.hpp"
#include "providers/vsphere/vsphere_provider.hpp"
#include "tests/support/run_task.hpp"

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere;
using namespace std::chrono_literals;
using bootstorm::vsphere::testing::FakeVcenter;
using json = nlohmann::json;

namespace {

constexpr const char* kRun = "a1b2c3";

class VsphereProviderTest : public ::testing::Test {
 protected:
  VsphereProviderTest() {
    config.kind = "vsphere";
    config.endpoint = "https://vc.test:443";
    config.username = "admin";
    config.password = "s3cret-pass";
    settings.vm = "golden";
    settings.clone = "full";
    config.run_id = kRun;
    config.requests_per_second = 100;
    config.max_concurrent = 16;
    auto transport = std::make_unique<FakeVcenter>();
    fake = transport.get();
    pending_transport = std::move(transport);
  }

  VsphereProvider& provider() {
    if (!provider_) {
      config.settings = api::make_settings(settings);
      provider_ = std::make_unique<VsphereProvider>(io.get_executor(), config, std::move(pending_transport));
    }
    return *provider_;
  }

  template <class T>
  T run(asio::awaitable<T> aw) {
    return bootstorm::testing::run_task(io, std::move(aw));
  }
  void run_void(asio::awaitable<void> aw) { bootstorm::testing::run_task(io, std::move(aw)); }

  void connect_and_check(std::vector<std::string> hosts = {"esx-01"}, std::size_t vms = 4) {
    auto c = run(provider().connect());
    ASSERT_TRUE(c) << c.error().what();
    api::InventoryRequest req;
    req.hosts = std::move(hosts);
    req.total_vms = vms;
    auto r = run(provider().check_inventory(req));
    ASSERT_TRUE(r) << r.error().what();
  }

  api::VmSpec spec(int i, std::string host = "esx-01") {
    char buf[64];
    std::snprintf(buf, sizeof buf, "bs-%s-sc-%03d", kRun, i);
    return api::VmSpec{buf, "sc", std::move(host), i};
  }

  asio::io_context io;
  api::ProviderConfig config;
  Settings settings;  // the plan's vSphere keys, handed to the provider when provider() builds it
  FakeVcenter* fake = nullptr;
  std::unique_ptr<FakeVcenter> pending_transport;
  std::unique_ptr<VsphereProvider> provider_;
};

TEST_F(VsphereProviderTest, LoginSendsBasicAuthThenTheTokenOnEveryRequestAndLogsOut) {
  connect_and_check();
  ASSERT_GE(fake->requests.size(), 4u);
  EXPECT_EQ(fake->requests[0].target, "/api/session");
  EXPECT_EQ(fake->requests[0].authorization, "Basic YWRtaW46czNjcmV0LXBhc3M=");  // admin:s3cret-pass
  const std::string token = fake->requests[1].session_header;
  EXPECT_FALSE(token.empty());
  for (std::size_t i = 1; i < fake->requests.size(); ++i) {
    EXPECT_EQ(fake->requests[i].session_header, token) << fake->requests[i].target;
    EXPECT_TRUE(fake->requests[i].authorization.empty());
  }
  EXPECT_EQ(fake->tokens.size(), 1u);
  run_void(provider().disconnect());
  EXPECT_EQ(fake->requests.back().method, "DELETE");
  EXPECT_EQ(fake->requests.back().target, "/api/session");
  EXPECT_TRUE(fake->tokens.empty());
  EXPECT_EQ(provider().logins(), 1u);
}

TEST_F(VsphereProviderTest, ExpiredSessionIsRenewedOnceAndTheRequestResent) {
  connect_and_check();
  fake->expire_sessions();
  api::InventoryRequest req{{"esx-02"}, 1};
  auto r = run(provider().check_inventory(req));
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(provider().logins(), 2u);
  EXPECT_EQ(fake->count("POST", "/api/session"), 2u);
}

TEST_F(VsphereProviderTest, WrongPasswordIsAClearAuthError) {
  config.password = "wrong-password";
  auto c = run(provider().connect());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, ErrorKind::auth);
  EXPECT_EQ(c.error().message,
            "vCenter at https://vc.test:443 rejected the credentials of admin: check "
            "VSPHERE_USER/VSPHERE_PASSWORD");
}

TEST_F(VsphereProviderTest, A401AfterReloginFailsClearlyWithoutLooping) {
  auto c = run(provider().connect());
  ASSERT_TRUE(c);
  fake->sessions_never_valid = true;
  auto r = run(provider().check_inventory(api::InventoryRequest{{"esx-01"}, 1}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::auth);
  EXPECT_NE(r.error().message.find("rejected the credentials of admin"), std::string::npos);
  EXPECT_EQ(fake->count("POST", "/api/session"), 2u);  // the first login and exactly one re-login
}

TEST_F(VsphereProviderTest, MissingHostIsNamedWithTheHostsThatExist) {
  ASSERT_TRUE(run(provider().connect()));
  auto r = run(provider().check_inventory(api::InventoryRequest{{"esx-01", "r740-09"}, 2}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
  EXPECT_EQ(r.error().message,
            "host r740-09 not found in vCenter https://vc.test:443; hosts: esx-01, esx-02, esx-03");
}

TEST_F(VsphereProviderTest, DisconnectedHostIsRefused) {
  ASSERT_TRUE(run(provider().connect()));
  auto r = run(provider().check_inventory(api::InventoryRequest{{"esx-03"}, 1}));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("host esx-03"), std::string::npos);
  EXPECT_NE(r.error().message.find("DISCONNECTED"), std::string::npos);
}

TEST_F(VsphereProviderTest, MissingGoldenVmListsTheVms) {
  settings.vm = "win10-golden";
  ASSERT_TRUE(run(provider().connect()));
  auto r = run(provider().check_inventory(api::InventoryRequest{{"esx-01"}, 1}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
  EXPECT_EQ(r.error().message,
            "golden VM win10-golden not found in vCenter https://vc.test:443; VMs: golden");
}

TEST_F(VsphereProviderTest, InstantCloneNeedsAPoweredOnGolden) {
  settings.clone = "instant";
  ASSERT_TRUE(run(provider().connect()));
  auto r = run(provider().check_inventory(api::InventoryRequest{{"esx-01"}, 1}));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("POWERED_OFF"), std::string::npos);
  EXPECT_NE(r.error().message.find("instant clones need a powered-on source"), std::string::npos);
}

TEST_F(VsphereProviderTest, InstantClonesMustBePlacedOnTheGoldenVmsHost) {
  settings.clone = "instant";
  fake->vms["vm-golden"].power = "POWERED_ON";
  ASSERT_TRUE(run(provider().connect()));
  auto r = run(provider().check_inventory(api::InventoryRequest{{"esx-02"}, 1}));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not on esx-02"), std::string::npos);
  EXPECT_TRUE(run(provider().check_inventory(api::InventoryRequest{{"esx-01"}, 1})));
}

TEST_F(VsphereProviderTest, UnknownDatastoreListsTheDatastores) {
  settings.datastore = "fc-64g";
  ASSERT_TRUE(run(provider().connect()));
  auto r = run(provider().check_inventory(api::InventoryRequest{{"esx-01"}, 1}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "datastore fc-64g not found in vCenter https://vc.test:443; datastores: local-ds, shared-ds");
}

TEST_F(VsphereProviderTest, DatastoreWithoutRoomForTheClonesIsRefused) {
  fake->datastores[1]["free_space"] = 100.0 * 1024 * 1024 * 1024;  // 100 GiB; a clone needs 40 + 4 GiB
  ASSERT_TRUE(run(provider().connect()));
  EXPECT_TRUE(run(provider().check_inventory(api::InventoryRequest{{"esx-01"}, 2})));
  auto r = run(provider().check_inventory(api::InventoryRequest{{"esx-01"}, 3}));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("datastore shared-ds"), std::string::npos);
  EXPECT_NE(r.error().message.find("100.0 GiB free"), std::string::npos);
}

TEST_F(VsphereProviderTest, NamedDatastoreIsUsedWhenThePlanNamesOne) {
  settings.datastore = "local-ds";
  connect_and_check();
  ASSERT_TRUE(run(provider().provision(spec(1))));
  std::size_t clones = 0;
  for (auto& r : fake->requests) {
    if (r.target != "/api/vcenter/vm?action=clone") continue;
    ++clones;
    EXPECT_EQ(json::parse(r.body)["placement"]["datastore"], "datastore-9");
  }
  EXPECT_EQ(clones, 1u);
}

TEST_F(VsphereProviderTest, FullCloneIsPinnedToHostAndDatastoreAndPoweredOff) {
  connect_and_check({"esx-02"});
  auto h = run(provider().provision(spec(1, "esx-02")));
  ASSERT_TRUE(h) << h.error().what();
  EXPECT_EQ(h->name, spec(1).name);
  EXPECT_EQ(h->host, "esx-02");
  ASSERT_EQ(fake->count("POST", "/api/vcenter/vm?action=clone"), 1u);
  json body;
  for (auto& r : fake->requests)
    if (r.target == "/api/vcenter/vm?action=clone") body = json::parse(r.body);
  EXPECT_EQ(body, (json{{"source", "vm-golden"},
                        {"name", spec(1).name},
                        {"placement", {{"host", "host-2"}, {"datastore", "datastore-1"}}},
                        {"power_on", false}}));
  EXPECT_EQ(fake->vms[h->id].host, "host-2");
  EXPECT_TRUE(run(provider().wait_startable(*h, 1s)));
}

TEST_F(VsphereProviderTest, BeaconIsHandedOverAsACloudInitCustomizationBeforeTheStorm) {
  config.beacon_url = "https://10.1.2.3:9443/v1/ready";
  config.beacon_token = [](const std::string& vm) { return "token-of-" + vm; };
  connect_and_check();
  auto h = run(provider().provision(spec(1)));
  ASSERT_TRUE(h) << h.error().what();
  const std::string target = "/api/vcenter/vm/" + h->id + "/guest/customization";
  ASSERT_EQ(fake->count("PUT", target), 1u);
  // After the clone created the VM (it must exist and be off), never after a power start.
  std::size_t clone_at = 0, put_at = 0;
  for (std::size_t i = 0; i < fake->requests.size(); ++i) {
    if (fake->requests[i].target == "/api/vcenter/vm?action=clone") clone_at = i;
    if (fake->requests[i].target == target) put_at = i;
  }
  EXPECT_LT(clone_at, put_at);
  const json& set = fake->customizations[h->id];
  const json& cloud = set["spec"]["configuration_spec"]["cloud_config"];
  EXPECT_EQ(cloud["type"], "CLOUDINIT");
  const std::string userdata = cloud["cloudinit"]["userdata"];
  EXPECT_EQ(userdata.rfind("#cloud-config\n", 0), 0u);
  EXPECT_NE(userdata.find("BOOTSTORM_BEACON_URL=https://10.1.2.3:9443/v1/ready\n"), std::string::npos);
  EXPECT_NE(userdata.find("BOOTSTORM_BEACON_TOKEN=token-of-" + spec(1).name + "\n"), std::string::npos);
  EXPECT_NE(userdata.find("BOOTSTORM_VM_NAME=" + spec(1).name + "\n"), std::string::npos);
  EXPECT_NE(cloud["cloudinit"]["metadata"].get<std::string>().find("instance-id: " + spec(1).name),
            std::string::npos);
  EXPECT_TRUE(set["spec"]["interfaces"].is_array());
  EXPECT_TRUE(set["spec"]["global_DNS_settings"].is_object());
}

TEST_F(VsphereProviderTest, WithoutABeaconNoCustomizationIsSent) {
  connect_and_check();
  auto h = run(provider().provision(spec(1)));
  ASSERT_TRUE(h) << h.error().what();
  EXPECT_EQ(fake->count("PUT", "/api/vcenter/vm/" + h->id + "/guest/customization"), 0u);
}

TEST_F(VsphereProviderTest, WindowsGoldenGetsNoCloudInitCustomization) {
  config.beacon_url = "https://10.1.2.3:9443/v1/ready";
  config.beacon_token = [](const std::string& vm) { return "token-of-" + vm; };
  fake->vms["vm-golden"].guest_os = "WINDOWS_9_64";
  connect_and_check();
  auto h = run(provider().provision(spec(1)));
  ASSERT_TRUE(h) << h.error().what();
  EXPECT_EQ(fake->count("PUT", "/api/vcenter/vm/" + h->id + "/guest/customization"), 0u);
}

TEST_F(VsphereProviderTest, LinkedIsAFullCloneBecauseRestHasNoLinkedClone) {
  settings.clone = "linked";
  connect_and_check();
  ASSERT_TRUE(run(provider().provision(spec(1))));
  EXPECT_EQ(fake->count("POST", "/api/vcenter/vm?action=clone"), 1u);
  EXPECT_EQ(fake->count("POST", "/api/vcenter/vm?action=instant-clone"), 0u);
}

TEST_F(VsphereProviderTest, InstantCloneIsPoweredOffForTheStorm) {
  settings.clone = "instant";
  fake->vms["vm-golden"].power = "POWERED_ON";
  connect_and_check();
  auto h = run(provider().provision(spec(1)));
  ASSERT_TRUE(h) << h.error().what();
  json body;
  for (auto& r : fake->requests)
    if (r.target == "/api/vcenter/vm?action=instant-clone") body = json::parse(r.body);
  EXPECT_EQ(
      body,
      (json{{"source", "vm-golden"}, {"name", spec(1).name}, {"placement", {{"datastore", "datastore-1"}}}}));
  EXPECT_EQ(fake->vms[h->id].power, "POWERED_OFF");
  EXPECT_TRUE(run(provider().wait_startable(*h, 1s)));
}

TEST_F(VsphereProviderTest, AtMostFourClonesRunOnOneHostAtOnce) {
  fake->clone_delay = 20ms;
  connect_and_check({"esx-01", "esx-02"}, 14);
  int done = 0;
  for (int i = 1; i <= 14; ++i) {
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          auto h = co_await provider().provision(spec(i, i <= 10 ? "esx-01" : "esx-02"));
          EXPECT_TRUE(h);
          ++done;
        },
        asio::detached);
  }
  io.restart();
  io.run();
  EXPECT_EQ(done, 14);
  EXPECT_EQ(fake->max_clones_in_flight["host-1"], static_cast<int>(kClonesPerHost));
  EXPECT_EQ(fake->max_clones_in_flight["host-2"], 4);
  EXPECT_EQ(fake->max_total_clones_in_flight, 8);  // the other host's clones were not held back
}

TEST_F(VsphereProviderTest, OverallCloneConcurrencyIsBoundedByMaxConcurrent) {
  config.max_concurrent = 2;
  fake->clone_delay = 20ms;
  connect_and_check({"esx-01", "esx-02"}, 8);
  for (int i = 1; i <= 8; ++i)
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          (void)co_await provider().provision(spec(i, i % 2 ? "esx-01" : "esx-02"));
        },
        asio::detached);
  io.restart();
  io.run();
  EXPECT_EQ(fake->max_total_clones_in_flight, 2);
}

TEST_F(VsphereProviderTest, CloneConcurrencyIsBoundedPerDatastore) {
  fake->clone_delay = 20ms;
  VsphereProvider::Tuning tuning;
  tuning.clones_per_datastore = 3;
  provider().set_tuning(tuning);
  connect_and_check({"esx-01", "esx-02"}, 10);
  int done = 0;
  for (int i = 1; i <= 10; ++i)
    asio::co_spawn(
        io,
        [&, i]() -> asio::awaitable<void> {
          EXPECT_TRUE(co_await provider().provision(spec(i, i % 2 ? "esx-01" : "esx-02")));
          ++done;
        },
        asio::detached);
  io.restart();
  io.run();
  EXPECT_EQ(done, 10);
  EXPECT_EQ(fake->max_total_clones_in_flight, 3);
}

TEST_F(VsphereProviderTest, RefusesToCreateAVmWithoutTheRunId) {
  connect_and_check();
  auto h = run(provider().provision(api::VmSpec{"desktop-001", "sc", "esx-01", 1}));
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(fake->count("POST", "/api/vcenter/vm?action="), 0u);
}

TEST_F(VsphereProviderTest, StartRetriesResourceBusyAndReportsWhenItWasWritten) {
  connect_and_check();
  auto h = run(provider().provision(spec(1)));
  ASSERT_TRUE(h);
  ASSERT_TRUE(run(provider().prepare_storm(10)));
  EXPECT_EQ(fake->prewarmed, 10u);
  fake->busy_starts_left = 2;
  const auto before = std::chrono::steady_clock::now();
  auto s = run(provider().start(*h));
  ASSERT_TRUE(s) << s.error().what();
  EXPECT_EQ(s->attempts, 3);
  EXPECT_GE(s->written_mono, before);
  EXPECT_GE(s->acknowledged_mono, s->written_mono);
  EXPECT_EQ(fake->vms[h->id].power, "POWERED_ON");
  EXPECT_EQ(fake->count("POST", "/api/vcenter/vm/" + h->id + "/power?action=start"), 3u);
  EXPECT_EQ(provider().stats().retries, 2u);
}

TEST_F(VsphereProviderTest, AlreadyPoweredOnCountsAsStarted) {
  connect_and_check();
  auto h = run(provider().provision(spec(1)));
  ASSERT_TRUE(h);
  fake->vms[h->id].power = "POWERED_ON";
  auto s = run(provider().start(*h));
  ASSERT_TRUE(s) << s.error().what();
  EXPECT_EQ(s->attempts, 1);
}

TEST_F(VsphereProviderTest, DestroyRefusesForeignVmsAndDeletesOwnOnes) {
  connect_and_check();
  fake->add_vm("vm-7", "prod-db-01", "host-1", "POWERED_ON");
  auto refused = run(provider().destroy(api::VmHandle{"prod-db-01", "vm-7", "esx-01", ""}));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(refused.error().message,
            "refusing to delete VM prod-db-01: its name does not carry run id a1b2c3");
  EXPECT_FALSE(run(provider().stop(api::VmHandle{"prod-db-01", "vm-7", "esx-01", ""})));
  EXPECT_EQ(fake->vms["vm-7"].power, "POWERED_ON");
  EXPECT_EQ(fake->count("DELETE", "/api/vcenter/vm/"), 0u);

  auto h = run(provider().provision(spec(1)));
  ASSERT_TRUE(h);
  ASSERT_TRUE(run(provider().start(*h)));
  auto d = run(provider().destroy(*h));
  ASSERT_TRUE(d) << d.error().what();
  EXPECT_EQ(fake->vms.count(h->id), 0u);
  EXPECT_EQ(fake->requests.back().method, "GET");  // verified gone
  // Idempotent: deleting again (by name only, as cleanup does from a journal) succeeds.
  EXPECT_TRUE(run(provider().destroy(api::VmHandle{h->name, "", "", ""})));
}

TEST_F(VsphereProviderTest, ListRunVmsReturnsOnlyThisRunsVms) {
  connect_and_check();
  fake->add_vm("vm-50", std::string("bs-") + kRun + "-a-001", "host-1", "POWERED_OFF");
  fake->add_vm("vm-51", std::string("bs-") + kRun + "-b-002", "host-2", "POWERED_ON");
  fake->add_vm("vm-52", "bs-ffffff-a-001", "host-1", "POWERED_OFF");
  fake->add_vm("vm-53", "bs-" + std::string(kRun), "host-1", "POWERED_OFF");
  auto list = run(provider().list_run_vms(kRun));
  ASSERT_TRUE(list);
  std::set<std::string> ids;
  for (auto& v : *list) ids.insert(v.id);
  EXPECT_EQ(ids, (std::set<std::string>{"vm-50", "vm-51"}));
}

TEST_F(VsphereProviderTest, DryRunMakesNoChangingCalls) {
  config.dry_run = true;
  connect_and_check();
  auto h = run(provider().provision(spec(1)));
  ASSERT_TRUE(h);
  ASSERT_TRUE(run(provider().wait_startable(*h, 1s)));
  ASSERT_TRUE(run(provider().start(*h)));
  fake->add_vm("vm-60", spec(2).name, "host-1", "POWERED_ON");
  ASSERT_TRUE(run(provider().destroy(api::VmHandle{spec(2).name, "vm-60", "esx-01", ""})));
  run_void(provider().disconnect());
  for (auto& r : fake->requests) {
    const bool session = r.target == "/api/session";
    EXPECT_TRUE(r.method == "GET" || session) << r.method << " " << r.target;
  }
  EXPECT_EQ(fake->vms.size(), 2u);  // golden + vm-60, untouched
  EXPECT_EQ(fake->vms["vm-60"].power, "POWERED_ON");
}

struct Seen {
  std::map<std::string, std::map<api::Milestone, api::MilestoneEvent>> events;
  void operator()(api::MilestoneEvent e) {
    auto& slot = events[e.vm];
    EXPECT_EQ(slot.count(e.milestone), 0u) << "duplicate " << api::to_string(e.milestone) << " for " << e.vm;
    slot[e.milestone] = std::move(e);
  }
};

TEST_F(VsphereProviderTest, ObserveReportsEveryMilestoneWithinItsStatedResolution) {
  connect_and_check({"esx-01"}, 3);
  std::vector<api::VmHandle> vms;
  for (int i = 1; i <= 3; ++i) {
    auto h = run(provider().provision(spec(i)));
    ASSERT_TRUE(h);
    vms.push_back(*h);
  }
  fake->vms[vms[0].id].tools_after = 100ms;
  fake->vms[vms[1].id].tools_after = 200ms;
  fake->vms[vms[2].id].tools_after = 300ms;
  for (auto& v : vms) fake->vms[v.id].ip_after = fake->vms[v.id].tools_after + 150ms;
  Seen seen;
  CancelSignal stop;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (auto& v : vms) EXPECT_TRUE(co_await provider().start(v));
      },
      asio::detached);
  asio::steady_timer guard(io, 10s);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await provider().observe(vms, std::ref(seen), stop);
        guard.cancel();
      },
      asio::detached);
  guard.async_wait([&](auto ec) {
    if (!ec) stop.cancel();
  });
  io.restart();
  io.run_for(12s);
  ASSERT_EQ(seen.events.size(), 3u);
  for (auto& v : vms) {
    auto& ev = seen.events[v.name];
    ASSERT_EQ(ev.size(), 3u) << v.name;
    const auto& truth = fake->vms[v.id];
    const std::map<api::Milestone, std::chrono::steady_clock::time_point> true_at = {
        {api::Milestone::running, truth.powered_on_at},
        {api::Milestone::guest_agent, truth.powered_on_at + truth.tools_after},
        {api::Milestone::ip_assigned, truth.powered_on_at + truth.ip_after}};
    for (auto& [m, t] : true_at) {
      const auto& e = ev.at(m);
      EXPECT_GE(e.observed_mono, t) << api::to_string(m);
      const auto lower = e.observed_mono - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(e.resolution_s));
      EXPECT_LE(lower, t) << api::to_string(m) << " resolution " << e.resolution_s;
      EXPECT_EQ(e.source, api::Source::poll);
    }
    EXPECT_EQ(ev.at(api::Milestone::ip_assigned).detail, "10.0.0." + v.id.substr(3));
  }
  guard.cancel();
}

TEST_F(VsphereProviderTest, ObserveNeverExceedsTheRequestBudget) {
  config.requests_per_second = 25;
  connect_and_check({"esx-01"}, 6);
  std::vector<api::VmHandle> vms;
  for (int i = 1; i <= 6; ++i) {
    auto h = run(provider().provision(spec(i)));
    ASSERT_TRUE(h);
    ASSERT_TRUE(run(provider().start(*h)));
    fake->vms[h->id].tools_after = 1200ms;
    fake->vms[h->id].ip_after = 1500ms;
    vms.push_back(*h);
  }
  const std::size_t first = fake->requests.size();
  Seen seen;
  run_void(provider().observe(vms, std::ref(seen), CancelSignal()));
  ASSERT_EQ(seen.events.size(), 6u);
  std::vector<std::chrono::steady_clock::time_point> times;
  for (std::size_t i = first; i < fake->requests.size(); ++i) times.push_back(fake->requests[i].sent);
  ASSERT_GT(times.size(), 30u);  // it did poll repeatedly
  for (std::size_t i = 0; i < times.size(); ++i) {
    std::size_t j = i;
    while (j < times.size() && times[j] - times[i] < 1s) ++j;
    EXPECT_LE(j - i, 25u) << "window starting at request " << i;
  }
}

TEST_F(VsphereProviderTest, ObserveEndsPromptlyWhenStopped) {
  connect_and_check();
  auto h = run(provider().provision(spec(1)));
  ASSERT_TRUE(h);
  Seen seen;
  CancelSignal stop;
  bool returned = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::vector<api::VmHandle> vms{*h};
        co_await provider().observe(vms, std::ref(seen), stop);
        returned = true;
      },
      asio::detached);
  asio::steady_timer t(io, 200ms);
  t.async_wait([&](auto) { stop.cancel(); });
  io.restart();
  io.run_for(5s);
  EXPECT_TRUE(returned);
  EXPECT_TRUE(seen.events.empty());  // never powered on
}

TEST_F(VsphereProviderTest, LegacyRestDialectIsUsedWhenApiSessionIsMissing) {
  fake->legacy = true;
  connect_and_check();
  EXPECT_EQ(provider().dialect(), Dialect::rest);
  EXPECT_EQ(fake->requests[0].target, "/api/session");
  EXPECT_EQ(fake->requests[1].target, "/rest/com/vmware/cis/session");
  auto h = run(provider().provision(spec(1)));
  ASSERT_TRUE(h) << h.error().what();
  json body;
  for (auto& r : fake->requests)
    if (r.target == "/rest/vcenter/vm?action=clone") body = json::parse(r.body);
  EXPECT_EQ(body["spec"]["name"], spec(1).name);
  EXPECT_EQ(body["spec"]["placement"]["host"], "host-1");
  ASSERT_TRUE(run(provider().wait_startable(*h, 1s)));
  ASSERT_TRUE(run(provider().start(*h)));
  EXPECT_EQ(fake->count("POST", "/rest/vcenter/vm/" + h->id + "/power/start"), 1u);
  Seen seen;
  run_void(provider().observe({*h}, std::ref(seen), CancelSignal()));
  EXPECT_EQ(seen.events[h->name].size(), 3u);
  bool filtered = false;
  for (auto& r : fake->requests)
    if (r.target.rfind("/rest/vcenter/vm?filter.vms.1=", 0) == 0) filtered = true;
  EXPECT_TRUE(filtered);
  ASSERT_TRUE(run(provider().destroy(*h)));
  EXPECT_EQ(fake->vms.count(h->id), 0u);
  run_void(provider().disconnect());
  EXPECT_EQ(fake->requests.back().target, "/rest/com/vmware/cis/session");
  EXPECT_TRUE(fake->tokens.empty());
}

TEST_F(VsphereProviderTest, CapabilitiesDescribeWhatIsObserved) {
  auto caps = provider().capabilities();
  EXPECT_TRUE(caps.start_blocks_until_powered_on);
  EXPECT_EQ(caps.observed.size(), 3u);
  EXPECT_TRUE(caps.observed.count(api::Milestone::running));
  EXPECT_TRUE(caps.observed.count(api::Milestone::guest_agent));
  EXPECT_TRUE(caps.observed.count(api::Milestone::ip_assigned));
}

// The plan loader offers the ready signals the kind's descriptor names: they must be what the provider
// observes.
TEST_F(VsphereProviderTest, DescriptorNamesTheMilestonesTheProviderObserves) {
  std::vector<std::string> observed;
  for (const auto& [milestone, resolution] : provider().capabilities().observed)
    observed.emplace_back(api::to_string(milestone));
  EXPECT_EQ(observed, descriptor().observed_milestones);
}

}  // namespace
