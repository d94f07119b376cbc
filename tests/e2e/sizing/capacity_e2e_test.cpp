// `bootstorm capacity` through the real CLI on tolly-2024. With --predict: the R7625 boots as many desktops
// as its memory holds within 60 s at P95 and memory binds it; the R740s are bound by their 16G links, which a
// 32G HBA lifts until memory binds. In real time on the embedded lab a search agrees with --predict within
// one bisection step and names the same resource from the lab's own accounting. Bad input, a first step that
// misses and a Ctrl-C each end with a precise message and their exit code.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/sizing/sizing_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::read_file;
using bootstorm::test_support::SizingE2E;
using bootstorm::test_support::write_file;
using nlohmann::json;

// tolly-2024: the R7625's and each R740's memory, a win10-vdi desktop's.
constexpr int kR7625MemoryGb = 1536;
constexpr int kR740MemoryGb = 768;
constexpr int kDesktopMemoryMb = 4096;

class CapacityE2E : public SizingE2E {
 protected:
  CapacityE2E() : SizingE2E("capacity-e2e") {}

  // The search's directory, the one entry of `out`.
  static fs::path search_dir(const fs::path& out) {
    for (const auto& e : fs::directory_iterator(out)) {
      if (e.is_directory()) return e.path();
    }
    ADD_FAILURE() << "no search directory in " << out;
    return {};
  }

