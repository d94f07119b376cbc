#pragma once
// The vSphere providers against the lab simulator's vCenter front over HTTPS on loopback (real sockets, port
// 0, certificate verification against the lab's CA): the lab, a provider of kind "vsphere" speaking the API
// the test chooses (settings.api), and a small storm checked against the simulator's ground truth
// within each milestone's stated resolution. Shared by the REST tests (vsphere_lab_test.cpp) and the vim25
// tests (vim25_lab_test.cpp).
#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cmath>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "orchestrator/beacon/listener.hpp"
#include "protocol/http/client.hpp"
#include "providers/vsphere/platform/api_choice.hpp"
#include "providers/vsphere/settings.hpp"
#include "simulator/lab/lab_server.hpp"
#include "tests/support/run_task.hpp"

namespace bootstorm::testing::vsphere_lab {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using json = nlohmann::json;

inline constexpr const char* kRun = "5eed01";

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

  // The API the provider speaks (platform.api): each test file sets its own.
  std::string api = "rest";

  void start_lab(std::optional<sim::model::LabSpec> spec = std::nullopt) {
    sim::LabServerOptions options;
    options.lab = "small";
    options.spec = std::move(spec);
    auto lab = sim::LabServer::start(options);
    ASSERT_TRUE(lab) << lab.error().what();
    lab_ = std::move(*lab);
    config.kind = "vsphere";
    settings.api = api;
    config.endpoint = lab_->endpoints().vcenter_url;
    config.simulated = true;
    config.username = lab_->endpoints().username;
    config.password = lab_->endpoints().password;
    config.ca_data = lab_->endpoints().ca_pem;
    settings.vm = "tiny-golden";
    settings.clone = "full";
    config.run_id = kRun;
    config.requests_per_second = 50;
    config.max_concurrent = 16;
    config.request_timeout = 30s;
  }

  // `config` with `settings` in it, as the engine hands a provider its plan.
  const api::ProviderConfig& provider_config() {
    config.settings = api::make_settings(settings);
    return config;
  }

  std::unique_ptr<api::Provider> make_provider() {
    auto p = api::create_provider("vsphere", io.get_executor(), provider_config());
    EXPECT_NE(p, nullptr);
    return p;
  }

  template <class T>
  T run(asio::awaitable<T> aw) {
    return bootstorm::testing::run_task(io, std::move(aw));
  }
  void run_void(asio::awaitable<void> aw) { bootstorm::testing::run_task(io, std::move(aw)); }

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

  // Provisions `count` VMs over host-01/host-02, starts them all at once, observes them and checks every
  // observed milestone against the lab's truth within its stated resolution; then deletes them. With a
  // beacon listener, also waits until every VM called it (`beacons_received` counts the calls). Returns the
  // truth per VM name.
  std::map<std::string, json> storm_against_truth(api::Provider& p, int count,
                                                  beacon::Listener* listener = nullptr,
                                                  std::function<std::size_t()> beacons_received = {}) {
    std::map<std::string, json> truth_by_name;
    if (!run(p.connect())) {
      ADD_FAILURE() << "connect failed";
      return truth_by_name;
    }
    const std::vector<std::string> hosts = {"host-01", "host-02"};
    auto inventory = run(p.check_inventory(api::InventoryRequest{hosts, static_cast<std::size_t>(count)}));
    EXPECT_TRUE(inventory) << (inventory ? "" : inventory.error().what());
    std::vector<api::VmHandle> vms;
    for (int i = 1; i <= count; ++i) {
      auto h = run(p.provision(spec(i, hosts[static_cast<std::size_t>(i) % 2])));
      if (!h) {
        ADD_FAILURE() << h.error().what();
        return truth_by_name;
      }
      EXPECT_TRUE(run(p.wait_startable(*h, 30s)));
      if (listener) listener->expect(h->name, h->id);
      vms.push_back(*h);
    }
    EXPECT_TRUE(run(p.prepare_storm(vms.size())));

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
            auto s = co_await p.start(v);
            EXPECT_TRUE(s) << (s ? "" : s.error().what());
            if (s) started[v.name] = *s;
            --pending_starts;
          },
          asio::detached);
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          co_await p.observe(
              vms, [&](api::MilestoneEvent e) { seen[e.vm][e.milestone] = e; }, stop);
          // The guests call the beacon at logon, which may come after the last observed milestone.
          asio::steady_timer wait(co_await asio::this_coro::executor);
          while (beacons_received && beacons_received() < vms.size() && !stop.cancelled()) {
            wait.expires_after(20ms);
            co_await wait.async_wait(asio::as_tuple(asio::use_awaitable));
          }
          guard.cancel();
        },
        asio::detached);
    io.restart();
    io.run();
    EXPECT_EQ(pending_starts, 0);

    auto truth = lab_call("GET", "/_lab/truth");
    for (auto& v : truth["vms"]) truth_by_name[v["name"]] = v;
    constexpr double kClockSlack = 0.005;  // wall/steady conversion and the lab's clock reads
    for (auto& v : vms) {
      if (!truth_by_name.count(v.name) || !started.count(v.name)) {
        ADD_FAILURE() << v.name << " has no truth or was not started";
        continue;
      }
      const auto& t = truth_by_name[v.name];
      const auto& s = started.at(v.name);
      const double written = std::chrono::duration<double>(s.written_wall.time_since_epoch()).count();
      const double acked = std::chrono::duration<double>(s.acknowledged_wall.time_since_epoch()).count();
      // The start request was written before the lab received it, and acknowledged once the VM was on.
      // start_requested is the HTTP client's written stamp, taken when the write completes on a busy
      // executor: it may trail the lab's receipt by a few ms (reported, not a provider property).
      const double received_minus_written_ms = (t["startReceived"].get<double>() - written) * 1e3;
      std::printf("%s: lab received the start %+.3f ms after the client's written stamp\n", v.name.c_str(),
                  received_minus_written_ms);
      EXPECT_LT(std::abs(received_minus_written_ms), 50.0) << v.name;
      EXPECT_GE(acked + kClockSlack, t["milestones"]["running"].get<double>()) << v.name;
      EXPECT_EQ(seen[v.name].size(), 3u) << v.name;
      for (auto m : {api::Milestone::running, api::Milestone::guest_agent, api::Milestone::ip_assigned}) {
        if (!seen[v.name].count(m)) continue;
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
                  std::string(api::to_string(m)).c_str(), 1e3 * sum / static_cast<double>(r.size()),
                  1e3 * max, r.size());
    }
    for (auto& v : vms) EXPECT_TRUE(run(p.destroy(v)));
    auto left = run(p.list_run_vms(kRun));
    EXPECT_TRUE(left);
    if (left) {
      EXPECT_TRUE(left->empty());
    }
    run_void(p.disconnect());
    return truth_by_name;
  }

  asio::io_context io;
  api::ProviderConfig config;
  vsphere::Settings settings;  // the plan's vSphere keys, handed to each provider make_provider() builds
  std::unique_ptr<sim::LabServer> lab_;
};

}  // namespace bootstorm::testing::vsphere_lab
