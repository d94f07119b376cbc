// The simulator's vCenter front over real HTTPS sockets on loopback (LabServer + http::Client), including a
// contract test of every response body against the official vSphere 7.0U3 spec.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/base64.hpp"
#include "protocol/http/client.hpp"
#include "protocol/http/server.hpp"
#include "simulator/lab/lab_server.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/swagger/swagger_validator.hpp"

namespace bootstorm::sim {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

const testing::SwaggerSpec& vcenter_spec() {
  static const testing::SwaggerSpec spec = [] {
    auto loaded = testing::SwaggerSpec::load(BOOTSTORM_API_SPECS "/vsphere/vcenter-7.0.3.json");
    if (!loaded) throw std::runtime_error(loaded.error().what());
    return *loaded;
  }();
  return spec;
}

const testing::SwaggerSpec& session_spec() {
  static const testing::SwaggerSpec spec = [] {
    auto loaded = testing::SwaggerSpec::load(BOOTSTORM_API_SPECS "/vsphere/session-8.0.2.json");
    if (!loaded) throw std::runtime_error(loaded.error().what());
    return *loaded;
  }();
  return spec;
}

const testing::SwaggerSpec& cis_spec() {
  static const testing::SwaggerSpec spec = [] {
    auto loaded = testing::SwaggerSpec::load(BOOTSTORM_API_SPECS "/vsphere/cis-8.0.2.json");
    if (!loaded) throw std::runtime_error(loaded.error().what());
    return *loaded;
  }();
  return spec;
}

// The body schema of a documented request (`path` exactly as in the spec).
json request_schema(const testing::SwaggerSpec& spec, const std::string& path, const std::string& method) {
  const json& op = spec.document()["paths"][path][method];
  for (const auto& p : op["parameters"]) {
    if (p.value("in", "") == "body") return p["schema"];
  }
  throw std::runtime_error(method + " " + path + " documents no request body");
}

// A guest.CustomizationSpec with cloud-init user data that writes the beacon settings (as the vSphere
// provider sends it).
json cloud_init_customization(const std::string& url, const std::string& token, const std::string& vm) {
  const std::string userdata =
      "#cloud-config\nwrite_files:\n  - path: /etc/bootstorm/beacon.env\n    content: |\n"
      "      BOOTSTORM_BEACON_URL=" +
      url + "\n      BOOTSTORM_BEACON_TOKEN=" + token + "\n      BOOTSTORM_VM_NAME=" + vm + "\n";
  return json{{"configuration_spec",
               {{"cloud_config",
                 {{"type", "CLOUDINIT"},
                  {"cloudinit",
                   {{"metadata", "instance-id: " + vm + "\nlocal-hostname: " + vm + "\n"},
                    {"userdata", userdata}}}}}}},
              {"global_DNS_settings", json::object()},
              {"interfaces", json::array()}};
}

// A lab spec with slow-enough boots that intermediate states (Tools not yet running) are observable.
model::LabSpec observable_spec() {
  auto spec = model::load_lab_spec("small");
  if (!spec) throw std::runtime_error(spec.error().what());
  auto& profile = spec->profiles.front();
  profile.phases[2].fixed_s = 0.6;  // services: 0.6 s before the agent can start
  profile.clone_overhead_s = 0.05;
  return *spec;
}

class VcenterFrontTest : public ::testing::Test {
 protected:
  void start(std::optional<model::LabSpec> spec = std::nullopt) {
    LabServerOptions options;
    if (spec) {
      options.spec = std::move(*spec);
    } else {
      options.spec = observable_spec();
    }
    auto server = LabServer::start(std::move(options));
    ASSERT_TRUE(server.has_value()) << server.error().what();
    lab_ = std::move(*server);
    client_ = make_client();
  }

  std::unique_ptr<http::Client> make_client() {
    http::ClientOptions options;
    options.base_url = lab_->endpoints().vcenter_url;
    options.tls.ca_data = lab_->endpoints().ca_pem;
    options.retry.max_attempts = 1;
    options.max_connections = 32;
    return std::make_unique<http::Client>(io_.get_executor(), options);
  }

  void TearDown() override {
    client_.reset();
    io_.restart();
    io_.poll();
    if (lab_) lab_->stop();
  }

  http::Response call(const std::string& method, const std::string& target, const std::string& body = "",
                      http::Headers headers = {}, bool with_session = true) {
    http::Request request;
    request.method = method;
    request.target = target;
    request.body = body;
    request.headers = std::move(headers);
    if (!body.empty()) request.headers.emplace_back("Content-Type", "application/json");
    if (with_session && !token_.empty()) request.headers.emplace_back("vmware-api-session-id", token_);
    request.timeout = std::chrono::seconds(20);
    std::optional<Expected<http::Response>> out;
    asio::co_spawn(
        io_, [&]() -> asio::awaitable<void> { out = co_await client_->request(request); }, asio::detached);
    io_.restart();
    while (!out) io_.run_one();
    EXPECT_TRUE(out->has_value()) << (out->has_value() ? "" : out->error().what());
    return out->has_value() ? std::move(**out) : http::Response{};
  }

  // Runs several requests concurrently; returns the responses in order.
  std::vector<http::Response> call_all(const std::vector<std::pair<std::string, std::string>>& targets_bodies,
                                       const std::string& method) {
    std::vector<std::optional<Expected<http::Response>>> out(targets_bodies.size());
    for (std::size_t i = 0; i < targets_bodies.size(); ++i) {
      http::Request request;
      request.method = method;
      request.target = targets_bodies[i].first;
      request.body = targets_bodies[i].second;
      request.headers = {{"vmware-api-session-id", token_}};
      if (!request.body.empty()) request.headers.emplace_back("Content-Type", "application/json");
      request.timeout = std::chrono::seconds(30);
      asio::co_spawn(
          io_, [&, i, request]() -> asio::awaitable<void> { out[i] = co_await client_->request(request); },
          asio::detached);
    }
    io_.restart();
    while (std::any_of(out.begin(), out.end(), [](const auto& o) { return !o.has_value(); })) io_.run_one();
    std::vector<http::Response> responses;
    for (auto& o : out) {
      EXPECT_TRUE(o->has_value());
      responses.push_back(o->has_value() ? std::move(**o) : http::Response{});
    }
    return responses;
  }

