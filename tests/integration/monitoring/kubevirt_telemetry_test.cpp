// The KubeVirt provider's storage telemetry against the lab over real sockets: the Prometheus query API found
// through the thanos-querier Route, read with the kubeconfig's token; totals and per-VMI rates checked
// against the lab's truth, and what a refused, failing or slow query API gives.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <thread>

#include "providers/kubevirt/kubevirt_provider.hpp"
#include "providers/kubevirt/settings.hpp"
#include "providers/prometheus/prometheus_source.hpp"
#include "simulator/lab/lab_server.hpp"

namespace bootstorm {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr double kScrape = 1.0;

class KubevirtTelemetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = sim::model::load_lab_spec("small");
    ASSERT_TRUE(spec.has_value()) << spec.error().what();
    spec->telemetry.scrape_interval_s = kScrape;
    for (auto& ds : spec->datastores) {
      if (ds.name == spec->kube.datastore) ds.mbps = 10;  // four boots read for a few seconds
    }
    spec_ = *spec;
    sim::LabServerOptions options;
    options.spec = spec_;
    auto server = sim::LabServer::start(std::move(options));
    ASSERT_TRUE(server.has_value()) << server.error().what();
    lab_ = std::move(*server);
  }

  void TearDown() override {
    if (lab_) lab_->stop();
  }

  api::ProviderConfig config() const {
    api::ProviderConfig c;
    c.kind = "kubevirt";
    c.endpoint = lab_->endpoints().kube_url;
    c.password = lab_->endpoints().kube_token;
    c.ca_data = lab_->endpoints().ca_pem;
    kubevirt::Settings settings;
    settings.namespace_ = "storm";
    c.settings = api::make_settings(settings);
    c.run_id = "a1b2c3";
    c.request_timeout = 2s;
    return c;
  }

  // Boots four VMIs on two nodes straight in the lab; returns the window [first start - 1 s, now].
  std::pair<double, double> storm() {
    const double from = lab_->run_on_lab([&](sim::model::Lab& lab) {
      for (int i = 0; i < 4; ++i) {
        sim::model::Lab::CreateVmSpec vm;
        vm.name = "desk-" + std::to_string(i);
        vm.namespace_ = "storm";
        vm.profile = spec_.profiles.front().name;
        vm.datastore_id = spec_.kube.datastore;
        auto id = lab.create_vm(vm);
        EXPECT_TRUE(id.has_value());
        sim::model::PowerOnOptions on;
        on.node = i < 2 ? "worker-0" : "worker-1";
        EXPECT_TRUE(lab.power_on(*id, nullptr, on).has_value());
      }
      return lab.now() - 1;
    });
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      const bool booted = lab_->run_on_lab([](sim::model::Lab& lab) {
        bool all = true;
        lab.for_each_vm([&](const sim::model::Vm& vm) {
          if (vm.namespace_ == "storm" && !vm.milestone(sim::model::Milestone::beacon)) all = false;
          return true;
        });
        return all;
      });
      if (booted) break;
      std::this_thread::sleep_for(50ms);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(2500 * kScrape)));
    return {from, lab_->run_on_lab([](sim::model::Lab& lab) { return lab.now(); })};
  }

  Expected<api::TelemetryReport> collect(api::TelemetrySettings settings,
                                         const api::TelemetryRequest& request,
                                         const api::ProviderConfig& provider_config) {
    asio::io_context io;
    std::optional<Expected<api::TelemetryReport>> out;
    auto provider = kubevirt::make_provider(io.get_executor(), provider_config);
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          auto connected = co_await provider->connect();
          if (!connected) {
            out = connected.error();
            co_return;
          }
          auto source = provider->telemetry_source(settings);
          if (!source) {
            out = source.error();
            co_return;
          }
          auto step = co_await (*source)->sample_step_s(request);
          step_ = step ? *step : -1;
          out = co_await (*source)->collect(request);
          co_await provider->disconnect();
        },
        asio::detached);
    io.run();
    return std::move(*out);
  }

  // The Prometheus source on its own, pointed at the lab's query API, with `options`; `cancel_after` fires
  // the request's cancel signal from another thread, as Ctrl-C does.
  Expected<api::TelemetryReport> collect_direct(api::TelemetryRequest request,
                                                prometheus::PrometheusSourceOptions options,
                                                std::optional<std::chrono::milliseconds> cancel_after = {}) {
    asio::io_context io;
    prometheus::PrometheusEndpoint endpoint;
    endpoint.url = lab_->endpoints().prometheus_url;
    endpoint.token = lab_->endpoints().kube_token;
    endpoint.tls.ca_data = lab_->endpoints().ca_pem;
    endpoint.found_by = "the lab's endpoints";
    auto source = std::make_unique<prometheus::PrometheusStorageSource>(
        io.get_executor(),
        [endpoint]() -> asio::awaitable<Expected<prometheus::PrometheusEndpoint>> { co_return endpoint; },
        options);
    std::optional<Expected<api::TelemetryReport>> out;
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { out = co_await source->collect(request); }, asio::detached);
    std::thread canceller;
    if (cancel_after) {
      canceller = std::thread([signal = request.cancel, after = *cancel_after]() mutable {
        std::this_thread::sleep_for(after);
        signal.cancel();
      });
    }
    io.run();
    if (canceller.joinable()) canceller.join();
    return std::move(*out);
  }

  std::map<std::string, sim::model::IoCounters> truth_at(double t) {
    return lab_->run_on_lab([t](sim::model::Lab& lab) {
      std::map<std::string, sim::model::IoCounters> out;
      for (const auto& s : lab.storage_telemetry().vms) {
        if (s.namespace_ == "storm") out[s.name] = s.history.at(t + 1e-6);
      }
      return out;
    });
  }

  sim::model::LabSpec spec_;
  std::unique_ptr<sim::LabServer> lab_;
  double step_ = 0;  // what the source found the scrape interval to be (-1: it could not tell)
};

