// `bootstorm history` on runs made as a user following a platform makes them: twelve storms of one plan on
// a lab served by `bootstorm lab serve`, the datastore's latency raised 30 % (`--set`) from run six on in
// one series and unchanged (the lab restarted all the same) in the other. The true effect of the raise is
// measured apart, on twelve more runs at the raised latency against the unchanged series, and the size
// history gives must agree with it. The same change
// point is then read back from an index that `report --index` filled: a loopback server that keeps the
// _bulk documents and answers _search as OpenSearch does (from/size, the match filters history sends).
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "protocol/http/server.hpp"
#include "results/inference.hpp"
#include "tests/support/lab_process.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using bootstorm::test_support::CliRun;
using bootstorm::test_support::LabProcess;
using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;
using bootstorm::test_support::run_cli;
using bootstorm::test_support::ScratchDir;

// An index server for the documents `report --index` sends: _bulk keeps them, _search pages through them.
class IndexServer {
 public:
  IndexServer() {
    server_ = std::make_unique<bootstorm::http::Server>(
        io_.get_executor(), bootstorm::http::ServerOptions{},
        [this](bootstorm::http::ServerRequest& request)
            -> boost::asio::awaitable<bootstorm::http::ServerResponse> {
          bootstorm::http::ServerResponse response;
          response.headers = {{"Content-Type", "application/json"}};
          std::lock_guard lock(mutex_);
          if (request.path == "/_bulk") {
            std::istringstream lines(request.body);
            std::string action, document;
            while (std::getline(lines, action) && std::getline(lines, document))
              documents_.push_back(json::parse(document));
            response.body = R"({"took":1,"errors":false,"items":[]})";
          } else if (request.path.ends_with("/_search")) {
            response.body = search(json::parse(request.body)).dump();
          } else {
            response.status = 404;
            response.body = R"({"error":"no handler"})";
          }
          co_return response;
        });
    EXPECT_TRUE(server_->start());
    thread_ = std::thread([this] { io_.run(); });
  }
  ~IndexServer() {
    boost::asio::post(io_, [this] { server_->stop_now(); });
    thread_.join();
  }
  std::string url(const std::string& index) const { return server_->base_url() + "/" + index; }
  std::size_t searches() {
    std::lock_guard lock(mutex_);
    return searches_;
  }

 private:
  // The filters history sends: match on metricName, match_phrase on metadata.plan.
  static bool matches(const json& doc, const json& filter) {
    for (const auto& f : filter) {
      for (const char* kind : {"match", "match_phrase"}) {
        if (!f.contains(kind)) continue;
        for (const auto& [field, value] : f[kind].items()) {
          const json* at = &doc;
          std::istringstream path(field);
          for (std::string part; std::getline(path, part, '.');)
            at = at->is_object() && at->contains(part) ? &(*at)[part] : nullptr;
          if (at == nullptr || *at != value) return false;
        }
      }
    }
    return true;
  }
  json search(const json& query) {
    ++searches_;
    std::vector<const json*> hits;
    for (const auto& d : documents_)
      if (matches(d, query["query"]["bool"]["filter"])) hits.push_back(&d);
    const std::size_t from = query.value("from", 0), size = query.value("size", 10);
    json page = json::array();
    for (std::size_t i = from; i < hits.size() && i < from + size; ++i)
      page.push_back({{"_source", *hits[i]}});
    return {{"hits", {{"total", {{"value", hits.size()}, {"relation", "eq"}}}, {"hits", page}}}};
  }

  boost::asio::io_context io_;
  std::unique_ptr<bootstorm::http::Server> server_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<json> documents_;
  std::size_t searches_ = 0;
};

class HistoryE2e : public ::testing::Test {
 protected:
  // `count` runs of the plan into `runs`, on a lab served with datastore lab-ds01's latency at `latency_ms`.
  void storms(const std::string& runs, const std::string& latency_ms, int seed, int count) {
    const fs::path state = dir_ / ("lab-" + std::to_string(++labs_));
    LabProcess lab("small", state, dir_.path(),
                   {"--seed", std::to_string(seed), "--set", "datastores.lab-ds01.latencyMs=" + latency_ms});
    ASSERT_TRUE(lab.wait_ready());
    PlanYaml plan{
        .name = "nightly",
        .platform = {.kind = "vsphere", .endpoint = "lab:" + state.string(), .extra = {"api: vim25"}},
        .golden = "{vm: tiny-golden, clone: linked}",
        .scenarios = {{"eight on two hosts", {{"host-01", 4}, {"host-02", 4}}}},
        .telemetry = "{source: none}",
        .output = (dir_ / runs).string()};
    const fs::path file = dir_ / "plan.yaml";
    plan.write(file);
    for (int i = 0; i < count; ++i) {
      const CliRun r = run_cli({"run", file.string()}, dir_ / "run");
      ASSERT_EQ(r.exit_code, 0) << r.all();
    }
  }

  // The ready means (s) of the runs in `runs`, from their summaries.
  std::vector<double> ready_means(const std::string& runs) {
    std::vector<double> out;
    for (const auto& e : fs::directory_iterator(dir_ / runs))
      out.push_back(
          json::parse(read_file(e.path() / "summary.json"))["scenarios"][0]["milestones"]["ready"]["meanS"]
              .get<double>());
    return out;
  }