  void login() {
    auto r = call("POST", "/api/session", "",
                  {{"Authorization", "Basic " + bootstorm::base64_encode(lab_->endpoints().username + ":" +
                                                                         lab_->endpoints().password)}},
                  false);
    ASSERT_EQ(r.status, 201) << r.body;
    token_ = json::parse(r.body).get<std::string>();
  }

  // Validates a response body against the spec's documented schema for (path, method, status).
  void expect_conforms(const http::Response& r, const std::string& spec_path, const std::string& method,
                       const testing::SwaggerSpec& spec = vcenter_spec()) {
    const auto schema = spec.response_schema(spec_path, method, r.status);
    ASSERT_TRUE(schema.has_value()) << method << " " << spec_path << " does not document status " << r.status
                                    << ": " << r.body;
    if (schema->is_null()) {
      EXPECT_TRUE(r.body.empty()) << r.body;
      return;
    }
    const json body = json::parse(r.body, nullptr, false);
    ASSERT_FALSE(body.is_discarded()) << r.body;
    const auto problems = spec.validate_schema(body, *schema);
    EXPECT_TRUE(problems.empty()) << method << " " << spec_path << " " << r.status << ":\n"
                                  << testing::join(problems) << r.body;
  }

  void legacy_login() {
    auto r = call("POST", "/rest/com/vmware/cis/session", "",
                  {{"Authorization", "Basic " + bootstorm::base64_encode(lab_->endpoints().username + ":" +
                                                                         lab_->endpoints().password)}},
                  false);
    ASSERT_EQ(r.status, 200) << r.body;
    expect_conforms(r, "/rest/com/vmware/cis/session", "post", cis_spec());
    token_ = json::parse(r.body)["value"].get<std::string>();
  }

  // Serves POST /v1/ready on the test's io_context, recording each body.
  std::unique_ptr<http::Server> beacon_receiver(std::vector<json>& received) {
    http::ServerOptions options;
    auto server = std::make_unique<http::Server>(
        io_.get_executor(), options,
        [&received](http::ServerRequest& req) -> asio::awaitable<http::ServerResponse> {
          if (req.method == "POST" && req.path == "/v1/ready")
            received.push_back(json::parse(req.body, nullptr, false));
          http::ServerResponse ok;
          ok.body = R"({"status":"accepted"})";
          co_return ok;
        });
    EXPECT_TRUE(server->start().has_value());
    return server;
  }

  void run_until(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    io_.restart();
    while (!done() && std::chrono::steady_clock::now() < deadline) io_.run_for(std::chrono::milliseconds(20));
  }

  std::string golden_id() {
    auto r = call("GET", "/api/vcenter/vm?names=tiny-golden");
    EXPECT_EQ(r.status, 200);
    auto list = json::parse(r.body);
    EXPECT_EQ(list.size(), 1u);
    return list.empty() ? "" : list[0]["vm"].get<std::string>();
  }

  std::string host_id(const std::string& name) {
    auto r = call("GET", "/api/vcenter/host?names=" + name);
    auto list = json::parse(r.body);
    EXPECT_EQ(list.size(), 1u) << r.body;
    return list.empty() ? "" : list[0]["host"].get<std::string>();
  }