TEST_F(KubevirtTelemetryTest, TotalsAndRatesFromTheRoutesPrometheusAreTheLabsTruth) {
  const auto [from, to] = storm();
  api::TelemetryRequest request;
  request.from = from;
  request.to = to;
  request.vm_names = {"desk-0", "desk-1", "desk-2", "desk-3"};
  auto report = collect({}, request, config());
  ASSERT_TRUE(report.has_value()) << report.error().what();
  EXPECT_EQ(report->source, "prometheus");
  EXPECT_EQ(report->endpoint, lab_->endpoints().prometheus_url);
  EXPECT_DOUBLE_EQ(report->resolution_s, kScrape);
  EXPECT_DOUBLE_EQ(step_, kScrape) << "from the spacing of up{job=\"kubevirt-prometheus-metrics\"}";
  const auto truth = truth_at(std::floor(to / kScrape) * kScrape);
  ASSERT_EQ(truth.size(), 4u);
  std::map<std::string, double> node_bytes;
  int vm_totals = 0;
  for (const auto& total : report->totals) {
    if (total.kind == api::StorageSubject::vm) {
      ++vm_totals;
      const auto& t = truth.at(total.subject);
      EXPECT_DOUBLE_EQ(total.read_bytes, std::floor(t.read_bytes)) << total.subject;
      EXPECT_DOUBLE_EQ(total.read_ios, std::floor(t.read_ios)) << total.subject;
      ASSERT_TRUE(total.read_latency_s.has_value());
      EXPECT_NEAR(*total.read_latency_s, t.read_seconds / std::floor(t.read_ios), 1e-9);
      EXPECT_GT(total.read_bytes, 1e6);
    } else {
      node_bytes[total.subject] = total.read_bytes;
    }
  }
  EXPECT_EQ(vm_totals, 4);
  ASSERT_EQ(node_bytes.size(), 2u);
  EXPECT_DOUBLE_EQ(node_bytes["worker-0"],
                   std::floor(truth.at("desk-0").read_bytes) + std::floor(truth.at("desk-1").read_bytes));
  // Each VMI's interval between two scrapes moved what the truth moved between them.
  int intervals = 0;
  double node_sum = 0, vm_sum = 0;
  for (const auto& s : report->samples) {
    const double moved = s.rates.read_bytes_per_s * (s.to - s.from);
    if (s.kind == api::StorageSubject::host) {
      node_sum += moved;
      continue;
    }
    vm_sum += moved;
    const double expected =
        std::floor(truth_at(s.to).at(s.subject).read_bytes) -
        std::floor(truth_at(s.from).count(s.subject) ? truth_at(s.from).at(s.subject).read_bytes : 0);
    EXPECT_NEAR(moved, expected, 1e-3) << s.subject << " (" << s.from << ", " << s.to << "]";
    ++intervals;
  }
  EXPECT_GE(intervals, 8);
  EXPECT_NEAR(node_sum, vm_sum, 1e-3 * vm_sum);
}

TEST_F(KubevirtTelemetryTest, ARefusedFailingOrSlowQueryApiIsAnErrorWithItsCause) {
  const auto [from, to] = storm();
  api::TelemetryRequest request{from, to, {"desk-0"}, {}, {}};
  auto fault = [&](int status, double latency_ms) {
    lab_->run_on_lab([&](sim::model::Lab& lab) {
      lab.faults().error_rate = status ? 1 : 0;
      lab.faults().error_status = status;
      lab.faults().latency_ms = latency_ms;
      lab.faults().paths = {"/api/v1/query"};
    });
  };
  fault(503, 0);
  auto unavailable = collect({}, request, config());
  ASSERT_FALSE(unavailable.has_value());
  EXPECT_NE(unavailable.error().message.find("HTTP 503"), std::string::npos) << unavailable.error().what();
  EXPECT_NE(unavailable.error().message.find("thanos-querier Route"), std::string::npos);
  fault(403, 0);
  auto forbidden = collect({}, request, config());
  ASSERT_FALSE(forbidden.has_value());
  EXPECT_NE(forbidden.error().message.find("cluster-monitoring-view"), std::string::npos)
      << forbidden.error().what();
  fault(0, 3000);
  auto slow = collect({}, request, config());
  ASSERT_FALSE(slow.has_value());
  EXPECT_EQ(slow.error().kind, ErrorKind::timeout) << slow.error().what();
}

