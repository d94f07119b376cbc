// The whole CLI with a third platform kind that only the test tree has ("fakecloud",
// tests/support/fake_platform.hpp), registered next to the built-in kinds as main() registers those:
// `validate`, `check`, `run`, `report` and `cleanup` all work through it. Its plan has a golden section no
// built-in kind has (image, flavor); its provider receives the kind's own typed settings; the run's plan.yaml
// keeps them, and cleanup reads them back. No file under orchestrator/ or providers/api/ names the kind.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "orchestrator/cli/app.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "providers/api/provider.hpp"
#include "tests/support/fake_platform.hpp"
#include "tests/unit/orchestrator/engine/fake_provider.hpp"
#include "tests/unit/orchestrator/engine/test_support.hpp"

namespace bootstorm::cli {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code = 0;
  std::string out;
  std::string err;
};

Outcome bootstorm(std::vector<std::string> args) {
  args.insert(args.begin(), "bootstorm");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  Outcome o;
  o.exit_code = run_cli(static_cast<int>(argv.size()), argv.data());
  o.out = testing::internal::GetCapturedStdout();
  o.err = testing::internal::GetCapturedStderr();
  return o;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ThirdPlatformCli : public ::testing::Test {
 protected:
  void SetUp() override {
    register_builtin_platforms();
    auto factory = test::fake_factory(behaviour_, record_);
    api::register_platform(test_support::fake_platform_descriptor(),
                           [this, factory](boost::asio::any_io_executor ex, const api::ProviderConfig& c) {
                             configs_.push_back(c);
                             return factory(ex, c);
                           });
    ::setenv("BOOTSTORM_TEST_FAKECLOUD_USER", "desk-admin", 1);
    ::setenv("BOOTSTORM_TEST_FAKECLOUD_PASSWORD", "desk-pass-456", 1);
    plan_ = dir_.path() / "desks.yaml";
    std::ofstream(plan_) << "apiVersion: bootstorm.io/v1\n"
                            "kind: StormPlan\n"
                            "name: desks\n"
                            "platform:\n"
                            "  kind: fakecloud\n"
                            "  endpoint: metadata-service\n"
                            "  credentials: {usernameEnv: BOOTSTORM_TEST_FAKECLOUD_USER,\n"
                            "                passwordEnv: BOOTSTORM_TEST_FAKECLOUD_PASSWORD}\n"
                            "golden: {image: desk-11, flavor: large, clone: thick}\n"
                            "namespace: desks\n"
                            "scenarios:\n"
                            "  - name: two hosts\n"
                            "    placement: [{host: rack-1, vms: 2}, {host: rack-2, vms: 2}]\n"
                            "storm: {timeout: 10s}\n"
                            "ready: {signal: running}\n"
                            "cleanup: never\n"
                            "output: "
                         << (dir_.path() / "runs").string() << "\n";
  }

  void TearDown() override {
    ::unsetenv("BOOTSTORM_TEST_FAKECLOUD_USER");
    ::unsetenv("BOOTSTORM_TEST_FAKECLOUD_PASSWORD");
  }

  fs::path only_run_dir() const {
    std::vector<fs::path> runs;
    for (const auto& e : fs::directory_iterator(dir_.path() / "runs"))
      if (e.is_directory()) runs.push_back(e.path());
    EXPECT_EQ(runs.size(), 1u);
    return runs.empty() ? fs::path() : runs.front();
  }

  test::ScratchDir dir_;
  fs::path plan_;
  test::FakeBehaviour behaviour_;
  std::shared_ptr<test::FakeRecord> record_ = std::make_shared<test::FakeRecord>();
  std::vector<api::ProviderConfig> configs_;
};

TEST_F(ThirdPlatformCli, ValidateCheckRunReportAndCleanupWorkThroughIt) {
  // validate: its own keys, resolved with its defaults.
  Outcome validated = bootstorm({"validate", "--print", plan_.string()});
  ASSERT_EQ(validated.exit_code, 0) << validated.err;
  EXPECT_NE(validated.out.find("image: desk-11"), std::string::npos) << validated.out;
  EXPECT_NE(validated.out.find("flavor: large"), std::string::npos) << validated.out;
  EXPECT_NE(validated.out.find("namespace: desks"), std::string::npos) << validated.out;

  // A mistake in its own section, in its own words, at its place.
  const fs::path bad = dir_.path() / "bad.yaml";
  std::string text = read_file(plan_);
  text.replace(text.find("flavor: large"), 13, "flavor: huge");
  std::ofstream(bad) << text;
  Outcome refused = bootstorm({"validate", bad.string()});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("bad.yaml:9:34: golden.flavor must be one of small, large, got 'huge'"),
            std::string::npos)
      << refused.err;

  // check: its provider, built through its registered factory, answers.
  Outcome checked = bootstorm({"check", plan_.string()});
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  ASSERT_FALSE(configs_.empty());
  const auto& settings = configs_.back().settings.as<test_support::FakeCloudSettings>();
  EXPECT_EQ(settings.image, "desk-11");
  EXPECT_EQ(settings.flavor, "large");
  EXPECT_EQ(settings.clone, "thick");
  EXPECT_EQ(configs_.back().username, "desk-admin");

  // run: four desktops ready; the plan says cleanup never, so they stay.
  Outcome ran = bootstorm({"run", plan_.string(), "--yes"});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  EXPECT_EQ(record_->live.size(), 4u);
  const fs::path run_dir = only_run_dir();
  const std::string plan_yaml = read_file(run_dir / "plan.yaml");
  EXPECT_NE(plan_yaml.find("flavor: large"), std::string::npos) << plan_yaml;
  EXPECT_NE(read_file(run_dir / "journal.jsonl").find(R"("cloneKind":"thick")"), std::string::npos);

  // report: re-rendered from the journal.
  fs::remove(run_dir / "report.md");
  Outcome reported = bootstorm({"report", run_dir.string()});
  EXPECT_EQ(reported.exit_code, 0) << reported.err;
  const std::string report = read_file(run_dir / "report.md");
  EXPECT_NE(report.find("fakecloud"), std::string::npos) << report;
  EXPECT_NE(report.find("running"), std::string::npos) << report;

  // cleanup: the run's plan.yaml read back through the kind's reader, its four VMs deleted.
  Outcome cleaned = bootstorm({"cleanup", run_dir.string()});
  EXPECT_EQ(cleaned.exit_code, 0) << cleaned.out << cleaned.err;
  EXPECT_TRUE(record_->live.empty());
  EXPECT_EQ(record_->destroyed.size(), 4u);
  EXPECT_EQ(configs_.back().settings.as<test_support::FakeCloudSettings>().flavor, "large");
}

}  // namespace
}  // namespace bootstorm::cli