  std::string clone(const std::string& name, const std::string& host = "") {
    json body{{"source", golden_id()}, {"name", name}};
    if (!host.empty()) body["placement"] = json{{"host", host}};
    auto r = call("POST", "/api/vcenter/vm?action=clone", body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    expect_conforms(r, "/api/vcenter/vm?action=clone", "post");
    return r.status == 200 ? json::parse(r.body).get<std::string>() : "";
  }

  asio::io_context io_;
  std::unique_ptr<LabServer> lab_;
  std::unique_ptr<http::Client> client_;
  std::string token_;
};

TEST_F(VcenterFrontTest, SessionLifecycle) {
  start();
  auto anonymous = call("GET", "/api/vcenter/vm");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(json::parse(anonymous.body)["error_type"], "UNAUTHENTICATED");
  expect_conforms(anonymous, "/api/vcenter/vm", "get");
  auto wrong =
      call("POST", "/api/session", "",
           {{"Authorization", "Basic " + bootstorm::base64_encode("administrator@vsphere.local:nope")}});
  EXPECT_EQ(wrong.status, 401);
  expect_conforms(wrong, "/api/session", "post", session_spec());
  login();
  EXPECT_EQ(token_.size(), 32u);
  auto info = call("GET", "/api/session");
  EXPECT_EQ(info.status, 200);
  EXPECT_EQ(json::parse(info.body)["user"], lab_->endpoints().username);
  expect_conforms(info, "/api/session", "get", session_spec());
  auto bye = call("DELETE", "/api/session");
  EXPECT_EQ(bye.status, 204);
  EXPECT_EQ(call("GET", "/api/session").status, 401);
  EXPECT_EQ(call("GET", "/api/vcenter/vm").status, 401);
}

TEST_F(VcenterFrontTest, SessionCapAndIdleExpiry) {
  auto spec = observable_spec();
  spec.vcenter.max_sessions_per_user = 3;
  spec.vcenter.session_idle_timeout_s = 0.4;
  start(spec);
  for (int i = 0; i < 3; ++i) login();
  auto refused = call(
      "POST", "/api/session", "",
      {{"Authorization",
        "Basic " + bootstorm::base64_encode(lab_->endpoints().username + ":" + lab_->endpoints().password)}},
      false);
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(json::parse(refused.body)["error_type"], "SERVICE_UNAVAILABLE");
  expect_conforms(refused, "/api/session", "post", session_spec());
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(call("GET", "/api/vcenter/host").status, 401);  // idle too long
  login();                                                  // idle sessions no longer count against the cap
  EXPECT_EQ(call("GET", "/api/vcenter/host").status, 200);
}

TEST_F(VcenterFrontTest, CloneListFilterAndLimit) {
  auto spec = observable_spec();
  spec.vcenter.list_limit = 4;
  start(spec);
  login();
  const std::string h1 = host_id("host-01"), h2 = host_id("host-02");
  const auto a = clone("bs-a", h1);
  const auto b = clone("bs-b", h2);
  const auto c = clone("bs-c", h2);
  ASSERT_FALSE(a.empty());
  auto all = call("GET", "/api/vcenter/vm");
  EXPECT_EQ(all.status, 200);
  EXPECT_EQ(json::parse(all.body).size(), 4u);  // golden + 3
  expect_conforms(all, "/api/vcenter/vm", "get");
  auto two = call("GET", "/api/vcenter/vm?names=bs-a&names=bs-c");
  auto names = json::parse(two.body);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0]["vm"], a);
  EXPECT_EQ(names[1]["vm"], c);
  EXPECT_EQ(json::parse(call("GET", "/api/vcenter/vm?hosts=" + h2).body).size(), 2u);
  EXPECT_EQ(json::parse(call("GET", "/api/vcenter/vm?vms=" + b + "&power_states=POWERED_OFF").body).size(),
            1u);
  EXPECT_EQ(json::parse(call("GET", "/api/vcenter/vm?power_states=POWERED_ON").body).size(), 0u);
  auto bad_state = call("GET", "/api/vcenter/vm?power_states=ON");
  EXPECT_EQ(bad_state.status, 400);
  expect_conforms(bad_state, "/api/vcenter/vm", "get");
  // Duplicate name.
  auto dup =
      call("POST", "/api/vcenter/vm?action=clone", json{{"source", golden_id()}, {"name", "bs-a"}}.dump());
  EXPECT_EQ(dup.status, 400);
  EXPECT_EQ(json::parse(dup.body)["error_type"], "ALREADY_EXISTS");
  expect_conforms(dup, "/api/vcenter/vm?action=clone", "post");
  // Unknown source and unknown body fields.
  auto missing =
      call("POST", "/api/vcenter/vm?action=clone", json{{"source", "vm-424242"}, {"name", "x"}}.dump());
  EXPECT_EQ(missing.status, 404);
  expect_conforms(missing, "/api/vcenter/vm?action=clone", "post");
  EXPECT_EQ(call("POST", "/api/vcenter/vm?action=clone",
                 json{{"source", golden_id()}, {"name", "x"}, {"spec", json::object()}}.dump())
                .status,
            400);
  // Over the list limit (4): a fifth VM makes the unfiltered list fail, a filtered one still works.
  clone("bs-d", h1);
  auto too_many = call("GET", "/api/vcenter/vm");
  EXPECT_EQ(too_many.status, 500);
  EXPECT_EQ(json::parse(too_many.body)["error_type"], "UNABLE_TO_ALLOCATE_RESOURCE");
  expect_conforms(too_many, "/api/vcenter/vm", "get");
  EXPECT_EQ(call("GET", "/api/vcenter/vm?names=bs-d").status, 200);
}

TEST_F(VcenterFrontTest, PowerToolsGuestAndTruth) {
  start();
  login();
  const auto id = clone("bs-power", host_id("host-03"));
  auto info = call("GET", "/api/vcenter/vm/" + id);
  EXPECT_EQ(info.status, 200);
  expect_conforms(info, "/api/vcenter/vm/{vm}", "get");
  EXPECT_EQ(json::parse(info.body)["power_state"], "POWERED_OFF");
  auto identity_off = call("GET", "/api/vcenter/vm/" + id + "/guest/identity");
  EXPECT_EQ(identity_off.status, 503);
  expect_conforms(identity_off, "/api/vcenter/vm/{vm}/guest/identity", "get");

  auto start_call = call("POST", "/api/vcenter/vm/" + id + "/power?action=start");
  EXPECT_EQ(start_call.status, 204) << start_call.body;
  expect_conforms(start_call, "/api/vcenter/vm/{vm}/power?action=start", "post");
  // The call blocked until the VM was on.
  auto power = call("GET", "/api/vcenter/vm/" + id + "/power");
  EXPECT_EQ(json::parse(power.body)["state"], "POWERED_ON");
  expect_conforms(power, "/api/vcenter/vm/{vm}/power", "get");
  auto again = call("POST", "/api/vcenter/vm/" + id + "/power?action=start");
  EXPECT_EQ(again.status, 400);
  EXPECT_EQ(json::parse(again.body)["error_type"], "ALREADY_IN_DESIRED_STATE");
  // Tools not yet running (the services phase takes 0.6 s): guest calls answer 503.
  auto tools = call("GET", "/api/vcenter/vm/" + id + "/tools");
  EXPECT_EQ(json::parse(tools.body)["run_state"], "NOT_RUNNING");
  expect_conforms(tools, "/api/vcenter/vm/{vm}/tools", "get");
  auto early = call("GET", "/api/vcenter/vm/" + id + "/guest/networking/interfaces");
  EXPECT_EQ(early.status, 503);
  EXPECT_EQ(json::parse(early.body)["error_type"], "SERVICE_UNAVAILABLE");
  expect_conforms(early, "/api/vcenter/vm/{vm}/guest/networking/interfaces", "get");
  // Poll until the guest reports an IP.
  http::Response identity;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    identity = call("GET", "/api/vcenter/vm/" + id + "/guest/identity");
  } while ((identity.status != 200 || !json::parse(identity.body).contains("ip_address")) &&
           std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(identity.status, 200) << identity.body;
  expect_conforms(identity, "/api/vcenter/vm/{vm}/guest/identity", "get");
  EXPECT_EQ(json::parse(identity.body)["family"], "LINUX");
  auto interfaces = call("GET", "/api/vcenter/vm/" + id + "/guest/networking/interfaces");
  EXPECT_EQ(interfaces.status, 200);
  expect_conforms(interfaces, "/api/vcenter/vm/{vm}/guest/networking/interfaces", "get");
  EXPECT_EQ(json::parse(interfaces.body)[0]["ip"]["ip_addresses"][0]["ip_address"],
            json::parse(identity.body)["ip_address"]);
  tools = call("GET", "/api/vcenter/vm/" + id + "/tools");
  EXPECT_EQ(json::parse(tools.body)["run_state"], "RUNNING");

  // Ground truth: every milestone, in order, after startReceived.
  auto truth = json::parse(call("GET", "/_lab/truth", "", {}, false).body);
  ASSERT_EQ(truth["vms"].size(), 1u);
  const auto& t = truth["vms"][0];
  EXPECT_EQ(t["id"], id);
  EXPECT_EQ(t["name"], "bs-power");
  const double start_received = t["startReceived"];
  double previous = start_received;
  for (const char* m : {"running", "guest_agent", "ip_assigned"}) {
    ASSERT_TRUE(t["milestones"].contains(m)) << m;
    EXPECT_GE(t["milestones"][m].get<double>(), previous) << m;
    previous = t["milestones"][m];
  }
  // The agent cannot have started before the 0.6 s services phase.
  EXPECT_GT(t["milestones"]["guest_agent"].get<double>() - start_received, 0.6);

  // Delete needs power off.
  auto busy_delete = call("DELETE", "/api/vcenter/vm/" + id);
  EXPECT_EQ(busy_delete.status, 400);
  expect_conforms(busy_delete, "/api/vcenter/vm/{vm}", "delete");
  auto stop = call("POST", "/api/vcenter/vm/" + id + "/power?action=stop");
  EXPECT_EQ(stop.status, 204);
  auto stop_again = call("POST", "/api/vcenter/vm/" + id + "/power?action=stop");
  EXPECT_EQ(stop_again.status, 400);
  expect_conforms(stop_again, "/api/vcenter/vm/{vm}/power?action=stop", "post");
  auto removed = call("DELETE", "/api/vcenter/vm/" + id);
  EXPECT_EQ(removed.status, 204);
  expect_conforms(removed, "/api/vcenter/vm/{vm}", "delete");
  auto gone = call("GET", "/api/vcenter/vm/" + id);
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(json::parse(gone.body)["error_type"], "NOT_FOUND");
  expect_conforms(gone, "/api/vcenter/vm/{vm}", "get");
}

