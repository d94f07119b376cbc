// `bootstorm predict` through the real CLI. The consolidation study (tolly-2024: 4x R740 16GFC against 1x
// R7625 64GFC) predicted in the lab model's virtual time gives the Tolly table, and agrees with the same plan
// run in real time on the embedded lab; the run directory is labelled predicted everywhere, `report`,
// `compare` and `cleanup` work on it, a what-if moves the figures the way the physics says, and bad input is
// a precise message with exit 2.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/sizing/sizing_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::read_file;
using bootstorm::test_support::SizingE2E;
using bootstorm::test_support::write_file;
using nlohmann::json;

// Tolly's published means (guest agent up, 24 desktops): 4x R740 16GFC and 1x R7625 64GFC.
constexpr double kTolly4xR740 = 31.54;
constexpr double kTolly1xR7625 = 7.58;

TEST_F(SizingE2E, ThePredictedConsolidationStudyIsTheTollyTableAndAgreesWithARealTimeRun) {
  const fs::path plan = consolidation_plan();
  const fs::path predicted_dir = predict({}, plan, dir_ / "predicted");
  const json predicted = summary_of(predicted_dir);
  EXPECT_EQ(predicted["run"]["source"], "predicted");
  const auto prediction = ready_means(predicted);
  ASSERT_EQ(prediction.size(), 2u);
  EXPECT_NEAR(prediction.at("4x R740 16GFC"), kTolly4xR740, 0.10 * kTolly4xR740);
  EXPECT_NEAR(prediction.at("1x R7625 64GFC"), kTolly1xR7625, 0.10 * kTolly1xR7625);

  // The same plan in real time on the embedded lab (its fronts, sockets and observation): within 5 %.
  const fs::path measured_out = dir_ / "measured";
  const fs::path realtime_plan = consolidation_plan();
  {
    // Storage telemetry would wait for vCenter's 20 s sample: not what this compares.
    std::string text = read_file(realtime_plan);
    text += "telemetry: {source: none}\n";
    write_file(realtime_plan, text);
  }
  auto run = bootstorm({"run", realtime_plan.string(), "--yes", "--out", measured_out.string()},
                       std::chrono::seconds(600));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json measured = summary_of(run_dir_in(measured_out));
  EXPECT_EQ(measured["run"]["source"], "simulated");
  const auto realtime = ready_means(measured);
  for (const auto& [name, mean] : prediction) {
    ASSERT_TRUE(realtime.count(name)) << name;
    EXPECT_NEAR(mean, realtime.at(name), 0.05 * realtime.at(name))
        << name << ": predicted " << mean << " s, the real-time embedded run " << realtime.at(name) << " s";
  }
}

TEST_F(SizingE2E, APredictionIsLabelledPredictedDeterministicForASeedAndItsRepeatsDiffer) {
  const fs::path plan = consolidation_plan();
  const fs::path first =
      predict({"--seed", "7", "--repeat", "3", "--scenario", "1x R7625 64GFC"}, plan, dir_ / "a");
  const fs::path second =
      predict({"--seed", "7", "--repeat", "3", "--scenario", "1x R7625 64GFC"}, plan, dir_ / "b");
  const json a = summary_of(first), b = summary_of(second);
  ASSERT_EQ(a["scenarios"].size(), 3u);
  std::vector<double> means;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a["scenarios"][i]["milestones"]["ready"], b["scenarios"][i]["milestones"]["ready"])
        << "repeat " << i + 1;
    means.push_back(a["scenarios"][i]["milestones"]["ready"]["meanS"].get<double>());
  }
  EXPECT_FALSE(means[0] == means[1] && means[1] == means[2]) << "each repetition has its own seed";
  EXPECT_EQ(a["run"]["id"], b["run"]["id"]) << "the run id follows the plan, the profile and the seed";
  EXPECT_TRUE(first.filename().string().ends_with("-predicted")) << first;

  const std::string md = read_file(first / "report.md");
  EXPECT_NE(md.find("\u2014 predicted"), std::string::npos);
  EXPECT_NE(md.find("Predicted by the lab model \u201ctolly-2024\u201d in virtual time (seed 7)"),
            std::string::npos);
  EXPECT_EQ(md.find("Simulated lab"), std::string::npos) << "a prediction is not a simulated measurement";
  EXPECT_NE(read_file(first / "report.html").find("<strong>Predicted</strong>"), std::string::npos);
  EXPECT_NE(read_file(first / "junit.xml").find("name=\"source\" value=\"predicted\""), std::string::npos);

  // report re-renders it from the journal alone; compare reads it; cleanup knows nothing was created.
  const json before = a;
  auto report = bootstorm({"report", first.string()});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(summary_of(first)["scenarios"], before["scenarios"]);
  auto compare = bootstorm({"compare", first.string(), second.string(), "--out", (dir_ / "cmp").string()});
  ASSERT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_NE(read_file(dir_ / "cmp" / "compare.md").find("(predicted)"), std::string::npos);
  auto cleanup = bootstorm({"cleanup", first.string()});
  EXPECT_EQ(cleanup.exit_code, 0) << cleanup.err;
  EXPECT_NE((cleanup.out + cleanup.err).find("prediction"), std::string::npos) << cleanup.out << cleanup.err;
}

