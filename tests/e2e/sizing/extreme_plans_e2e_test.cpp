// Impossible and extreme sizes through the real CLI (issue: a plan with an impossible size gets a clear
// error, never a crash). A typo'd placement gets one file:line:col message from validate, predict and
// capacity; and `predict` driven with extreme plans and lab what-ifs — 0, 1, 24 and 10^7 desktops; hosts
// with no memory, link or cores; a datastore with no IOPS; per-I/O latencies of 0 and 10^6 ms; negative,
// non-finite and huge values — always ends by itself under an 8 GiB address-space limit with exit 0, 1 or 2,
// a message on stderr for 2, and finite figures in the run directory for 0 and 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/e2e/sizing/sizing_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::read_file;
using bootstorm::test_support::SizingE2E;
using bootstorm::test_support::write_file;
using nlohmann::json;

// The consolidation plan's single-host scenario, as written in plans/.
const std::string kR7625Placement = "{host: r7625-01, vms: 24}";

class ExtremePlans : public SizingE2E {
 protected:
  ExtremePlans() : SizingE2E("extreme-plans") {}

  // The consolidation plan with the single-host scenario placing `vms` desktops (the text as a user types
  // it).
  fs::path plan_with(const std::string& vms) {
    const fs::path plan = consolidation_plan();
    std::string text = read_file(plan);
    const auto at = text.find(kR7625Placement);
    EXPECT_NE(at, std::string::npos);
    if (at != std::string::npos)
      text.replace(at, kR7625Placement.size(), "{host: r7625-01, vms: " + vms + "}");
    write_file(plan, text);
    return plan;
  }

  // The line and column of the single-host scenario's `vms` value in the plan file.
  static std::string vms_position(const fs::path& plan) {
    const std::string text = read_file(plan);
    const auto at = text.find("{host: r7625-01, vms: ");
    int line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    const std::size_t column = at + std::string("{host: r7625-01, vms: ").size() - line_start + 1;
    return plan.string() + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  }

  // `bootstorm ARGS` under an 8 GiB address-space limit (ulimit -v), as a jump host with little memory.
  bootstorm::test_support::CliRun limited(const std::vector<std::string>& args) {
    std::string command = "ulimit -v 8388608 && exec";
    for (const auto& a : std::vector<std::string>{bootstorm::test_support::bootstorm_binary()})
      command += " '" + a + "'";
    for (const auto& a : args) command += " '" + a + "'";
    return run({"/bin/sh", "-c", command}, std::chrono::seconds(90));
  }
};