TEST_F(VcenterFrontTest, InstantCloneNeedsARunningSource) {
  start();
  login();
  auto refused = call("POST", "/api/vcenter/vm?action=instant-clone",
                      json{{"source", golden_id()}, {"name", "ic"}}.dump());
  EXPECT_EQ(refused.status, 400);
  expect_conforms(refused, "/api/vcenter/vm?action=instant-clone", "post");
  ASSERT_EQ(call("POST", "/api/vcenter/vm/" + golden_id() + "/power?action=start").status, 204);
  auto made = call("POST", "/api/vcenter/vm?action=instant-clone",
                   json{{"source", golden_id()}, {"name", "ic"}}.dump());
  ASSERT_EQ(made.status, 200) << made.body;
  expect_conforms(made, "/api/vcenter/vm?action=instant-clone", "post");
  const auto id = json::parse(made.body).get<std::string>();
  EXPECT_EQ(json::parse(call("GET", "/api/vcenter/vm/" + id + "/power").body)["state"], "POWERED_ON");
}

TEST_F(VcenterFrontTest, InventoryListsConformToTheSpec) {
  start(model::load_lab_spec("tolly-2024").value());
  login();
  auto hosts = call("GET", "/api/vcenter/host");
  expect_conforms(hosts, "/api/vcenter/host", "get");
  const auto host_list = json::parse(hosts.body);
  EXPECT_EQ(host_list.size(), 5u);  // r740-01..04 + r7625-01; the R7615s back kube nodes only
  for (const auto& h : host_list)
    EXPECT_EQ(h["name"].get<std::string>().rfind("r7615", 0), std::string::npos);
  auto clusters = call("GET", "/api/vcenter/cluster");
  expect_conforms(clusters, "/api/vcenter/cluster", "get");
  const auto cluster_list = json::parse(clusters.body);
  ASSERT_EQ(cluster_list.size(), 2u);
  EXPECT_EQ(
      json::parse(
          call("GET", "/api/vcenter/host?clusters=" + cluster_list[0]["cluster"].get<std::string>()).body)
          .size(),
      4u);
  EXPECT_EQ(json::parse(call("GET", "/api/vcenter/host?names=r7625-01&names=r740-02").body).size(), 2u);
  auto datastores = call("GET", "/api/vcenter/datastore");
  expect_conforms(datastores, "/api/vcenter/datastore", "get");
  EXPECT_EQ(json::parse(datastores.body)[0]["name"], "tolly-aff-ds01");
  auto folders = call("GET", "/api/vcenter/folder?type=VIRTUAL_MACHINE");
  expect_conforms(folders, "/api/vcenter/folder", "get");
  bool has_bootstorm = false;
  for (const auto& f : json::parse(folders.body)) has_bootstorm = has_bootstorm || f["name"] == "bootstorm";
  EXPECT_TRUE(has_bootstorm);
  auto pools = call("GET", "/api/vcenter/resource-pool");
  expect_conforms(pools, "/api/vcenter/resource-pool", "get");
  EXPECT_EQ(json::parse(pools.body).size(), 2u);
  auto dcs = call("GET", "/api/vcenter/datacenter");
  expect_conforms(dcs, "/api/vcenter/datacenter", "get");
  auto golden = call("GET", "/api/vcenter/vm?names=win10-golden");
  const auto vm = json::parse(golden.body);
  ASSERT_EQ(vm.size(), 1u);
  auto golden_info = call("GET", "/api/vcenter/vm/" + vm[0]["vm"].get<std::string>());
  expect_conforms(golden_info, "/api/vcenter/vm/{vm}", "get");
  EXPECT_EQ(json::parse(golden_info.body)["guest_OS"], "WINDOWS_9_64");
}

