// `bootstorm lab fit` through the real CLI: real-time runs on the embedded lab, made with a copy of
// tolly-2024 whose datastore serves each I/O 50 % slower, give back that latency when the R7625 layout is
// fitted with tolly-2024 as the starting point; the fitted profile then predicts the R740 layout, which was
// not fitted to, within 5 % of its own real-time run. What the runs cannot determine is refused with exit 2.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/e2e/sizing/sizing_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::read_file;
using bootstorm::test_support::SizingE2E;
using bootstorm::test_support::write_file;
using nlohmann::json;

constexpr double kLatencyMs = 0.15;          // tolly-2024's datastore latency
constexpr double kAlteredLatencyMs = 0.225;  // +50 %
const std::string kKey = "datastores.tolly-aff-ds01.latencyMs";

class LabFitE2E : public SizingE2E {
 protected:
  LabFitE2E() : SizingE2E("lab-fit-e2e") {}

  // tolly-2024 with the datastore's latency altered, and the consolidation plan on it without telemetry.
  fs::path altered_plan() {
    std::string profile = read_file(fs::path(BOOTSTORM_SOURCE_DIR) / "simulator/labs/tolly-2024.yaml");
    const std::string from = "{name: tolly-aff-ds01, MBps: 12000, iops: 1000000, latencyMs: 0.15,";
    const auto at = profile.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    profile.replace(at, from.size(), "{name: tolly-aff-ds01, MBps: 12000, iops: 1000000, latencyMs: 0.225,");
    write_file(dir_ / "altered.yaml", profile);
    const fs::path plan = consolidation_plan();
    std::string text = read_file(plan);
    const auto lab = text.find("  lab: tolly-2024");
    text.replace(lab, text.find('\n', lab) - lab, "  lab: " + (dir_ / "altered.yaml").string());
    write_file(plan, text + "telemetry: {source: none}\n");
    return plan;
  }

  fs::path run(const fs::path& plan, const std::vector<std::string>& extra, const fs::path& out) {
    std::vector<std::string> args = {"run", plan.string(), "--yes", "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = bootstorm(args, std::chrono::seconds(600));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return run_dir_in(out);
  }

  static double fitted_value(const std::string& profile) {
    std::smatch m;
    const std::regex line("# Fitted: " + std::regex_replace(kKey, std::regex("\\."), "\\.") +
                          " [0-9.]+ -> ([0-9.]+)");
    if (!std::regex_search(profile, m, line)) return -1;
    return std::stod(m[1]);
  }
};

TEST_F(LabFitE2E, AnAlteredDatastoreLatencyIsRecoveredAndPredictsTheOtherLayout) {
  const fs::path plan = altered_plan();
  const fs::path r7625 = run(plan, {"--scenario", "1x R7625 64GFC", "--repeat", "3"}, dir_ / "r7625");
  const fs::path r740 = run(plan, {"--scenario", "4x R740 16GFC"}, dir_ / "r740");

  const fs::path fitted = dir_ / "fitted.yaml";
  auto fit = bootstorm(
      {"lab", "fit", r7625.string(), "--lab", "tolly-2024", "--fit", kKey, "--out", fitted.string()},
      std::chrono::seconds(300));
  ASSERT_EQ(fit.exit_code, 0) << fit.out << fit.err;
  const std::string profile = read_file(fitted);
  const double latency = fitted_value(profile);
  RecordProperty("fitted_latency_ms", std::to_string(latency));
  EXPECT_NEAR(latency, kAlteredLatencyMs, 0.05 * kAlteredLatencyMs)
      << "fitted from " << kLatencyMs << " ms: " << fit.out;
  EXPECT_NE(profile.find(r7625.filename().string()), std::string::npos)
      << "the runs are named in the profile";
  EXPECT_NE(profile.find("RMS relative residual"), std::string::npos);

  // The fitted profile predicts the layout it was not fitted to.
  const json predicted = summary_of(
      predict({"--lab", fitted.string(), "--scenario", "4x R740 16GFC"}, plan, dir_ / "predicted"));
  const double measured_mean = ready_means(summary_of(r740)).at("4x R740 16GFC");
  const double predicted_mean = ready_means(predicted).at("4x R740 16GFC");
  RecordProperty("r740_measured_mean_s", std::to_string(measured_mean));
  RecordProperty("r740_predicted_mean_s", std::to_string(predicted_mean));
  EXPECT_NEAR(predicted_mean, measured_mean, 0.05 * measured_mean);

  // What one layout cannot determine is refused, with exit 2.
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--fit", kKey, "--fit", "hosts.r7625-01.ioLatencyMs"}, "cannot determine more parameters"},
      {{"--fit", "hosts.r740-01.linkMBps"}, "the runs cannot determine it"},
      {{"--fit", "datastores.tolly-aff-ds01.latencyMsec"}, "unknown key"},
      {{"--fit", "profiles.win10-vdi.guestOS"}, "is not a number"},
  };
  int n = 0;
  for (const auto& c : cases) {
    std::vector<std::string> args = {"lab",
                                     "fit",
                                     r7625.string(),
                                     "--lab",
                                     "tolly-2024",
                                     "--out",
                                     (dir_ / ("bad" + std::to_string(n++) + ".yaml")).string()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = bootstorm(args, std::chrono::seconds(120));
    EXPECT_EQ(r.exit_code, 2) << c.says << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.says << ": " << r.err;
  }
  auto exists = bootstorm(
      {"lab", "fit", r7625.string(), "--lab", "tolly-2024", "--fit", kKey, "--out", fitted.string()});
  EXPECT_EQ(exists.exit_code, 2);
  EXPECT_NE(exists.err.find("the file exists"), std::string::npos) << exists.err;
}

}  // namespace
