// Contract test: every request the provider sends in a full lifecycle (login, inventory, full and instant
// clones, storm start, observe, stop, delete, list, logout) must be an operation of the published vSphere
// specs (vcenter-7.0.3.json, session-8.0.2.json), with declared query parameters, enum values, and a body
// that validates against the operation's schema.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "fake_vcenter.hpp"
#include "providers/vsphere/settings.hpp"
#include "providers/vsphere/vsphere_provider.hpp"
#include "swagger_validator.hpp"
#include "tests/support/run_task.hpp"

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere;
using namespace std::chrono_literals;
using bootstorm::vsphere::testing::FakeVcenter;
using bootstorm::vsphere::testing::SwaggerSpec;

namespace {

using bootstorm::testing::run_task;

const SwaggerSpec& vcenter_spec() {
  static const SwaggerSpec spec =
      SwaggerSpec::load(std::string(BOOTSTORM_API_SPECS) + "/vsphere/vcenter-7.0.3.json");
  return spec;
}
const SwaggerSpec& session_spec() {
  static const SwaggerSpec spec =
      SwaggerSpec::load(std::string(BOOTSTORM_API_SPECS) + "/vsphere/session-8.0.2.json");
  return spec;
}

std::vector<bootstorm::vsphere::testing::RecordedRequest> lifecycle(const std::string& clone_type) {
  asio::io_context io;
  auto transport = std::make_unique<FakeVcenter>();
  FakeVcenter* fake = transport.get();
  if (clone_type == "instant") fake->vms["vm-golden"].power = "POWERED_ON";
  api::ProviderConfig config;
  config.endpoint = "https://vc.test";
  config.username = "admin";
  config.password = "s3cret-pass";
  Settings settings;
  settings.vm = "golden";
  settings.clone = clone_type;
  config.settings = api::make_settings(settings);
  config.run_id = "c0ffee";
  config.requests_per_second = 200;
  config.beacon_url = "http://192.0.2.10:8443/v1/ready";
  config.beacon_token = [](const std::string& vm) { return "tok-" + vm; };
  VsphereProvider provider(io.get_executor(), config, std::move(transport));
  EXPECT_TRUE(run_task(io, provider.connect()));
  EXPECT_TRUE(run_task(io, provider.check_inventory(api::InventoryRequest{{"esx-01"}, 2})));
  std::vector<api::VmHandle> vms;
  for (int i = 1; i <= 2; ++i) {
    auto h =
        run_task(io, provider.provision(api::VmSpec{"bs-c0ffee-s-00" + std::to_string(i), "s", "esx-01", i}));
    EXPECT_TRUE(h);
    if (!h) return {};
    EXPECT_TRUE(run_task(io, provider.wait_startable(*h, 1s)));
    vms.push_back(*h);
  }
  EXPECT_TRUE(run_task(io, provider.prepare_storm(2)));
  for (auto& v : vms) EXPECT_TRUE(run_task(io, provider.start(v)));
  asio::co_spawn(io,
                 provider.observe(
                     vms, [](api::MilestoneEvent) {}, CancelSignal()),
                 asio::detached);
  io.restart();
  io.run();
  EXPECT_TRUE(run_task(io, provider.stop(vms[0])));
  for (auto& v : vms) EXPECT_TRUE(run_task(io, provider.destroy(v)));
  EXPECT_TRUE(run_task(io, provider.list_run_vms("c0ffee")));
  asio::co_spawn(io, provider.disconnect(), asio::detached);
  io.restart();
  io.run();
  return fake->requests;
}

void expect_conformant(const std::vector<bootstorm::vsphere::testing::RecordedRequest>& requests) {
  ASSERT_FALSE(requests.empty());
  std::set<std::string> operations;
  for (const auto& r : requests) {
    const SwaggerSpec& spec = r.target.rfind("/api/session", 0) == 0 ? session_spec() : vcenter_spec();
    auto errors = spec.check_request(r.method, r.target, r.body);
    for (auto& e : errors) ADD_FAILURE() << r.method << " " << r.target << " " << r.body << ": " << e;
    if (auto op = spec.find_operation(r.method, r.target)) operations.insert(r.method + " " + *op);
  }
  // The lifecycle exercised the operations that matter.
  for (const char* op :
       {"POST /api/session", "DELETE /api/session", "GET /api/vcenter/host", "GET /api/vcenter/datastore",
        "GET /api/vcenter/vm", "GET /api/vcenter/vm/{vm}/power",
        "POST /api/vcenter/vm/{vm}/power?action=start", "POST /api/vcenter/vm/{vm}/power?action=stop",
        "GET /api/vcenter/vm/{vm}/tools", "GET /api/vcenter/vm/{vm}/guest/identity",
        "DELETE /api/vcenter/vm/{vm}", "PUT /api/vcenter/vm/{vm}/guest/customization"})
    EXPECT_TRUE(operations.count(op)) << op << " not exercised";
}

TEST(VsphereContract, FullCloneLifecycleConformsToTheSpec) {
  auto requests = lifecycle("full");
  expect_conformant(requests);
  bool clone = false;
  for (auto& r : requests) clone = clone || r.target == "/api/vcenter/vm?action=clone";
  EXPECT_TRUE(clone);
}

TEST(VsphereContract, InstantCloneLifecycleConformsToTheSpec) {
  auto requests = lifecycle("instant");
  expect_conformant(requests);
  bool clone = false;
  for (auto& r : requests) clone = clone || r.target == "/api/vcenter/vm?action=instant-clone";
  EXPECT_TRUE(clone);
}

// The checker itself catches what it must (so a passing contract test means something).
TEST(VsphereContract, CheckerRejectsMisspeltFieldsWrongTypesAndUnknownOperations) {
  const auto& spec = vcenter_spec();
  EXPECT_TRUE(
      spec.check_request("POST", "/api/vcenter/vm?action=clone",
                         R"({"source":"vm-1","name":"x","placement":{"host":"host-1"},"power_on":false})")
          .empty());
  EXPECT_FALSE(spec.check_request("POST", "/api/vcenter/vm?action=clone",
                                  R"({"source":"vm-1","name":"x","poweron":false})")
                   .empty());
  EXPECT_FALSE(spec.check_request("POST", "/api/vcenter/vm?action=clone",
                                  R"({"source":"vm-1","name":"x","power_on":"no"})")
                   .empty());
  EXPECT_FALSE(spec.check_request("POST", "/api/vcenter/vm?action=instant-clone",
                                  R"({"source":"vm-1","name":"x","placement":{"host":"host-1"}})")
                   .empty());
  EXPECT_FALSE(spec.check_request("GET", "/api/vcenter/vm?power_states=ON", "").empty());
  EXPECT_FALSE(spec.check_request("GET", "/api/vcenter/vm?filter.names=x", "").empty());
  EXPECT_FALSE(spec.check_request("POST", "/api/vcenter/vm/vm-1/power/start", "").empty());
  EXPECT_TRUE(
      spec.check_request("GET", "/api/vcenter/vm?vms=vm-1&vms=vm-2&power_states=POWERED_ON", "").empty());
}

}  // namespace
