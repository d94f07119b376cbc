// run_cli() with fake subcommands: registration order, dispatch, global flags, exit codes, help text.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "common/log.hpp"
#include "orchestrator/cli/app.hpp"

namespace bootstorm::cli {
namespace {

// What the fake commands saw.
std::vector<std::string> g_calls;
std::string g_echo_arg;
int g_echo_verbosity_at_run = -99;

const CommandRegistration zeta{
    Command{"zeta", 5, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
              app.add_subcommand("zeta", "Zeta does the last thing first");
              return [] {
                g_calls.push_back("zeta");
                return kExitOk;
              };
            }}};

const CommandRegistration echo{
    Command{"echo", 50, [](CLI::App& app, const GlobalOptions& globals) -> std::function<int()> {
              auto* sub = app.add_subcommand("echo", "Echo one argument");
              sub->add_option("word", g_echo_arg, "The word")->required();
              return [&globals] {
                g_calls.push_back("echo");
                g_echo_verbosity_at_run = globals.verbosity;
                return g_echo_arg == "fail" ? kExitFailed : kExitOk;
              };
            }}};

const CommandRegistration alpha{
    Command{"alpha", 50, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
              app.add_subcommand("alpha", "Alpha throws");
              return []() -> int { throw std::runtime_error("alpha exploded"); };
            }}};

int run(std::vector<const char*> args) {
  args.insert(args.begin(), "bootstorm");
  return run_cli(static_cast<int>(args.size()), args.data());
}

class CliApp : public ::testing::Test {
 protected:
  void SetUp() override {
    g_calls.clear();
    g_echo_arg.clear();
    g_echo_verbosity_at_run = -99;
  }
};

TEST_F(CliApp, RegistryIsOrderedByOrderThenName) {
  std::vector<std::string> names;
  for (const auto& c : registered_commands()) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"zeta", "alpha", "echo"}));
}

TEST_F(CliApp, DispatchesToTheChosenSubcommandOnly) {
  EXPECT_EQ(run({"echo", "hello"}), kExitOk);
  EXPECT_EQ(g_calls, std::vector<std::string>{"echo"});
  EXPECT_EQ(g_echo_arg, "hello");
}

TEST_F(CliApp, SubcommandExitCodeIsReturned) {
  EXPECT_EQ(run({"echo", "fail"}), kExitFailed);
}

TEST_F(CliApp, VerbosityFlags) {
  EXPECT_EQ(run({"echo", "x"}), kExitOk);
  EXPECT_EQ(g_echo_verbosity_at_run, 0);
  EXPECT_EQ(run({"-v", "echo", "x"}), kExitOk);
  EXPECT_EQ(g_echo_verbosity_at_run, 1);
  EXPECT_EQ(run({"-vv", "echo", "x"}), kExitOk);
  EXPECT_EQ(g_echo_verbosity_at_run, 2);
  EXPECT_EQ(run({"echo", "-v", "-v", "x"}), kExitOk);  // global flags after the subcommand
  EXPECT_EQ(g_echo_verbosity_at_run, 2);
  EXPECT_EQ(run({"-q", "echo", "x"}), kExitOk);
  EXPECT_EQ(g_echo_verbosity_at_run, -1);
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::warn);
  EXPECT_EQ(run({"-vv", "echo", "x"}), kExitOk);
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::trace);
}

TEST_F(CliApp, LogFormat) {
  EXPECT_EQ(run({"--log-format", "json", "echo", "x"}), kExitOk);
  EXPECT_EQ(last_global_options().log_format, "json");
  EXPECT_EQ(run({"--log-format", "xml", "echo", "x"}), kExitUsage);
  EXPECT_TRUE(g_calls.size() == 1u);
}

TEST_F(CliApp, UsageErrorsExitTwoWithoutRunningAnything) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"--no-such-flag", "echo", "x"}), kExitUsage);
  EXPECT_EQ(run({"echo"}), kExitUsage);  // missing required argument
  EXPECT_EQ(run({"nosuchcommand"}), kExitUsage);
  EXPECT_EQ(run({"-q", "-v", "echo", "x"}), kExitUsage);  // -q excludes -v
  EXPECT_EQ(run({}), kExitUsage);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(g_calls.empty());
  EXPECT_NE(err.find("--no-such-flag"), std::string::npos) << err;
  EXPECT_NE(err.find("no subcommand given"), std::string::npos) << err;
}

TEST_F(CliApp, HelpListsEverySubcommandWithItsDescription) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run({"--help"}), kExitOk);
  std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("zeta"), std::string::npos) << out;
  EXPECT_NE(out.find("Zeta does the last thing first"), std::string::npos) << out;
  EXPECT_NE(out.find("Echo one argument"), std::string::npos) << out;
  EXPECT_NE(out.find("Alpha throws"), std::string::npos) << out;
  EXPECT_LT(out.find("zeta"), out.find("alpha"));  // --help follows the registration order
  EXPECT_TRUE(g_calls.empty());
}

TEST_F(CliApp, ExceptionsFromSubcommandsPropagateToMain) {
  EXPECT_THROW(run({"alpha"}), std::runtime_error);
}

}  // namespace
}  // namespace bootstorm::cli