TEST_F(KubevirtTelemetryTest, MoreVmisThanThePerVmiLimitAreReadAsNodeSumsWithTheSameTotals) {
  const auto [from, to] = storm();
  api::TelemetryRequest request;
  request.from = from;
  request.to = to;
  request.vm_names = {"desk-0", "desk-1", "desk-2", "desk-3"};
  prometheus::PrometheusSourceOptions options;
  options.namespace_ = "storm";
  auto per_vmi = collect_direct(request, options);
  ASSERT_TRUE(per_vmi.has_value()) << per_vmi.error().what();
  options.per_vmi_limit = 3;
  auto sums = collect_direct(request, options);
  ASSERT_TRUE(sums.has_value()) << sums.error().what();
  ASSERT_FALSE(sums->warnings.empty());
  EXPECT_NE(sums->warnings.front().find("per-node sums only: this scenario has 4 VMIs"), std::string::npos)
      << sums->warnings.front();
  EXPECT_DOUBLE_EQ(sums->resolution_s, kScrape);
  std::map<std::string, double> per_vmi_bytes, sum_bytes, sum_ios;
  for (const auto& t : per_vmi->totals) {
    if (t.kind == api::StorageSubject::host) per_vmi_bytes[t.subject] = t.read_bytes;
  }
  for (const auto& t : sums->totals) {
    EXPECT_EQ(t.kind, api::StorageSubject::host) << t.subject;
    sum_bytes[t.subject] = t.read_bytes;
    sum_ios[t.subject] = t.read_ios;
  }
  ASSERT_EQ(sum_bytes.size(), 2u);
  EXPECT_EQ(sum_bytes, per_vmi_bytes) << "both are differences of the same scrapes";
  double moved = 0;
  for (const auto& s : sums->samples) {
    EXPECT_EQ(s.kind, api::StorageSubject::host);
    EXPECT_NEAR(s.to - s.from, kScrape, 1e-9);
    moved += s.rates.read_bytes_per_s * (s.to - s.from);
  }
  EXPECT_NEAR(moved, sum_bytes["worker-0"] + sum_bytes["worker-1"], 1e-3);
  EXPECT_GT(sum_ios["worker-1"], 0);
}

TEST_F(KubevirtTelemetryTest, ACancelEndsAReadAgainstAHungQueryApiAtOnce) {
  const auto [from, to] = storm();
  lab_->run_on_lab([&](sim::model::Lab& lab) {
    lab.faults().latency_ms = 20000;
    lab.faults().paths = {"/api/v1/query"};
  });
  api::TelemetryRequest request;
  request.from = from;
  request.to = to;
  request.vm_names = {"desk-0"};
  prometheus::PrometheusSourceOptions options;
  options.namespace_ = "storm";
  options.timeout = 60s;
  const auto started = std::chrono::steady_clock::now();
  auto read = collect_direct(request, options, 300ms);
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().kind, ErrorKind::cancelled) << read.error().what();
  EXPECT_LT(took, 10s) << "the query's answer would take 20 s";
}

TEST_F(KubevirtTelemetryTest, ThePlansEndpointAndTokenFileReplaceTheRouteAndTheKubeconfigToken) {
  const auto [from, to] = storm();
  api::TelemetryRequest request{from, to, {"desk-0"}, {}, {}};
  api::TelemetrySettings settings;
  settings.endpoint = lab_->endpoints().prometheus_url + "/";
  const std::string token_file = ::testing::TempDir() + "/telemetry-token";
  { std::ofstream(token_file) << "not-a-token\n"; }
  settings.token_file = token_file;
  auto refused = collect(settings, request, config());
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("401"), std::string::npos) << refused.error().what();
  EXPECT_NE(refused.error().message.find("telemetry.endpoint"), std::string::npos) << refused.error().what();
  { std::ofstream(token_file) << lab_->endpoints().kube_token << "\n"; }
  auto read = collect(settings, request, config());
  ASSERT_TRUE(read.has_value()) << read.error().what();
  EXPECT_FALSE(read->totals.empty());
  api::TelemetrySettings wrong;
  wrong.source = "vsphere-perf";
  auto vsphere = collect(wrong, request, config());
  ASSERT_FALSE(vsphere.has_value());
  EXPECT_NE(vsphere.error().hint.find("prometheus"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm
