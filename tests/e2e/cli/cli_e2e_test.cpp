// The bootstorm executable as users run it: help, version, validate on the example and invalid plans,
// exit codes. Each test runs the binary as a child process with stdout and stderr captured to files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/lab_process.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;

using Result = bootstorm::test_support::CliRun;
using bootstorm::test_support::read_file;
using bootstorm::test_support::ScratchDir;

// Runs `bootstorm ARGS...` in `cwd`.
Result run(const std::vector<std::string>& args, const fs::path& cwd = fs::current_path()) {
  const ScratchDir scratch("cli-e2e");
  return bootstorm::test_support::run_cli(args, scratch / "cmd", std::chrono::seconds(120), {}, cwd);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::vector<fs::path> files_in(const fs::path& dir, std::initializer_list<const char*> extensions) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    for (const char* ext : extensions) {
      if (e.path().extension() == ext) out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const fs::path kPlans = fs::path(BOOTSTORM_SOURCE_DIR) / "plans";
const fs::path kInvalid = fs::path(BOOTSTORM_TEST_DATA) / "plans/invalid";

TEST(CliE2e, HelpListsEverySubcommandWithOneLineOfHelp) {
  Result r = run({"--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto pos = r.out.find("Subcommands:");
  ASSERT_NE(pos, std::string::npos) << r.out;
  std::string section = r.out.substr(pos);
  // Every cmd_<name>.cpp of the CLI registers subcommand <name>.
  auto sources = files_in(fs::path(BOOTSTORM_SOURCE_DIR) / "orchestrator/cli", {".cpp"});
  int commands = 0;
  for (const auto& source : sources) {
    std::string stem = source.stem().string();
    if (stem.rfind("cmd_", 0) != 0) continue;
    ++commands;
    std::string name = stem.substr(4);
    std::regex line("\\n  " + name + " +\\S[^\\n]*");
    EXPECT_TRUE(std::regex_search(section, line)) << "subcommand " << name << " missing from\n" << r.out;
  }
  EXPECT_GE(commands, 2);
  EXPECT_NE(r.out.find("--log-format"), std::string::npos);
  EXPECT_NE(r.out.find("-v,--verbose"), std::string::npos);
  EXPECT_NE(r.out.find("-q,--quiet"), std::string::npos);
}

TEST(CliE2e, Version) {
  Result r = run({"version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "bootstorm " + std::string(BOOTSTORM_EXPECTED_VERSION) + "\n");
  // From a git checkout: <project version>+git<commit count>.<12-digit commit>, which Debian versions sort.
  if (std::filesystem::exists(std::string(BOOTSTORM_SOURCE_DIR) + "/.git")) {
    EXPECT_TRUE(std::regex_match(
        r.out, std::regex("bootstorm [0-9]+\\.[0-9]+\\.[0-9]+\\+git[0-9]+\\.[0-9a-f]{12}\\n")))
        << r.out;
  }
  Result flag = run({"--version"});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, r.out);
}

TEST(CliE2e, ValidateAcceptsEveryExamplePlan) {
  auto plans = files_in(kPlans, {".yaml", ".yml", ".json"});
  ASSERT_GE(plans.size(), 2u);
  for (const auto& plan : plans) {
    Result r = run({"validate", plan.string()});
    EXPECT_EQ(r.exit_code, 0) << plan << "\n" << r.err;
    EXPECT_TRUE(std::regex_match(
        r.out, std::regex(std::regex_replace(plan.string(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                          ": valid \\((\\d+ scenarios?, \\d+ VMs?|MigrationPlan, .+)\\)\\n")))
        << r.out;
    EXPECT_EQ(r.err, "") << plan;
  }
}

TEST(CliE2e, ValidateCountsScenariosAndVms) {
  Result r = run({"validate", "consolidation-4x16g-vs-1x64g.yaml"}, kPlans);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "consolidation-4x16g-vs-1x64g.yaml: valid (2 scenarios, 48 VMs)\n");
}

TEST(CliE2e, ValidateRejectsEveryInvalidPlanWithFileLineColumnMessages) {
  auto plans = files_in(kInvalid, {".yaml", ".json"});
  ASSERT_GE(plans.size(), 18u);
  for (const auto& plan : plans) {
    std::string name = plan.filename().string();
    Result r = run({"validate", name}, kInvalid);
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_EQ(r.out, "") << name;
    auto expected_path = plan;
    expected_path.replace_extension(".expected");
    auto expected = lines_of(read_file(expected_path));
    auto actual = lines_of(r.err);
    ASSERT_FALSE(actual.empty()) << name;
    // Diagnostics first, then one summary line.
    EXPECT_TRUE(std::regex_match(actual.back(), std::regex(".*: invalid \\(\\d+ problems?\\)")))
        << actual.back();
    actual.pop_back();
    EXPECT_EQ(actual, expected) << name;
  }
}

TEST(CliE2e, ValidateReportsEachPlanAndExitsTwoIfAnyIsInvalid) {
  Result r =
      run({"validate", (kPlans / "kubevirt-density.yaml").string(), "zero-vms.yaml", "negative-repeat.yaml"},
          kInvalid);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("kubevirt-density.yaml: valid (2 scenarios, 60 VMs)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("zero-vms.yaml:13:29: scenarios[0].placement[1].vms must be greater than 0, got 0"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("negative-repeat.yaml:16:9: repeat must be greater than 0, got -1"), std::string::npos)
      << r.err;
}

TEST(CliE2e, ValidateMissingFileExitsTwo) {
  Result r = run({"validate", "/nonexistent/plan.yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/plan.yaml: cannot read the plan file"), std::string::npos) << r.err;
}

TEST(CliE2e, ValidatePrintWritesAResolvedPlanThatValidatesAgain) {
  const ScratchDir scratch("cli-e2e");
  const auto plans = files_in(kPlans, {".yaml"});
  ASSERT_GE(plans.size(), 3u);
  for (const auto& plan : plans) {
    Result r = run({"validate", "--print", plan.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Defaults are filled in: a storm timeout (StormPlan) or the whole-migration timeout (MigrationPlan).
    EXPECT_TRUE(r.out.find("timeout: 10m") != std::string::npos ||
                r.out.find("timeout: 4h") != std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("requestsPerSecond: 50"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find(": valid ("), std::string::npos) << r.err;  // the summary stays off stdout
    fs::path resolved = scratch.path() / plan.filename();
    std::ofstream(resolved) << r.out;
    Result again = run({"validate", "--print", resolved.string()});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    // Comment line names the source file; everything after it is identical.
    EXPECT_EQ(again.out.substr(again.out.find('\n')), r.out.substr(r.out.find('\n'))) << plan;
  }
}

TEST(CliE2e, UsageErrorsExitTwo) {
  Result unknown_flag = run({"--definitely-not-a-flag"});
  EXPECT_EQ(unknown_flag.exit_code, 2);
  EXPECT_NE(unknown_flag.err.find("--definitely-not-a-flag"), std::string::npos) << unknown_flag.err;

  Result unknown_validate_flag =
      run({"validate", "--strictest", (kPlans / "kubevirt-density.yaml").string()});
  EXPECT_EQ(unknown_validate_flag.exit_code, 2);

  Result no_plan = run({"validate"});
  EXPECT_EQ(no_plan.exit_code, 2);
  EXPECT_NE(no_plan.err.find("plans"), std::string::npos) << no_plan.err;

  Result unknown_command = run({"frobnicate"});
  EXPECT_EQ(unknown_command.exit_code, 2);

  Result nothing = run({});
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_NE(nothing.err.find("Subcommands:"), std::string::npos) << nothing.err;

  Result bad_format = run({"--log-format", "xml", "version"});
  EXPECT_EQ(bad_format.exit_code, 2);
  EXPECT_EQ(bad_format.out, "");
}

TEST(CliE2e, GlobalFlagsAreAcceptedBeforeAndAfterTheSubcommand) {
  EXPECT_EQ(run({"-vv", "--log-format", "json", "version"}).exit_code, 0);
  EXPECT_EQ(run({"validate", "-q", (kPlans / "kubevirt-density.yaml").string()}).exit_code, 0);
}

}  // namespace
