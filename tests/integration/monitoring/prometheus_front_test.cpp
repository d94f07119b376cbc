// The lab's Prometheus query API over real HTTPS on loopback: the thanos-querier Route that leads to it,
// KubeVirt's storage counters as the model integrated them, authorization, and the faults aimed at it.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "protocol/http/client.hpp"
#include "protocol/http/types.hpp"
#include "simulator/lab/lab_server.hpp"

namespace bootstorm::sim {
namespace {

namespace asio = boost::asio;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr double kScrape = 1.0;  // s: a short interval so that a test storm spans several scrapes

class PrometheusFrontTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = model::load_lab_spec("small");
    ASSERT_TRUE(spec.has_value()) << spec.error().what();
    spec->telemetry.scrape_interval_s = kScrape;
    // A slow array, so that four boots read for a few seconds and contend.
    for (auto& ds : spec->datastores) {
      if (ds.name == spec->kube.datastore) ds.mbps = 10;
    }
    spec_ = *spec;
    LabServerOptions options;
    options.spec = spec_;
    auto server = LabServer::start(std::move(options));
    ASSERT_TRUE(server.has_value()) << server.error().what();
    lab_ = std::move(*server);
  }

  void TearDown() override {
    if (lab_) lab_->stop();
  }

  http::Response get(const std::string& base_url, const std::string& target, bool with_token = true) {
    http::ClientOptions options;
    options.base_url = base_url;
    options.tls.ca_data = lab_->endpoints().ca_pem;
    options.retry.max_attempts = 1;
    asio::io_context io;
    http::Client client(io.get_executor(), options);
    http::Request request;
    request.method = "GET";
    request.target = target;
    if (with_token) request.headers.emplace_back("Authorization", "Bearer " + lab_->endpoints().kube_token);
    std::optional<Expected<http::Response>> response;
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { response = co_await client.request(std::move(request)); },
        asio::detached);
    while (!response) io.run_one();
    EXPECT_TRUE(response->has_value()) << (response->has_value() ? "" : response->error().what());
    return response->has_value() ? std::move(**response) : http::Response{};
  }

  json query(const std::string& target) {
    http::Response response = get(lab_->endpoints().prometheus_url, target);
    EXPECT_EQ(response.status, 200) << response.body;
    return json::parse(response.body);
  }

  // Four VMIs on two nodes read from the slow array; returns once every one has booted and two more scrapes
  // have passed.
  void storm() {
    lab_->run_on_lab([&](model::Lab& lab) {
      for (int i = 0; i < 4; ++i) {
        model::Lab::CreateVmSpec vm;
        vm.name = "desk-" + std::to_string(i);
        vm.namespace_ = "storm";
        vm.profile = spec_.profiles.front().name;
        vm.datastore_id = spec_.kube.datastore;
        auto id = lab.create_vm(vm);
        ASSERT_TRUE(id.has_value()) << id.error().what();
        model::PowerOnOptions on;
        on.node = i < 2 ? "worker-0" : "worker-1";
        ASSERT_TRUE(lab.power_on(*id, nullptr, on).has_value());
      }
    });
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      const bool booted = lab_->run_on_lab([](model::Lab& lab) {
        bool all = true;
        lab.for_each_vm([&](const model::Vm& vm) {
          if (vm.namespace_ == "storm" && !vm.milestone(model::Milestone::beacon)) all = false;
          return true;
        });
        return all;
      });
      if (booted) break;
      std::this_thread::sleep_for(50ms);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(2500 * kScrape)));
  }

  // The truth: each VMI's counters at the scrape instant t, by VMI name.
  std::map<std::string, model::IoCounters> counters_at(double t) {
    return lab_->run_on_lab([t](model::Lab& lab) {
      std::map<std::string, model::IoCounters> out;
      for (const auto& series : lab.storage_telemetry().vms) {
        if (series.namespace_ == "storm") out[series.name] = series.history.at(t + 1e-6);
      }
      return out;
    });
  }

  model::LabSpec spec_;
  std::unique_ptr<LabServer> lab_;
};

TEST_F(PrometheusFrontTest, TheThanosQuerierRouteLeadsToTheQueryApi) {
  http::Response route =
      get(lab_->endpoints().kube_url,
          "/apis/route.openshift.io/v1/namespaces/openshift-monitoring/routes/thanos-querier");
  ASSERT_EQ(route.status, 200) << route.body;
  const json object = json::parse(route.body);
  EXPECT_EQ(object["kind"], "Route");
  const std::string host = object["spec"]["host"];
  EXPECT_EQ("https://" + host, lab_->endpoints().prometheus_url);
  EXPECT_EQ(object["spec"]["tls"]["termination"], "reencrypt");
  http::Response build = get("https://" + host, "/api/v1/status/buildinfo");
  EXPECT_EQ(build.status, 200) << build.body;
}