  json capacity(const std::vector<std::string>& extra, const fs::path& plan, const fs::path& out,
                int expected_exit = 0) {
    std::vector<std::string> args = {"capacity", plan.string(), "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = bootstorm(args, std::chrono::seconds(900));
    EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
    const fs::path dir = search_dir(out);
    if (dir.empty() || !fs::exists(dir / "capacity.json")) return json::object();
    return json::parse(read_file(dir / "capacity.json"));
  }

  // The plan without storage telemetry (a real-time step would wait for vCenter's 20 s sample).
  fs::path plan_without_telemetry() {
    const fs::path plan = consolidation_plan();
    write_file(plan, read_file(plan) + "telemetry: {source: none}\n");
    return plan;
  }
};

TEST_F(CapacityE2E, PredictedTheR7625IsBoundByMemoryAndTheR740sByTheirLinksUntilA32gHba) {
  const fs::path plan = consolidation_plan();
  const json r7625 = capacity({"--scenario", "1x R7625 64GFC", "--slo", "ready p95 <= 60s", "--predict"},
                              plan, dir_ / "r7625");
  EXPECT_EQ(r7625["source"], "predicted");
  EXPECT_EQ(r7625["capacityPerHost"], kR7625MemoryGb * 1024 / kDesktopMemoryMb);
  EXPECT_EQ(r7625["firstMissPerHost"], kR7625MemoryGb * 1024 / kDesktopMemoryMb + 1);
  EXPECT_EQ(r7625["binding"]["resource"], "memory");
  EXPECT_EQ(r7625["binding"]["on"], "r7625-01");
  // Below the knee the desktops are held by their own per-I/O latency, past it by the host's link.
  EXPECT_EQ(r7625["steps"][0]["binding"]["resource"], "per-I/O latency");
  bool link_seen = false;
  for (const auto& s : r7625["steps"]) link_seen |= s["binding"]["resource"] == "link" && s["meets"] == true;
  EXPECT_TRUE(link_seen) << r7625.dump(2);
  const std::string md = read_file(search_dir(dir_ / "r7625") / "capacity.md");
  EXPECT_NE(md.find("**predicted**"), std::string::npos);
  EXPECT_NE(md.find("| per host | desktops | P50 | P95 | ready |"), std::string::npos);
  const std::string html = read_file(search_dir(dir_ / "r7625") / "capacity.html");
  EXPECT_NE(html.find("id=\"capacity-curve\""), std::string::npos);
  EXPECT_NE(html.find(">capacity " + std::to_string(kR7625MemoryGb * 1024 / kDesktopMemoryMb) + "</text>"),
            std::string::npos);

  const json r740 =
      capacity({"--scenario", "4x R740 16GFC", "--slo", "ready p95 <= 60s", "--predict", "--resolution", "2"},
               plan, dir_ / "r740");
  EXPECT_EQ(r740["binding"]["resource"], "link");
  ASSERT_TRUE(r740["capacityPerHost"].is_number()) << r740.dump(2);
  const int r740_capacity = r740["capacityPerHost"].get<int>();
  EXPECT_LT(r740_capacity, kR740MemoryGb * 1024 / kDesktopMemoryMb) << "the 16G links bind before memory";
  EXPECT_LE(r740["firstMissPerHost"].get<int>() - r740_capacity, 2);

  const json hba = capacity({"--scenario", "4x R740 16GFC", "--slo", "ready p95 <= 60s", "--predict", "--set",
                             "hosts.r740-*.linkMBps=3200"},
                            plan, dir_ / "hba");
  EXPECT_EQ(hba["overrides"][0], "hosts.r740-*.linkMBps=3200");
  EXPECT_EQ(hba["capacityPerHost"], kR740MemoryGb * 1024 / kDesktopMemoryMb);
  EXPECT_EQ(hba["binding"]["resource"], "memory");
}

// The real-time search: the R7625 behind a 400 MB/s link, so that it is link-bound at a few desktops and a
// search of small storms finds its capacity within 20 s at P95.
TEST_F(CapacityE2E, ARealTimeSearchOnTheEmbeddedLabAgreesWithPredictWithinOneBisectionStep) {
  const fs::path plan = plan_without_telemetry();
  const std::vector<std::string> search = {"--scenario",   "1x R7625 64GFC",
                                           "--slo",        "ready p95 <= 20s",
                                           "--start",      "8",
                                           "--set",        "hosts.r7625-01.linkMBps=400",
                                           "--resolution", "2"};
  std::vector<std::string> predicted_args = search;
  predicted_args.push_back("--predict");
  const json predicted = capacity(predicted_args, plan, dir_ / "predicted");
  const json measured = capacity(search, plan, dir_ / "measured");
  EXPECT_EQ(measured["source"], "simulated");
  ASSERT_TRUE(predicted["capacityPerHost"].is_number()) << predicted.dump(2);
  ASSERT_TRUE(measured["capacityPerHost"].is_number()) << measured.dump(2);
  RecordProperty("predicted_capacity_per_host", predicted["capacityPerHost"].get<int>());
  RecordProperty("measured_capacity_per_host", measured["capacityPerHost"].get<int>());
  const int step = measured["search"]["resolution"].get<int>();
  EXPECT_LE(std::abs(predicted["capacityPerHost"].get<int>() - measured["capacityPerHost"].get<int>()), step)
      << "predicted " << predicted["capacityPerHost"] << ", real time " << measured["capacityPerHost"];
  EXPECT_EQ(measured["binding"]["resource"], "link");
  EXPECT_EQ(measured["binding"]["source"], "embedded lab");
  EXPECT_EQ(predicted["binding"]["resource"], "link");
  // Every step is a run directory of its own, cleaned up before the next.
  for (const auto& s : measured["steps"]) {
    const fs::path run = search_dir(dir_ / "measured") / "steps" / s["runDir"].get<std::string>();
    EXPECT_TRUE(fs::exists(run / "summary.json")) << run;
    EXPECT_NE(read_file(run / "journal.jsonl").find("\"vm_deleted\""), std::string::npos) << run;
  }
}

TEST_F(CapacityE2E, ACtrlCEndsTheSearchCleansUpAndReportsWhatItHadFound) {
  const fs::path plan = plan_without_telemetry();
  const fs::path out = dir_ / "interrupted";
  auto child = spawn_bootstorm({"capacity", plan.string(), "--scenario", "1x R7625 64GFC", "--slo",
                                "ready p95 <= 60s", "--start", "2", "--out", out.string()});
  // Let the first step finish, then interrupt the second during its storm.
  auto storms_begun = [&child] {
    const std::string err = child->err();
    std::size_t n = 0;
    for (auto at = err.find("phase storm"); at != std::string::npos; at = err.find("phase storm", at + 1))
      ++n;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (child->running() && storms_begun() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(storms_begun(), 2u) << child->out() << child->err();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  child->send(SIGINT);
  const auto code = child->wait_for(std::chrono::minutes(2));
  ASSERT_TRUE(code.has_value()) << "the search did not end after Ctrl-C";
  EXPECT_EQ(*code, 130) << child->out() << child->err();
  const json result = json::parse(read_file(search_dir(out) / "capacity.json"));
  EXPECT_TRUE(result["interrupted"].get<bool>());
  ASSERT_GE(result["steps"].size(), 1u);
  EXPECT_EQ(result["steps"][0]["perHost"], 2);
  EXPECT_NE(child->out().find("interrupted"), std::string::npos) << child->out();
  // The interrupted step cleaned up what it had made.
  fs::path last;
  for (const auto& e : fs::directory_iterator(search_dir(out) / "steps")) last = std::max(last, e.path());
  const std::string journal = read_file(last / "journal.jsonl");
  EXPECT_NE(journal.find("\"interrupted\""), std::string::npos) << last;
  EXPECT_NE(journal.find("\"vm_deleted\""), std::string::npos) << last;
}

TEST_F(CapacityE2E, BadInputAndAFirstStepThatMissesArePreciseMessages) {
  const fs::path plan = consolidation_plan();
  struct Case {
    std::vector<std::string> args;
    int exit;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--scenario", "1x R7625 64GFC", "--slo", "ready p95 < 60s", "--predict"}, 2, "use <="},
      {{"--scenario", "1x R7625 64GFC", "--slo", "ready p97 <= 60s", "--predict"},
       2,
       "'p97' is not a statistic"},
      {{"--scenario", "1x R7625 64GFC", "--slo", "ready p95 <= 60s", "--predict", "--set",
        "hosts.r7625-01.memoryGb=1"},
       2,
       "unknown key"},
      {{"--slo", "ready p95 <= 60s", "--predict"}, 2, "say which layout"},
      {{"--scenario", "1x R7625 64GFC", "--slo", "ready p95 <= 60s", "--max-vms", "10"},
       2,
       "beyond the search's bound"},
      {{"--scenario", "1x R7625 64GFC", "--slo", "ready p95 <= 5s", "--predict"}, 1, "already misses"},
  };
  int n = 0;
  for (const auto& c : cases) {
    std::vector<std::string> args = {"capacity", plan.string(), "--out",
                                     (dir_ / ("bad" + std::to_string(n++))).string()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = bootstorm(args, std::chrono::seconds(120));
    EXPECT_EQ(r.exit_code, c.exit) << c.says << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.says << ": " << r.err;
  }
  // The lab's what-ifs do not apply to a real platform.
  std::string text = read_file(plan);
  text.replace(text.find("endpoint: embedded"), 18, "endpoint: https://vcenter.example.com");
  const auto lab = text.find("  lab: tolly-2024");  // platform.lab is for the embedded lab only
  text.erase(lab, text.find('\n', lab) + 1 - lab);
  write_file(plan, text);
  auto r = bootstorm({"capacity", plan.string(), "--scenario", "1x R7625 64GFC", "--slo", "ready p95 <= 60s",
                      "--set", "hosts.r7625-01.linkMBps=1", "--out", (dir_ / "real").string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("apply with --predict"), std::string::npos) << r.err;
}

}  // namespace