TEST_F(ExtremePlans, ATypoedSizeIsOneFileLineColumnMessageFromValidatePredictAndCapacity) {
  // 24 desktops with "20261203" typed after them: more than one scenario can hold.
  const fs::path typo = plan_with("20261203");
  const std::string at = vms_position(typo);
  std::string first_message;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"validate", typo.string()},
        std::vector<std::string>{"predict", typo.string(), "--out", (dir_ / "p").string()},
        std::vector<std::string>{"capacity", typo.string(), "--predict", "--slo", "ready p95 <= 60s", "--out",
                                 (dir_ / "c").string()}}) {
    auto r = limited(args);
    EXPECT_EQ(r.exit_code, 2) << args.front() << ": " << r.all();
    const auto line = r.err.find(at);
    ASSERT_NE(line, std::string::npos) << args.front() << " names no " << at << ":\n" << r.err;
    const std::string message = r.err.substr(line, r.err.find('\n', line) - line);
    EXPECT_NE(message.find("20261203"), std::string::npos) << message;
    if (first_message.empty()) first_message = message;
    EXPECT_EQ(message, first_message) << args.front() << " says it otherwise";
  }
  EXPECT_FALSE(fs::exists(dir_ / "p")) << "predict wrote a run directory for an invalid plan";
  EXPECT_FALSE(fs::exists(dir_ / "c")) << "capacity wrote a directory for an invalid plan";

  // A size the format holds but the host's memory does not: 2026 desktops of 4 GiB on 1,536 GiB.
  const fs::path big = plan_with("2026");
  const std::string big_at = vms_position(big);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"validate", big.string(), "--max-vms", "5000"},
        std::vector<std::string>{"predict", big.string(), "--out", (dir_ / "p").string()},
        std::vector<std::string>{"capacity", big.string(), "--predict", "--slo", "ready p95 <= 60s", "--out",
                                 (dir_ / "c").string()},
        std::vector<std::string>{"run", big.string(), "--yes", "--max-vms", "5000", "--out",
                                 (dir_ / "r").string()}}) {
    auto r = limited(args);
    EXPECT_EQ(r.exit_code, 2) << args.front() << ": " << r.all();
    EXPECT_NE(r.err.find(big_at + "scenarios[1].placement[0].vms: 2026 desktops need"), std::string::npos)
        << args.front() << ":\n"
        << r.err;
    EXPECT_NE(r.err.find("at most 384 fit"), std::string::npos) << args.front() << ":\n" << r.err;
  }
  // Within memory, beyond what run creates without --max-vms: validate says so, as run does.
  const fs::path many = plan_with("380");
  auto v = limited({"validate", many.string(), "--max-vms", "400"});
  EXPECT_EQ(v.exit_code, 2) << v.all();
  EXPECT_NE(
      v.err.find(vms_position(many) + "scenarios[1].placement[0].vms: with it the plan has 404 VMs, more "
                                      "than the 400 that run creates without a larger --max-vms"),
      std::string::npos)
      << v.err;
  auto allowed = limited({"validate", many.string(), "--max-vms", "404"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.all();
}

// What predict did with one case: a clean end, and what it wrote is whole.
struct Outcome {
  int exit_code = 0;
  std::string problem;  // empty: a clean end
};

TEST_F(ExtremePlans, PredictEndsCleanlyOnExtremePlansAndWhatIfs) {
  const std::vector<std::string> sizes = {"0", "1", "24", "10000000"};
  const std::vector<std::vector<std::string>> what_ifs = {
      {},
      {"hosts.r7625-01.memoryGB=0"},
      {"hosts.r7625-01.linkMBps=0"},
      {"hosts.r7625-01.cores=0"},
      {"datastores.tolly-aff-ds01.iops=0"},
      {"hosts.r7625-01.ioLatencyMs=0", "datastores.tolly-aff-ds01.latencyMs=0"},
      {"hosts.r7625-01.ioLatencyMs=1000000"},
      {"datastores.tolly-aff-ds01.latencyMs=1000000"},
      {"hosts.r7625-01.memoryGB=-1536"},
      {"hosts.*.memoryGB=1e15"},
  };
  // The fixed cross product, then random combinations of extreme values on keys of every kind.
  struct Case {
    std::string vms;
    std::vector<std::string> sets;
  };
  std::vector<Case> cases;
  for (const auto& vms : sizes)
    for (const auto& sets : what_ifs) cases.push_back({vms, sets});
  const std::vector<std::string> keys = {"hosts.r7625-01.memoryGB",
                                         "hosts.r7625-01.linkMBps",
                                         "hosts.r7625-01.busMBps",
                                         "hosts.r7625-01.cores",
                                         "hosts.r7625-01.coreSpeed",
                                         "hosts.r7625-01.ioLatencyMs",
                                         "datastores.tolly-aff-ds01.iops",
                                         "datastores.tolly-aff-ds01.MBps",
                                         "datastores.tolly-aff-ds01.latencyMs",
                                         "profiles.win10-vdi.outstandingIOs",
                                         "profiles.win10-vdi.memoryMB",
                                         "profiles.win10-vdi.ioSizeKB"};
  const std::vector<std::string> values = {"0",    "-1",      "1e-9",  "0.001", "1",   "2", "64",
                                           "1e12", "1000000", "1e300", "nan",   "inf", "-0"};
  const std::vector<std::string> random_sizes = {"1", "2", "24", "300", "384", "385", "1000000", "1000001"};
  std::mt19937 random(20261203);
  for (int i = 0; i < 150; ++i) {
    Case c;
    c.vms = random_sizes[random() % random_sizes.size()];
    const int n = 1 + static_cast<int>(random() % 3);
    for (int k = 0; k < n; ++k)
      c.sets.push_back(keys[random() % keys.size()] + "=" + values[random() % values.size()]);
    cases.push_back(c);
  }

  std::map<int, int> by_exit;
  int n = 0;
  for (const auto& c : cases) {
    const fs::path plan = plan_with(c.vms);
    const fs::path out = dir_ / ("out" + std::to_string(n++));
    std::vector<std::string> args = {"predict",        plan.string(), "--scenario",
                                     "1x R7625 64GFC", "--out",       out.string()};
    std::string label = "vms " + c.vms;
    for (const auto& s : c.sets) {
      args.insert(args.end(), {"--set", s});
      label += " --set " + s;
    }
    auto r = limited(args);
    ++by_exit[r.exit_code];
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2)
        << label << ": exit " << r.exit_code << " (negative: a signal; -1000: it did not end in 90 s)\n"
        << r.all();
    for (const char* crash : {"std::", "bad_alloc", "terminate called", "Assertion", "what():"})
      EXPECT_EQ(r.err.find(crash), std::string::npos) << label << ": " << r.err;
    if (r.exit_code == 2) {
      EXPECT_FALSE(r.err.empty()) << label << ": exit 2 without a message";
      EXPECT_FALSE(fs::exists(out) && !fs::is_empty(out)) << label << ": refused, yet wrote " << out;
      continue;
    }
    // A prediction was made: its summary is whole, and its figures are numbers (nlohmann::json writes a NaN
    // or an infinity as null).
    const fs::path run_dir = run_dir_in(out);
    ASSERT_TRUE(fs::exists(run_dir / "summary.json")) << label << ": " << r.all();
    const json summary = summary_of(run_dir);
    ASSERT_EQ(summary["scenarios"].size(), 1u) << label;
    const json& ready = summary["scenarios"][0]["milestones"]["ready"];
    ASSERT_TRUE(ready["readyFraction"].is_number()) << label << ": " << ready.dump();
    if (ready["readyFraction"].get<double>() > 0) {
      for (const char* figure : {"meanS", "p50S", "p95S"})
        EXPECT_TRUE(ready[figure].is_number()) << label << ": " << figure << " in " << ready.dump();
    }
  }
  // The fixed cases whose answer is known: 0 and 10^7 desktops are refused at the plan line; so are a host
  // with no memory, link or cores, a datastore with no IOPS and a negative value, by the what-if.
  for (const auto& vms : {"0", "10000000"}) {
    auto r = limited({"predict", plan_with(vms).string(), "--out", (dir_ / "known").string()});
    EXPECT_EQ(r.exit_code, 2) << vms << ": " << r.all();
    EXPECT_NE(r.err.find("scenarios[1].placement[0].vms"), std::string::npos) << r.err;
  }
  for (const char* set : {"hosts.r7625-01.memoryGB=0", "hosts.r7625-01.linkMBps=0", "hosts.r7625-01.cores=0",
                          "datastores.tolly-aff-ds01.iops=0", "hosts.r7625-01.memoryGB=-1536",
                          "hosts.r7625-01.ioLatencyMs=nan"}) {
    auto r = limited({"predict", plan_with("24").string(), "--set", set, "--out", (dir_ / "known").string()});
    EXPECT_EQ(r.exit_code, 2) << set << ": " << r.all();
    EXPECT_NE(r.err.find("--lab/--set: "), std::string::npos) << set << ": " << r.err;
  }
  // A per-I/O latency of 10^6 ms: nothing boots within the storm's 10 minutes, an SLO miss (exit 1).
  auto slow = limited({"predict", plan_with("24").string(), "--scenario", "1x R7625 64GFC", "--set",
                       "hosts.r7625-01.ioLatencyMs=1000000", "--out", (dir_ / "slow").string()});
  EXPECT_EQ(slow.exit_code, 1) << slow.all();
  std::string tally;
  for (const auto& [code, count] : by_exit)
    tally += " exit " + std::to_string(code) + ": " + std::to_string(count);
  std::cout << cases.size() << " cases:" << tally << "\n";
}

}  // namespace