  json history(const std::vector<std::string>& args, const std::string& out, int expected_exit) {
    std::vector<std::string> all{"history"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--out", (dir_ / out).string(), "--fail-on-regression", "10"});
    last_ = run_cli(all, dir_ / out);
    EXPECT_EQ(last_.exit_code, expected_exit) << last_.all();
    return json::parse(read_file(dir_ / out / "history.json"));
  }

  ScratchDir dir_{"history-e2e"};
  int labs_ = 0;
  CliRun last_;
};

// The change point's ready shift, and that every other change point is small (a false one is within noise).
const json& ready_shift(const json& group, std::size_t at) {
  for (const auto& cp : group["changePoints"]) {
    if (cp["index"] != at) {
      for (const auto& s : cp["shifts"])
        EXPECT_LT(std::abs(s["relative"]["estimate"].get<double>()), 0.05) << cp;
      continue;
    }
    for (const auto& s : cp["shifts"])
      if (s["milestone"] == "ready") return s;
  }
  ADD_FAILURE() << "no change point at index " << at << ": " << group["changePoints"];
  static const json none;
  return none;
}

TEST_F(HistoryE2e, ALatencyRaisedFromRunSixIsAChangePointThereAndARegression) {
  // The series with the raise, the series without, and the raised latency's reference runs.
  storms("raised", "1", 1, 5);
  storms("raised", "1.3", 2, 7);
  storms("unchanged", "1", 3, 5);
  storms("unchanged", "1", 4, 7);
  storms("reference", "1.3", 5, 12);
  if (HasFatalFailure()) return;
  // The true effect, measured apart: the unchanged series against the reference runs, with its own 95 %
  // interval (two intervals of one quantity that each cover it 95 % of the time are apart < 1 % of the time).
  const auto truth = bootstorm::results::mean_shift(ready_means("unchanged"), ready_means("reference"));
  ASSERT_TRUE(truth);
  ASSERT_GT(truth->relative.estimate, 0.10)
      << "the raise should slow the boots by more than the threshold below";

  const json raised = history({(dir_ / "raised").string()}, "history-raised", 1);
  ASSERT_EQ(raised["groups"].size(), 1u);
  const json& group = raised["groups"][0];
  EXPECT_EQ(group["runs"].size(), 12u);
  const json& ready = ready_shift(group, 5);
  ASSERT_TRUE(ready.is_object());
  EXPECT_TRUE(ready["detected"].get<bool>());
  EXPECT_EQ(ready["nBefore"], 5);
  EXPECT_EQ(ready["nAfter"], 7);
  // Its size agrees with the effect measured apart.
  EXPECT_LE(ready["differenceS"]["lower"].get<double>(), truth->difference.upper) << ready;
  EXPECT_GE(ready["differenceS"]["upper"].get<double>(), truth->difference.lower) << ready;
  EXPECT_LE(ready["relative"]["lower"].get<double>(), truth->relative.upper) << ready;
  EXPECT_GE(ready["relative"]["upper"].get<double>(), truth->relative.lower) << ready;
  EXPECT_NE(last_.err.find("regression in nightly / eight on two hosts"), std::string::npos) << last_.err;
  EXPECT_NE(last_.out.find("change at run " + group["runs"][5]["id"].get<std::string>()), std::string::npos)
      << last_.out;
  for (const char* file : {"history.md", "history.html"})
    EXPECT_TRUE(fs::exists(dir_ / "history-raised" / file));

  // No change: whatever the permutation test lets through at its significance is no regression.
  const json unchanged = history({(dir_ / "unchanged").string()}, "history-unchanged", 0);
  for (const auto& cp : unchanged["groups"][0]["changePoints"])
    for (const auto& s : cp["shifts"])
      EXPECT_LT(std::abs(s["relative"]["estimate"].get<double>()), 0.05) << cp;
  EXPECT_EQ(unchanged["regressions"].size(), 0u);

  // The same runs from an index: the same change point.
  IndexServer index;
  for (const auto& run : fs::directory_iterator(dir_ / "raised")) {
    const CliRun r =
        run_cli({"report", run.path().string(), "--index", index.url("bootstorm")}, dir_ / "report");
    ASSERT_EQ(r.exit_code, 0) << r.all();
  }
  const json indexed =
      history({"--index", index.url("bootstorm"), "--plan", "nightly"}, "history-indexed", 1);
  EXPECT_GE(index.searches(), 1u);
  ASSERT_EQ(indexed["groups"].size(), 1u);
  EXPECT_EQ(indexed["groups"][0]["runs"].size(), 12u);
  const json& from_index = ready_shift(indexed["groups"][0], 5);
  ASSERT_TRUE(from_index.is_object());
  // The documents carry the quantiles in milliseconds: the same means to rounding.
  EXPECT_NEAR(from_index["beforeMeanS"].get<double>(), ready["beforeMeanS"].get<double>(), 1e-6);
  EXPECT_NEAR(from_index["afterMeanS"].get<double>(), ready["afterMeanS"].get<double>(), 1e-6);
}

TEST_F(HistoryE2e, PlacesThatAreNotRunsAreSaidAndLeftOut) {
  fs::create_directories(dir_ / "runs" / "interrupted");
  std::ofstream(dir_ / "runs" / "interrupted" / "journal.jsonl") << "{}\n";
  CliRun r = run_cli({"history", (dir_ / "runs").string(), "--out", (dir_ / "h").string()}, dir_ / "h1");
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("left out " + (dir_ / "runs" / "interrupted").string() + ": no summary.json"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("no run to follow"), std::string::npos) << r.err;

  r = run_cli({"history", (dir_ / "nowhere").string()}, dir_ / "h2");
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;

  r = run_cli({"history", (dir_ / "runs-*-none").string()}, dir_ / "h3");
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("matches nothing"), std::string::npos) << r.err;

  r = run_cli({"history"}, dir_ / "h4");
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("give run directories"), std::string::npos) << r.err;
}

}  // namespace