TEST_F(VcenterFrontTest, FaultsAreSwitchableAtRunTime) {
  start();
  login();
  auto set = call("POST", "/_lab/faults", R"({"errorRate": 1.0, "errorStatus": 503})", {}, false);
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(json::parse(set.body)["errorRate"], 1.0);
  auto failed = call("GET", "/api/vcenter/host");
  EXPECT_EQ(failed.status, 503);
  EXPECT_EQ(json::parse(failed.body)["error_type"], "SERVICE_UNAVAILABLE");
  expect_conforms(failed, "/api/vcenter/host", "get");
  ASSERT_EQ(call("POST", "/_lab/faults", R"({"errorRate": 0, "latencyMs": 150})", {}, false).status, 200);
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(call("GET", "/api/vcenter/host").status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(150));
  ASSERT_EQ(call("POST", "/_lab/faults", R"({"latencyMs": 0, "expireSessions": true})", {}, false).status,
            200);
  EXPECT_EQ(call("GET", "/api/vcenter/host").status, 401);
  login();
  EXPECT_EQ(call("GET", "/api/vcenter/host").status, 200);
  EXPECT_EQ(call("POST", "/_lab/faults", R"({"bogus": 1})", {}, false).status, 400);
  auto stats = json::parse(call("GET", "/_lab/stats", "", {}, false).body);
  EXPECT_GE(stats["faultsInjected"].get<int>(), 2);
  EXPECT_GE(stats["requestsTotal"].get<int>(), 6);
}

TEST_F(VcenterFrontTest, HostCostUnitsQueueOperations) {
  auto spec = observable_spec();
  spec.vcenter.host_cost_units = 4;  // one clone (cost 4) at a time per host
  spec.profiles.front().clone_overhead_s = 0.3;
  start(spec);
  login();
  const std::string h1 = host_id("host-01");
  const std::string golden = golden_id();
  std::vector<std::pair<std::string, std::string>> requests;
  for (int i = 0; i < 3; ++i) {
    requests.emplace_back(
        "/api/vcenter/vm?action=clone",
        json{{"source", golden}, {"name", "q-" + std::to_string(i)}, {"placement", {{"host", h1}}}}.dump());
  }
  const auto before = std::chrono::steady_clock::now();
  const auto responses = call_all(requests, "POST");
  const auto elapsed = std::chrono::steady_clock::now() - before;
  for (const auto& r : responses) EXPECT_EQ(r.status, 200) << r.body;
  // Serialised by the host's cost units: at least 3 x 0.3 s.
  EXPECT_GE(elapsed, std::chrono::milliseconds(850));
  auto stats = json::parse(call("GET", "/_lab/stats", "", {}, false).body);
  EXPECT_GE(stats["peakOperationsQueued"].get<int>(), 1);
  EXPECT_EQ(stats["operationsRunning"].get<int>(), 0);
  EXPECT_EQ(stats["byRoute"]["POST /api/vcenter/vm?action=clone"].get<int>(), 3);
}

TEST_F(VcenterFrontTest, GuestCallsTheBeaconFromGuestinfo) {
  start();
  login();
  // A plain-HTTP beacon receiver on the test's io_context.
  std::vector<json> received;
  http::ServerOptions options;
  http::Server receiver(io_.get_executor(), options,
                        [&](http::ServerRequest& req) -> asio::awaitable<http::ServerResponse> {
                          if (req.method == "POST" && req.path == "/v1/ready")
                            received.push_back(json::parse(req.body, nullptr, false));
                          http::ServerResponse ok;
                          ok.body = R"({"status":"accepted"})";
                          co_return ok;
                        });
  ASSERT_TRUE(receiver.start().has_value());
  const auto id = clone("bs-beacon");
  auto put = call("PUT", "/_lab/vms/" + id + "/guestinfo",
                  json{{"guestinfo.bootstorm.url", receiver.base_url() + "/v1/ready"},
                       {"guestinfo.bootstorm.token", "abc123"}}
                      .dump(),
                  {}, false);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(json::parse(put.body)["guestinfo.bootstorm.token"], "abc123");
  ASSERT_EQ(call("POST", "/api/vcenter/vm/" + id + "/power?action=start").status, 204);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  io_.restart();
  while (received.empty() && std::chrono::steady_clock::now() < deadline)
    io_.run_for(std::chrono::milliseconds(20));
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0]["vm"], "bs-beacon");
  EXPECT_EQ(received[0]["token"], "abc123");
  EXPECT_TRUE(received[0].contains("ip"));
  receiver.stop_now();
  EXPECT_EQ(lab_->beacon_stats().succeeded, 1u);
}

