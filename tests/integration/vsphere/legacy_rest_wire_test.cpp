// The legacy /rest dialect (vSphere 6.7 – 7.0U1) over real HTTPS on loopback: a tiny server answers with
// the in-memory vCenter of the unit tests in its /rest mode (its /api/session answers 404), so that the
// provider's dialect detection, value-wrapped bodies and path-style power calls go through the production
// transport (http::Client, TLS verification against the server's CA).
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "protocol/http/server.hpp"
#include "providers/vsphere/platform/api_choice.hpp"
#include "providers/vsphere/settings.hpp"
#include "providers/vsphere/vsphere_provider.hpp"
#include "tests/support/run_task.hpp"
#include "tests/unit/providers/vsphere/fake_vcenter.hpp"

namespace asio = boost::asio;
using namespace bootstorm;
using namespace std::chrono_literals;

namespace {

using bootstorm::testing::run_task;

TEST(VsphereLegacyRestWire, DetectsRestAndRunsTheWholeLifecycleOverHttps) {
  vsphere::register_provider();
  asio::io_context io;
  vsphere::testing::FakeVcenter fake;
  fake.legacy = true;
  const auto pki = http::generate_pki("localhost", {"127.0.0.1", "localhost"});
  http::ServerOptions server_options;
  server_options.tls = http::TlsServerOptions{};
  server_options.tls->cert_data = pki.leaf_cert_pem;
  server_options.tls->key_data = pki.leaf_key_pem;
  http::Server server(io.get_executor(), server_options,
                      [&fake](http::ServerRequest& req) -> asio::awaitable<http::ServerResponse> {
                        http::Request r(req.method, req.target, req.body);
                        r.headers = req.headers;
                        auto resp = co_await fake.send(std::move(r));
                        http::ServerResponse out;
                        out.status = resp ? resp->status : 500;
                        out.headers.emplace_back("Content-Type", "application/json");
                        if (resp) out.body = resp->body;
                        co_return out;
                      });
  ASSERT_TRUE(server.start());

  api::ProviderConfig config;
  config.kind = "vsphere";
  vsphere::Settings settings;
  settings.api = "rest";  // the REST dialects themselves (auto would first ask /sdk)
  config.endpoint = server.base_url();
  config.username = fake.user;
  config.password = fake.password;
  config.ca_data = pki.ca_cert_pem;
  settings.vm = "golden";
  settings.clone = "full";
  config.settings = api::make_settings(settings);
  config.run_id = "1e9ac7";
  config.requests_per_second = 100;
  auto provider = api::create_provider("vsphere", io.get_executor(), config);
  ASSERT_NE(provider, nullptr);

  auto c = run_task(io, provider->connect());
  ASSERT_TRUE(c) << c.error().what();
  ASSERT_TRUE(run_task(io, provider->check_inventory(api::InventoryRequest{{"esx-01"}, 1})));
  auto h = run_task(io, provider->provision(api::VmSpec{"bs-1e9ac7-old-001", "old", "esx-01", 1}));
  ASSERT_TRUE(h) << h.error().what();
  ASSERT_TRUE(run_task(io, provider->wait_startable(*h, 5s)));
  ASSERT_TRUE(run_task(io, provider->prepare_storm(1)));
  auto s = run_task(io, provider->start(*h));
  ASSERT_TRUE(s) << s.error().what();
  EXPECT_GT(s->acknowledged_mono, s->written_mono);

  std::map<api::Milestone, api::MilestoneEvent> seen;
  bool observed = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::vector<api::VmHandle> vms{*h};
        co_await provider->observe(
            vms, [&](api::MilestoneEvent e) { seen[e.milestone] = e; }, CancelSignal());
        observed = true;
      },
      asio::detached);
  while (!observed && io.run_one()) {
  }
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[api::Milestone::ip_assigned].detail, "10.0.0." + h->id.substr(3));

  ASSERT_TRUE(run_task(io, provider->destroy(*h)));
  EXPECT_EQ(fake.vms.count(h->id), 0u);
  bool disconnected = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await provider->disconnect();
        disconnected = true;
      },
      asio::detached);
  while (!disconnected && io.run_one()) {
  }
  EXPECT_TRUE(fake.tokens.empty());

  // Everything after the failed /api/session probe used the /rest dialect.
  ASSERT_GE(fake.requests.size(), 2u);
  EXPECT_EQ(fake.requests[0].target, "/api/session");
  for (std::size_t i = 1; i < fake.requests.size(); ++i)
    EXPECT_EQ(fake.requests[i].target.rfind("/rest/", 0), 0u) << fake.requests[i].target;
  EXPECT_GE(fake.count("POST", "/rest/vcenter/vm/" + h->id + "/power/start"), 1u);
  server.stop_now();
}

}  // namespace
