#pragma once
// Subcommand registration. Each subcommand lives in its own file orchestrator/cli/cmd_<name>.cpp and
// registers itself with a static CommandRegistration (the CLI is an executable, so every object file is
// linked and every registration runs). main.cpp builds the CLI11 app, adds every registered command in
// `order`, parses, and runs the chosen one.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace bootstorm::cli {

// Exit codes everywhere: 0 success, 1 run failed or SLO missed, 2 usage error or invalid input,
// 130 interrupted.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

// Options common to every subcommand (set by main before the command runs).
struct GlobalOptions {
  int verbosity = 0;                // -v (1), -vv (2); -q sets -1
  std::string log_format = "text";  // text | json
};

struct Command {
  std::string name;
  int order = 100;  // position in --help
  // Adds the subcommand to `app` and returns the function that runs it after parsing (returns the exit code).
  std::function<std::function<int()>(CLI::App& app, const GlobalOptions& globals)> setup;
};

void register_command(Command command);
const std::vector<Command>& registered_commands();

struct CommandRegistration {
  explicit CommandRegistration(Command command) { register_command(std::move(command)); }
};

}  // namespace bootstorm::cli