// tolly-2024's R740 layout is bound by the per-I/O latency of its host path, not by its 16G link: a 32G HBA
// barely moves it, a shorter path does; the R7625 is untouched by either. What-ifs share the model's random
// draws, so each difference is the what-if's alone.
TEST_F(SizingE2E, WhatIfsMoveOnlyTheLayoutTheyChangeAndTheR740sAreLatencyBound) {
  const fs::path plan = consolidation_plan();
  const auto base = ready_means(summary_of(predict({}, plan, dir_ / "base")));
  const fs::path hba_dir = predict({"--set", "hosts.r740-*.linkMBps=3200"}, plan, dir_ / "hba");
  const auto hba = ready_means(summary_of(hba_dir));
  const auto path =
      ready_means(summary_of(predict({"--set", "hosts.r740-*.ioLatencyMs=0.9"}, plan, dir_ / "path")));
  EXPECT_DOUBLE_EQ(hba.at("1x R7625 64GFC"), base.at("1x R7625 64GFC"));
  EXPECT_DOUBLE_EQ(path.at("1x R7625 64GFC"), base.at("1x R7625 64GFC"));
  EXPECT_LE(hba.at("4x R740 16GFC"), base.at("4x R740 16GFC"));
  EXPECT_GT(hba.at("4x R740 16GFC"), 0.9 * base.at("4x R740 16GFC")) << "twice the link, hardly faster";
  EXPECT_LT(path.at("4x R740 16GFC"), 0.8 * base.at("4x R740 16GFC")) << "half the path latency, much faster";
  EXPECT_NE(read_file(hba_dir / "report.html").find("what-if: hosts.r740-*.linkMBps=3200"),
            std::string::npos);
  // The storage the model moved is in the report as a run's telemetry is: the same bytes through a link of
  // twice the capacity fill half of it.
  auto r740_peak_utilisation = [](const json& summary) {
    double peak = 0;
    for (const auto& sc : summary["scenarios"]) {
      if (sc["name"] != "4x R740 16GFC") continue;
      EXPECT_EQ(sc["telemetry"]["source"], "lab model");
      for (const auto& host : sc["telemetry"]["hosts"])
        peak = std::max(peak, host.value("peakLinkUtilisation", 0.0));
    }
    return peak;
  };
  const double before = r740_peak_utilisation(summary_of(run_dir_in(dir_ / "base")));
  const double after = r740_peak_utilisation(summary_of(hba_dir));
  EXPECT_GT(before, 0);
  EXPECT_NEAR(after, before / 2, 0.01 * before);
}

TEST_F(SizingE2E, BadInputIsAPreciseMessageWithExitTwo) {
  const fs::path plan = consolidation_plan();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--set", "hosts.r740-01.linkMbps=3200"}, "unknown key"},
      {{"--set", "hosts.r999-*.linkMBps=3200"}, "has no item named 'r999-*'"},
      {{"--set", "hosts.r740-01.linkMBps"}, "is not KEY=VALUE"},
      {{"--set", "hosts.r740-01.linkMBps=fast"}, "linkMBps"},
      {{"--set", "datastores=1"}, "is a section, not a value"},
      {{"--lab", "no-such-lab"}, "Lab profile 'no-such-lab' not found"},
      {{"--scenario", "2x nothing"}, "no scenario named '2x nothing'"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"predict", plan.string(), "--out", (dir_ / "bad").string()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = bootstorm(args);
    EXPECT_EQ(r.exit_code, 2) << c.args.front() << " " << c.args.back() << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args.back() << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "bad") && !fs::is_empty(dir_ / "bad")) << "nothing is written for bad input";
}

}  // namespace