// The legacy /rest dialect of a vCenter before 7.0U2 (`legacyRest: true`): no /api, value-wrapped results,
// {"spec": ...} request bodies, filter.<name>.<n> list filters, path-style power calls and the legacy error
// shape — every response validated against the /rest operations of vcenter-7.0.3.json and cis-8.0.2.json.
TEST_F(VcenterFrontTest, LegacyRestDialectConformsToTheSpec) {
  auto spec = observable_spec();
  spec.vcenter.legacy_rest = true;
  spec.vcenter.list_limit = 3;
  start(spec);
  EXPECT_EQ(call("POST", "/api/session", "", {{"Authorization", "Basic eDp5"}}, false).status, 404);
  auto anonymous = call("GET", "/rest/vcenter/vm");
  ASSERT_EQ(anonymous.status, 401);
  EXPECT_EQ(json::parse(anonymous.body)["type"], "com.vmware.vapi.std.errors.unauthenticated");
  expect_conforms(anonymous, "/rest/vcenter/vm", "get");
  legacy_login();
  auto info = call("POST", "/rest/com/vmware/cis/session?~action=get");
  ASSERT_EQ(info.status, 200) << info.body;
  EXPECT_EQ(json::parse(info.body)["value"]["user"], lab_->endpoints().username);
  expect_conforms(info, "/rest/com/vmware/cis/session?~action=get", "post", cis_spec());

  auto golden = call("GET", "/rest/vcenter/vm?filter.names.1=tiny-golden");
  ASSERT_EQ(golden.status, 200) << golden.body;
  expect_conforms(golden, "/rest/vcenter/vm", "get");
  ASSERT_EQ(json::parse(golden.body)["value"].size(), 1u);
  const std::string source = json::parse(golden.body)["value"][0]["vm"];
  auto hosts = call("GET", "/rest/vcenter/host?filter.names.1=host-01&filter.names.2=host-02");
  ASSERT_EQ(hosts.status, 200);
  expect_conforms(hosts, "/rest/vcenter/host", "get");
  EXPECT_EQ(json::parse(hosts.body)["value"].size(), 2u);
  const std::string host = json::parse(hosts.body)["value"][0]["host"];
  auto stores = call("GET", "/rest/vcenter/datastore");
  ASSERT_EQ(stores.status, 200);
  expect_conforms(stores, "/rest/vcenter/datastore", "get");

  // Clone: the spec travels as {"spec": ...}; ?action= and the generic ~action= both select the operation.
  const json clone_body{
      {"spec", {{"source", source}, {"name", "bs-legacy-a"}, {"placement", {{"host", host}}}}}};
  EXPECT_TRUE(vcenter_spec()
                  .validate_schema(clone_body,
                                   request_schema(vcenter_spec(), "/rest/vcenter/vm?action=clone", "post"))
                  .empty());
  auto cloned = call("POST", "/rest/vcenter/vm?action=clone", clone_body.dump());
  ASSERT_EQ(cloned.status, 200) << cloned.body;
  expect_conforms(cloned, "/rest/vcenter/vm?action=clone", "post");
  const std::string a = json::parse(cloned.body)["value"];
  auto second = call("POST", "/rest/vcenter/vm?~action=clone",
                     json{{"spec", {{"source", source}, {"name", "bs-legacy-b"}}}}.dump());
  ASSERT_EQ(second.status, 200) << second.body;
  const std::string b = json::parse(second.body)["value"];
  auto unwrapped =
      call("POST", "/rest/vcenter/vm?action=clone", json{{"source", source}, {"name", "bs-x"}}.dump());
  EXPECT_EQ(unwrapped.status, 400);
  EXPECT_EQ(json::parse(unwrapped.body)["type"], "com.vmware.vapi.std.errors.invalid_argument");
  auto duplicate = call("POST", "/rest/vcenter/vm?action=clone",
                        json{{"spec", {{"source", source}, {"name", "bs-legacy-a"}}}}.dump());
  EXPECT_EQ(duplicate.status, 400);
  EXPECT_EQ(json::parse(duplicate.body)["type"], "com.vmware.vapi.std.errors.already_exists");
  expect_conforms(duplicate, "/rest/vcenter/vm?action=clone", "post");

  // Lists: numbered and bare filter spellings; more than listLimit matches -> 400
  // unable_to_allocate_resource.
  auto both = call("GET", "/rest/vcenter/vm?filter.names.1=bs-legacy-a&filter.names.2=bs-legacy-b");
  ASSERT_EQ(both.status, 200);
  EXPECT_EQ(json::parse(both.body)["value"].size(), 2u);
  auto bare = call("GET", "/rest/vcenter/vm?filter.names=bs-legacy-b&filter.power_states.1=POWERED_OFF");
  ASSERT_EQ(bare.status, 200);
  ASSERT_EQ(json::parse(bare.body)["value"].size(), 1u);
  EXPECT_EQ(json::parse(bare.body)["value"][0]["vm"], b);
  ASSERT_EQ(call("POST", "/rest/vcenter/vm?action=clone",
                 json{{"spec", {{"source", source}, {"name", "bs-legacy-c"}}}}.dump())
                .status,
            200);
  auto too_many = call("GET", "/rest/vcenter/vm");
  EXPECT_EQ(too_many.status, 400);
  EXPECT_EQ(json::parse(too_many.body)["type"], "com.vmware.vapi.std.errors.unable_to_allocate_resource");
  expect_conforms(too_many, "/rest/vcenter/vm", "get");

  // VM info: maps as [{key, value}].
  auto vm = call("GET", "/rest/vcenter/vm/" + a);
  ASSERT_EQ(vm.status, 200);
  expect_conforms(vm, "/rest/vcenter/vm/{vm}", "get");
  const json value = json::parse(vm.body)["value"];
  ASSERT_TRUE(value["disks"].is_array());
  EXPECT_EQ(value["disks"][0]["key"], "2000");
  EXPECT_EQ(value["name"], "bs-legacy-a");
  auto missing = call("GET", "/rest/vcenter/vm/vm-404404");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(json::parse(missing.body)["type"], "com.vmware.vapi.std.errors.not_found");
  expect_conforms(missing, "/rest/vcenter/vm/{vm}", "get");

  // Power: path-style actions, 200 with no body; the legacy error shape for ALREADY_IN_DESIRED_STATE.
  auto off = call("GET", "/rest/vcenter/vm/" + a + "/power");
  ASSERT_EQ(off.status, 200);
  expect_conforms(off, "/rest/vcenter/vm/{vm}/power", "get");
  EXPECT_EQ(json::parse(off.body)["value"]["state"], "POWERED_OFF");
  auto identity_off = call("GET", "/rest/vcenter/vm/" + a + "/guest/identity");
  EXPECT_EQ(identity_off.status, 503);
  expect_conforms(identity_off, "/rest/vcenter/vm/{vm}/guest/identity", "get");
  auto start_a = call("POST", "/rest/vcenter/vm/" + a + "/power/start");
  ASSERT_EQ(start_a.status, 200) << start_a.body;
  EXPECT_TRUE(start_a.body.empty());
  auto again = call("POST", "/rest/vcenter/vm/" + a + "/power/start");
  EXPECT_EQ(again.status, 400);
  EXPECT_EQ(json::parse(again.body)["type"], "com.vmware.vapi.std.errors.already_in_desired_state");
  expect_conforms(again, "/rest/vcenter/vm/{vm}/power/start", "post");
  auto on = call("GET", "/rest/vcenter/vm/" + a + "/power");
  EXPECT_EQ(json::parse(on.body)["value"]["state"], "POWERED_ON");
  auto tools = call("GET", "/rest/vcenter/vm/" + a + "/tools");
  ASSERT_EQ(tools.status, 200);
  expect_conforms(tools, "/rest/vcenter/vm/{vm}/tools", "get");
  auto busy_delete = call("DELETE", "/rest/vcenter/vm/" + a);
  EXPECT_EQ(busy_delete.status, 400);
  expect_conforms(busy_delete, "/rest/vcenter/vm/{vm}", "delete");
  ASSERT_EQ(call("POST", "/rest/vcenter/vm/" + a + "/power/stop").status, 200);
  auto deleted = call("DELETE", "/rest/vcenter/vm/" + a);
  EXPECT_EQ(deleted.status, 200);
  EXPECT_TRUE(deleted.body.empty());
  EXPECT_EQ(call("DELETE", "/rest/com/vmware/cis/session").status, 200);
  EXPECT_EQ(call("GET", "/rest/vcenter/vm/" + b).status, 401);
}

