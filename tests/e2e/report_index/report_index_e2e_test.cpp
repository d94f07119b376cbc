// `bootstorm report RUN --index URL`: the quantile and per-VM documents reach an OpenSearch-style _bulk
// endpoint as NDJSON action/document pairs. The endpoint is a real bootstorm::http server on loopback that
// records what it receives; the run directory comes from a real storm on the embedded small lab.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "protocol/http/server.hpp"
#include "tests/support/lab_process.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;
using bootstorm::test_support::run_cli;
using bootstorm::test_support::ScratchDir;

// A _bulk endpoint: answers `status` and records every request.
class BulkEndpoint {
 public:
  explicit BulkEndpoint(int status) {
    server_ = std::make_unique<bootstorm::http::Server>(
        io_.get_executor(), bootstorm::http::ServerOptions{},
        [this, status](bootstorm::http::ServerRequest& request)
            -> boost::asio::awaitable<bootstorm::http::ServerResponse> {
          {
            std::lock_guard lock(mutex_);
            requests_.push_back(request);
          }
          bootstorm::http::ServerResponse response;
          response.status = status;
          response.headers = {{"Content-Type", "application/json"}};
          response.body = status == 200 ? R"({"took":1,"errors":false,"items":[]})"
                                        : R"({"error":"security_exception","status":401})";
          co_return response;
        });
    EXPECT_TRUE(server_->start());
    thread_ = std::thread([this] { io_.run(); });
  }
  ~BulkEndpoint() {
    boost::asio::post(io_, [this] { server_->stop_now(); });
    thread_.join();
  }
  std::string url(const std::string& index) const { return server_->base_url() + "/" + index; }
  std::vector<bootstorm::http::ServerRequest> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  boost::asio::io_context io_;
  std::unique_ptr<bootstorm::http::Server> server_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<bootstorm::http::ServerRequest> requests_;
};

class ReportIndex : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_.emplace("report-index");
    dir_ = scratch_->path();
    PlanYaml{.name = "index-e2e",
             .platform = {.kind = "vsphere", .endpoint = "embedded", .lab = "small"},
             .golden = "{vm: tiny-golden}",
             .scenarios = {{"two hosts", {{"host-01", 3}, {"host-02", 3}}}},
             .storm = "{timeout: 60s}",
             .ready = "{signal: guest_agent}",
             .output = (dir_ / "runs").string()}
        .write(dir_ / "plan.yaml");
    auto run = run_cli({"run", (dir_ / "plan.yaml").string(), "--yes"}, dir_ / "run");
    ASSERT_EQ(run.exit_code, 0) << run.all();
    for (auto& entry : fs::directory_iterator(dir_ / "runs")) run_dir_ = entry.path();
  }
  static void TearDownTestSuite() { scratch_.reset(); }

  static int report(const std::string& url, std::string* output) {
    auto result = run_cli({"report", run_dir_.string(), "--index", url}, dir_ / "report");
    *output = result.all();
    return result.exit_code;
  }

  static inline std::optional<ScratchDir> scratch_;  // for the whole suite
  static inline fs::path dir_;
  static inline fs::path run_dir_;
};

TEST_F(ReportIndex, UploadsQuantileAndPerVmDocumentsAsBulkPairs) {
  ASSERT_FALSE(run_dir_.empty());
  BulkEndpoint endpoint(200);
  std::string output;
  ASSERT_EQ(report(endpoint.url("bootstorm-results"), &output), 0) << output;
  auto requests = endpoint.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/_bulk");
  EXPECT_EQ(requests[0].header("Content-Type").value_or(""), "application/x-ndjson");

  // Action and document lines alternate; every action names the index.
  std::istringstream lines(requests[0].body);
  std::vector<json> actions, documents;
  for (std::string line; std::getline(lines, line);) {
    ASSERT_FALSE(line.empty());
    (actions.size() == documents.size() ? actions : documents).push_back(json::parse(line));
  }
  ASSERT_EQ(actions.size(), documents.size());
  for (const json& a : actions) EXPECT_EQ(a["index"]["_index"], "bootstorm-results");

  // What was sent equals the run's own documents on disk: quantiles.json and vm-latency.json.
  const json quantiles = json::parse(read_file(run_dir_ / "quantiles.json"));
  const json vms = json::parse(read_file(run_dir_ / "vm-latency.json"));
  ASSERT_EQ(documents.size(), quantiles.size() + vms.size());
  std::set<std::string> metric_names;
  for (const json& d : documents) metric_names.insert(d.value("metricName", ""));
  EXPECT_TRUE(metric_names.count("vmiLatencyQuantilesMeasurement"));
  std::size_t ready_quantiles = 0;
  for (const json& d : documents)
    if (d.value("metricName", "") == "vmiLatencyQuantilesMeasurement" &&
        d.value("quantileName", "") == "Ready") {
      ++ready_quantiles;
      for (const char* field : {"P99", "P95", "P50", "min", "max", "avg", "uuid", "timestamp", "jobName"})
        EXPECT_TRUE(d.contains(field)) << field;
    }
  EXPECT_EQ(ready_quantiles, 1u);
  EXPECT_NE(output.find("indexed " + std::to_string(documents.size()) + " documents"), std::string::npos)
      << output;
}

TEST_F(ReportIndex, RejectedCredentialsFailWithTheStatusAndWhatToSet) {
  ASSERT_FALSE(run_dir_.empty());
  BulkEndpoint endpoint(401);
  std::string output;
  EXPECT_EQ(report(endpoint.url("bootstorm-results"), &output), 1) << output;
  EXPECT_NE(output.find("HTTP 401"), std::string::npos) << output;
  EXPECT_NE(output.find("BOOTSTORM_INDEX_USERNAME"), std::string::npos) << output;
}

TEST_F(ReportIndex, AUrlWithoutAnIndexIsAUsageError) {
  ASSERT_FALSE(run_dir_.empty());
  std::string output;
  EXPECT_EQ(report("http://127.0.0.1:9/", &output), 2) << output;
  EXPECT_NE(output.find("https://HOST:PORT/INDEX"), std::string::npos) << output;
}

}  // namespace