TEST_F(PrometheusFrontTest, RawCountersAreTheModelsAtTheLastScrapeAndNodeSumsAddThemUp) {
  storm();
  const double now = std::floor(lab_->run_on_lab([](model::Lab& lab) { return lab.now(); }));
  const double scrape = std::floor(now / kScrape) * kScrape;
  const auto truth = counters_at(scrape);
  ASSERT_EQ(truth.size(), 4u);
  const json answer =
      query("/api/v1/query?query=" +
            http::url_encode("kubevirt_vmi_storage_read_traffic_bytes_total{namespace=\"storm\"}") +
            "&time=" + std::to_string(now));
  ASSERT_EQ(answer["status"], "success");
  ASSERT_EQ(answer["data"]["resultType"], "vector");
  const auto& result = answer["data"]["result"];
  ASSERT_EQ(result.size(), 4u) << answer.dump();
  double total = 0;
  for (const auto& sample : result) {
    const std::string name = sample["metric"]["name"];
    EXPECT_EQ(sample["metric"]["drive"], "rootdisk");
    const double value = std::stod(sample["value"][1].get<std::string>());
    EXPECT_DOUBLE_EQ(value, std::floor(truth.at(name).read_bytes)) << name;
    EXPECT_GT(value, 0);
    total += value;
  }
  const json nodes = query(
      "/api/v1/query?query=" +
      http::url_encode("sum by (node) (kubevirt_vmi_storage_read_traffic_bytes_total{namespace=\"storm\"})") +
      "&time=" + std::to_string(now));
  ASSERT_EQ(nodes["data"]["result"].size(), 2u) << nodes.dump();
  double node_total = 0;
  for (const auto& sample : nodes["data"]["result"])
    node_total += std::stod(sample["value"][1].get<std::string>());
  EXPECT_DOUBLE_EQ(node_total, total);
}

TEST_F(PrometheusFrontTest, RatesOverTwoScrapesAreTheMeanOfTheLastInterval) {
  storm();
  const auto begin = lab_->run_on_lab([](model::Lab& lab) {
    double first = 1e300;
    for (const auto& s : lab.storage_telemetry().vms) first = std::min(first, s.begin);
    return first;
  });
  // Three scrapes into every series: Prometheus does not extrapolate a rate below a counter's zero, which
  // would cut the first intervals of a series short.
  const double start = std::ceil(begin / kScrape) * kScrape + 3 * kScrape;
  const double end = std::floor(lab_->run_on_lab([](model::Lab& lab) { return lab.now(); }));
  const json answer =
      query("/api/v1/query_range?query=" +
            http::url_encode("rate(kubevirt_vmi_storage_iops_read_total{namespace=\"storm\"}[2s])") +
            "&start=" + std::to_string(start) + "&end=" + std::to_string(end) + "&step=1");
  ASSERT_EQ(answer["data"]["resultType"], "matrix");
  ASSERT_EQ(answer["data"]["result"].size(), 4u);
  int checked = 0;
  for (const auto& series : answer["data"]["result"]) {
    const std::string name = series["metric"]["name"];
    for (const auto& point : series["values"]) {
      const double t = point[0].get<double>();
      const double expected =
          std::floor(counters_at(t)[name].read_ios) - std::floor(counters_at(t - 1)[name].read_ios);
      EXPECT_NEAR(std::stod(point[1].get<std::string>()), expected, 1e-9) << name << " at " << t;
      ++checked;
    }
  }
  EXPECT_GE(checked, 8);
}

TEST_F(PrometheusFrontTest, AQueryWithoutATokenIs401AndAUserWhoMayNotGetNamespacesIs403) {
  http::Response anonymous = get(lab_->endpoints().prometheus_url, "/api/v1/query?query=up", false);
  EXPECT_EQ(anonymous.status, 401);
  lab_->stop();
  spec_.kube.deny.push_back("get core namespaces");
  LabServerOptions options;
  options.spec = spec_;
  auto server = LabServer::start(std::move(options));
  ASSERT_TRUE(server.has_value());
  lab_ = std::move(*server);
  http::Response refused = get(lab_->endpoints().prometheus_url, "/api/v1/query?query=up");
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("namespaces"), std::string::npos) << refused.body;
}

TEST_F(PrometheusFrontTest, FaultsReachTheQueryApiOnlyWhenTheyNameIt) {
  lab_->run_on_lab([](model::Lab& lab) {
    lab.faults().error_rate = 1;
    lab.faults().error_status = 503;
    lab.faults().paths = {"/api/v1/query"};
  });
  EXPECT_EQ(get(lab_->endpoints().prometheus_url, "/api/v1/query?query=up").status, 503);
  EXPECT_EQ(get(lab_->endpoints().prometheus_url, "/api/v1/query_range?query=up&start=1&end=2&step=1").status,
            503);
  lab_->run_on_lab([](model::Lab& lab) { lab.faults().paths = {"/apis/"}; });
  EXPECT_EQ(get(lab_->endpoints().prometheus_url, "/api/v1/query?query=up").status, 200);
}

TEST_F(PrometheusFrontTest, ABadQueryIsBadDataWithWhereItFailed) {
  http::Response bad =
      get(lab_->endpoints().prometheus_url, "/api/v1/query?query=" + http::url_encode("sum by (node"));
  EXPECT_EQ(bad.status, 400);
  const json body = json::parse(bad.body);
  EXPECT_EQ(body["status"], "error");
  EXPECT_EQ(body["errorType"], "bad_data");
}

}  // namespace
}  // namespace bootstorm::sim