// A lab in /api mode (vSphere 7.0U3) serves the deprecated /rest paths too.
TEST_F(VcenterFrontTest, ApiLabAlsoServesTheDeprecatedRestPaths) {
  start();
  login();
  auto list = call("GET", "/rest/vcenter/vm?filter.names.1=tiny-golden");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(json::parse(list.body)["value"][0]["name"], "tiny-golden");
  EXPECT_EQ(call("GET", "/api/vcenter/vm?names=tiny-golden").status, 200);
}

// PUT .../guest/customization: the vCenter REST way to hand data to a guest. A cloud-init customization is
// applied at the next power-on; the simulated guest takes the beacon settings from its user data and calls
// the beacon at logon. Request and response bodies are validated against the spec.
TEST_F(VcenterFrontTest, GuestCustomizationHandsTheBeaconToTheGuest) {
  start();
  login();
  std::vector<json> received;
  auto receiver = beacon_receiver(received);
  const auto id = clone("bs-custom");
  const std::string path = "/api/vcenter/vm/" + id + "/guest/customization";
  auto idle = call("GET", path);
  ASSERT_EQ(idle.status, 200);
  expect_conforms(idle, "/api/vcenter/vm/{vm}/guest/customization", "get");
  EXPECT_EQ(json::parse(idle.body)["status"], "IDLE");

  const json set{
      {"spec", cloud_init_customization(receiver->base_url() + "/v1/ready", "tok-42", "bs-custom")}};
  const auto problems = vcenter_spec().validate_schema(
      set, request_schema(vcenter_spec(), "/api/vcenter/vm/{vm}/guest/customization", "put"));
  EXPECT_TRUE(problems.empty()) << testing::join(problems);
  // Invalid specs are refused: two configuration kinds, a named spec the lab does not have, a bad type.
  json two = set;
  two["spec"]["configuration_spec"]["linux_config"] = {{"hostname", {{"type", "VIRTUAL_MACHINE"}}},
                                                       {"domain", "lab"}};
  auto refused = call("PUT", path, two.dump());
  EXPECT_EQ(refused.status, 400);
  expect_conforms(refused, "/api/vcenter/vm/{vm}/guest/customization", "put");
  auto named = call("PUT", path, json{{"name", "no-such-spec"}}.dump());
  EXPECT_EQ(named.status, 404);
  expect_conforms(named, "/api/vcenter/vm/{vm}/guest/customization", "put");
  json bad_type = set;
  bad_type["spec"]["configuration_spec"]["cloud_config"]["type"] = "IGNITION";
  EXPECT_EQ(call("PUT", path, bad_type.dump()).status, 400);

  auto put = call("PUT", path, set.dump());
  ASSERT_EQ(put.status, 204) << put.body;
  expect_conforms(put, "/api/vcenter/vm/{vm}/guest/customization", "put");
  auto pending = call("GET", path);
  EXPECT_EQ(json::parse(pending.body)["status"], "PENDING");
  expect_conforms(pending, "/api/vcenter/vm/{vm}/guest/customization", "get");

  ASSERT_EQ(call("POST", "/api/vcenter/vm/" + id + "/power?action=start").status, 204);
  auto on = call("PUT", path, set.dump());
  EXPECT_EQ(on.status, 400);
  EXPECT_EQ(json::parse(on.body)["error_type"], "NOT_ALLOWED_IN_CURRENT_STATE");
  expect_conforms(on, "/api/vcenter/vm/{vm}/guest/customization", "put");
  run_until([&] { return !received.empty(); });
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0]["vm"], "bs-custom");
  EXPECT_EQ(received[0]["token"], "tok-42");
  auto done = call("GET", path);
  ASSERT_EQ(done.status, 200);
  expect_conforms(done, "/api/vcenter/vm/{vm}/guest/customization", "get");
  EXPECT_EQ(json::parse(done.body)["status"], "SUCCEEDED");
  EXPECT_TRUE(json::parse(done.body).contains("end_time"));
  auto guestinfo = call("GET", "/_lab/vms/" + id + "/guestinfo", "", {}, false);
  EXPECT_EQ(json::parse(guestinfo.body)["guestinfo.bootstorm.token"], "tok-42");
  // The beacon came from the customization, not from guestinfo set beforehand.
  auto truth = json::parse(call("GET", "/_lab/truth", "", {}, false).body);
  ASSERT_EQ(truth["vms"].size(), 1u);
  EXPECT_TRUE(truth["vms"][0]["milestones"].contains("beacon"));
  receiver->stop_now();
}

