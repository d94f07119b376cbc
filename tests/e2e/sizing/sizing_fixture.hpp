#pragma once
// The fixture of the sizing e2e tests (predict, capacity): the example consolidation plan with its run
// directories in the test's scratch directory, and readers of what the CLI wrote.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/lab_fixture.hpp"
#include "tests/support/run_files.hpp"

namespace bootstorm::test_support {

class SizingE2E : public LabCliTest {
 protected:
  explicit SizingE2E(const char* name = "sizing-e2e") : LabCliTest(name) {}

  // The example consolidation plan with its run directories in the test's scratch directory.
  std::filesystem::path consolidation_plan() {
    std::string text =
        read_file(std::filesystem::path(BOOTSTORM_SOURCE_DIR) / "plans/consolidation-4x16g-vs-1x64g.yaml");
    const std::string from = "output: runs ";
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), "output: " + (dir_ / "out").string() + " ");
    const std::filesystem::path plan = dir_ / ("consolidation-" + std::to_string(plans_++) + ".yaml");
    write_file(plan, text);
    return plan;
  }

  static nlohmann::json summary_of(const std::filesystem::path& run_dir) {
    return nlohmann::json::parse(read_file(run_dir / "summary.json"));
  }

  // Each scenario's ready mean (seconds), by name.
  static std::map<std::string, double> ready_means(const nlohmann::json& summary) {
    std::map<std::string, double> out;
    for (const auto& sc : summary["scenarios"])
      out[sc["name"].get<std::string>()] = sc["milestones"]["ready"]["meanS"].get<double>();
    return out;
  }

  std::filesystem::path predict(const std::vector<std::string>& extra, const std::filesystem::path& plan,
                                const std::filesystem::path& out) {
    std::vector<std::string> args = {"predict", plan.string(), "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = bootstorm(args, std::chrono::seconds(120));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return run_dir_in(out);
  }

  int plans_ = 0;
};

}  // namespace bootstorm::test_support
