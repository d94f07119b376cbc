#include "reports/compare.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/reports.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/unit/reports/fixture.hpp"

namespace bootstorm::reports {
namespace {

using testing::fixture_record;
using testing::kGeneratedAt;

// A record with only the named scenario of the fixture (as a run that ran one layout).
results::RunRecord only(const std::string& scenario, const std::string& run_id) {
  results::RunRecord r = fixture_record();
  r.run_id = run_id;
  std::erase_if(r.scenarios, [&](const auto& s) { return s.name != scenario; });
  std::erase_if(r.vms, [&](const auto& v) { return v.scenario != scenario; });
  return r;
}

class Compare : public ::testing::Test {
 protected:
  std::filesystem::path write(const results::RunRecord& r, const std::string& name) {
    auto res = write_run_outputs(root / name, r, results::summarize(r), kGeneratedAt);
    EXPECT_TRUE(res.has_value());
    return root / name;
  }

  test_support::ScratchDir root{"compare"};
};

TEST_F(Compare, LoadRunRecoversBootTimesFromVmsCsv) {
  const auto record = fixture_record();
  const auto dir = write(record, "run");
  auto run = load_run(dir);
  ASSERT_TRUE(run.has_value()) << run.error().what();
  const auto expected = results::summarize(record);
  ASSERT_EQ(run->summary.scenarios.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& got = run->summary.scenarios[i].boot_times_s;
    const auto& want = expected.scenarios[i].boot_times_s;
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-6);
  }
  EXPECT_EQ(run->summary.scenarios[0].ready_milestone, "guest_agent");
}

TEST_F(Compare, ScenariosOfOneRun) {
  const auto dir = write(fixture_record(), "run");
  std::ostringstream out, err;
  CompareOptions options;
  options.runs = {dir};
  options.generated_at = kGeneratedAt;
  ASSERT_EQ(run_compare(options, out, err), 0) << err.str();
  EXPECT_EQ(out.str().rfind("1x R7625 64GFC boots 8 VMs ", 0), 0u) << out.str();
  EXPECT_NE(out.str().find("% faster on average than 4x R740 16GFC (95 % CI "), std::string::npos)
      << out.str();
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "compare.md"));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "compare.html"));
}

TEST_F(Compare, DifferentLayoutsAcrossRunsAndOutDir) {
  const auto a = write(only("4x R740 16GFC", "aaaaaa"), "a");
  const auto b = write(only("1x R7625 64GFC", "bbbbbb"), "b");
  std::ostringstream out, err;
  CompareOptions options;
  options.runs = {a, b};
  options.out_dir = root / "cmp";
  ASSERT_EQ(run_compare(options, out, err), 0) << err.str();
  EXPECT_EQ(out.str().rfind("1x R7625 64GFC boots 8 VMs ", 0), 0u) << out.str();
  EXPECT_TRUE(std::filesystem::is_regular_file(root / "cmp" / "compare.html"));
  EXPECT_FALSE(std::filesystem::exists(a / "compare.md"));
}

TEST_F(Compare, SameScenarioAcrossRunsIsLabelledByRun) {
  auto slower = only("1x R7625 64GFC", "bbbbbb");
  for (auto& vm : slower.vms) {
    *vm.ready_s *= 1.5;
    vm.milestones[api::Milestone::guest_agent].offset_s *= 1.5;
  }
  const auto a = write(only("1x R7625 64GFC", "aaaaaa"), "a");
  const auto b = write(slower, "b");
  std::vector<LoadedRun> runs;
  for (const auto& d : {a, b}) runs.push_back(load_run(d).value());
  auto set = compare_runs(runs);
  ASSERT_TRUE(set.has_value()) << set.error().what();
  ASSERT_EQ(set->comparisons.size(), 1u);
  EXPECT_EQ(set->comparisons[0].baseline.label, "1x R7625 64GFC (run aaaaaa)");
  EXPECT_EQ(set->comparisons[0].candidate.label, "1x R7625 64GFC (run bbbbbb)");
  EXPECT_NEAR(set->comparisons[0].mean_rel, 0.5, 1e-6);
  EXPECT_EQ(set->comparisons[0].verdict.rfind("1x R7625 64GFC (run aaaaaa) boots 8 VMs 33 % faster", 0), 0u)
      << set->comparisons[0].verdict;
  // Only the guest's part grew (its guest_agent came later, its power-on did not): that is the phase named.
  const auto grown = phase_growth(runs);
  ASSERT_EQ(grown.size(), 1u);
  EXPECT_EQ(grown[0].rfind(
                "\u201c1x R7625 64GFC\u201d, run aaaaaa \u2192 run bbbbbb: the guest and storage phase grew "
                "most, 6.38 s \u2192 10.25 s",
                0),
            0u)
      << grown[0];
  // The other way round nothing grew.
  std::swap(runs[0], runs[1]);
  EXPECT_TRUE(phase_growth(runs).empty());
}

// The clone methods the platform said it used travel through summary.json; runs that used different ones
// are flagged, runs that did not say are not.
TEST_F(Compare, RunsWhoseVmsWereClonedDifferentlyAreFlagged) {
  results::RunRecord smart = fixture_record(), copied = fixture_record(), silent = fixture_record();
  smart.run_id = "smart";
  copied.run_id = "copied";
  silent.run_id = "silent";
  for (auto& vm : smart.vms) vm.clone_method = "csi-clone";
  for (auto& vm : copied.vms) vm.clone_method = vm.name.back() == '1' ? "csi-clone" : "copy";
  auto a = load_run(write(smart, "smart"));
  auto b = load_run(write(copied, "copied"));
  auto c = load_run(write(silent, "silent"));
  ASSERT_TRUE(a && b && c);
  const auto warnings = platform_warnings({*a, *b});
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_EQ(warnings[0], "run smart vs run copied: clone method used: csi-clone vs copy, csi-clone");
  EXPECT_TRUE(platform_warnings({*a, *c}).empty());
  EXPECT_TRUE(platform_warnings({*a, *a}).empty());
}

TEST_F(Compare, ErrorsAreUsageErrors) {
  std::ostringstream out, err;
  CompareOptions missing;
  missing.runs = {root / "does-not-exist"};
  EXPECT_EQ(run_compare(missing, out, err), 2);
  EXPECT_NE(err.str().find("summary.json"), std::string::npos) << err.str();

  // One run with one scenario: nothing to compare.
  const auto single = write(only("4x R740 16GFC", "cccccc"), "single");
  std::ostringstream err2;
  CompareOptions one;
  one.runs = {single};
  EXPECT_EQ(run_compare(one, out, err2), 2);
  EXPECT_NE(err2.str().find("nothing to compare"), std::string::npos) << err2.str();

  // vms.csv that does not belong to the summary.
  const auto dir = write(fixture_record(), "mismatch");
  std::ofstream(dir / "vms.csv", std::ios::trunc)
      << render_vms_csv(only("4x R740 16GFC", "x")) << "other,1,vm,h,\n";
  auto run = load_run(dir);
  ASSERT_FALSE(run.has_value());
  EXPECT_NE(run.error().message.find("\"other\""), std::string::npos) << run.error().message;
}

}  // namespace
}  // namespace bootstorm::reports