// The same through /rest: the set spec travels wrapped as {"spec": SetSpec}.
TEST_F(VcenterFrontTest, LegacyGuestCustomizationIsSpecWrapped) {
  auto spec = observable_spec();
  spec.vcenter.legacy_rest = true;
  start(spec);
  legacy_login();
  std::vector<json> received;
  auto receiver = beacon_receiver(received);
  auto golden = json::parse(call("GET", "/rest/vcenter/vm?filter.names.1=tiny-golden").body);
  auto cloned =
      call("POST", "/rest/vcenter/vm?action=clone",
           json{{"spec", {{"source", golden["value"][0]["vm"]}, {"name", "bs-rest-custom"}}}}.dump());
  ASSERT_EQ(cloned.status, 200) << cloned.body;
  const std::string id = json::parse(cloned.body)["value"];
  const json set{
      {"spec",
       {{"spec", cloud_init_customization(receiver->base_url() + "/v1/ready", "tok-7", "bs-rest-custom")}}}};
  const auto problems = vcenter_spec().validate_schema(
      set, request_schema(vcenter_spec(), "/rest/vcenter/vm/{vm}/guest/customization", "put"));
  EXPECT_TRUE(problems.empty()) << testing::join(problems);
  auto put = call("PUT", "/rest/vcenter/vm/" + id + "/guest/customization", set.dump());
  ASSERT_EQ(put.status, 200) << put.body;
  auto pending = call("GET", "/rest/vcenter/vm/" + id + "/guest/customization");
  expect_conforms(pending, "/rest/vcenter/vm/{vm}/guest/customization", "get");
  EXPECT_EQ(json::parse(pending.body)["value"]["status"], "PENDING");
  ASSERT_EQ(call("POST", "/rest/vcenter/vm/" + id + "/power/start").status, 200);
  run_until([&] { return !received.empty(); });
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0]["token"], "tok-7");
  receiver->stop_now();
}

// A Linux (cloud-init) customization on a Windows guest fails in the guest, as on vSphere, and hands nothing.
TEST_F(VcenterFrontTest, CloudInitCustomizationOfAWindowsGuestFails) {
  auto spec = observable_spec();
  for (auto& p : spec.profiles) p.guest_os = "WINDOWS_9_64";
  start(spec);
  login();
  std::vector<json> received;
  auto receiver = beacon_receiver(received);
  const auto id = clone("bs-win");
  const std::string path = "/api/vcenter/vm/" + id + "/guest/customization";
  ASSERT_EQ(
      call("PUT", path,
           json{{"spec", cloud_init_customization(receiver->base_url() + "/v1/ready", "t", "bs-win")}}.dump())
          .status,
      204);
  ASSERT_EQ(call("POST", "/api/vcenter/vm/" + id + "/power?action=start").status, 204);
  auto failed = call("GET", path);
  expect_conforms(failed, "/api/vcenter/vm/{vm}/guest/customization", "get");
  EXPECT_EQ(json::parse(failed.body)["status"], "FAILED");
  run_until([&] { return !received.empty(); }, std::chrono::seconds(3));
  EXPECT_TRUE(received.empty());
  receiver->stop_now();
}

TEST_F(VcenterFrontTest, StateDirectoryFollowsTheContract) {
  start();
  const test_support::ScratchDir dir("lab-state");
  ASSERT_TRUE(lab_->write_state(dir.string()).has_value());
  std::ifstream in(dir / "endpoints.json");
  const auto endpoints = json::parse(in);
  EXPECT_EQ(endpoints["vcenter"], lab_->endpoints().vcenter_url);
  EXPECT_EQ(endpoints["kube"], lab_->endpoints().kube_url);
  EXPECT_EQ(endpoints["username"], "administrator@vsphere.local");
  EXPECT_TRUE(std::filesystem::exists(endpoints["caFile"].get<std::string>()));
  std::ifstream kubeconfig(endpoints["kubeconfig"].get<std::string>());
  const std::string text((std::istreambuf_iterator<char>(kubeconfig)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("server: " + lab_->endpoints().kube_url), std::string::npos);
  EXPECT_NE(text.find("token: " + lab_->endpoints().kube_token), std::string::npos);
  EXPECT_NE(text.find("certificate-authority-data: "), std::string::npos);
  // The kube port serves the Kubernetes front over the same CA: the kubeconfig's token is accepted, a request
  // without it gets a 401 Status.
  http::ClientOptions kube_options;
  kube_options.base_url = lab_->endpoints().kube_url;
  kube_options.tls.ca_data = lab_->endpoints().ca_pem;
  client_ = std::make_unique<http::Client>(io_.get_executor(), kube_options);
  auto anonymous = call("GET", "/api", "", {}, false);
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(json::parse(anonymous.body)["kind"], "Status");
  auto r = call("GET", "/api", "", {{"Authorization", "Bearer " + lab_->endpoints().kube_token}}, false);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["kind"], "APIVersions");
}

TEST_F(VcenterFrontTest, CertificateIsVerifiedAgainstTheLabCa) {
  start();
  http::ClientOptions options;
  options.base_url = lab_->endpoints().vcenter_url;
  options.retry.max_attempts = 1;  // system trust store only: the lab's CA is unknown there
  client_ = std::make_unique<http::Client>(io_.get_executor(), options);
  http::Request request;
  request.target = "/api/vcenter/vm";
  std::optional<Expected<http::Response>> out;
  asio::co_spawn(
      io_, [&]() -> asio::awaitable<void> { out = co_await client_->request(request); }, asio::detached);
  io_.restart();
  while (!out) io_.run_one();
  ASSERT_FALSE(out->has_value());
  EXPECT_EQ(out->error().kind, ErrorKind::tls);
}

}  // namespace
}  // namespace bootstorm::sim
