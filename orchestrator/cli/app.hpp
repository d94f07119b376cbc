#pragma once
// The command-line front used by main(): builds the CLI11 app from every registered subcommand
// (registered_commands()), parses argv, initialises logging from the global flags and runs the chosen
// subcommand. Returns the process exit code (command.hpp); parse errors print CLI11's message and return 2.
// Exceptions from a subcommand propagate (main() turns them into exit 1).
#include "orchestrator/cli/command.hpp"

namespace bootstorm::cli {

int run_cli(int argc, const char* const* argv);

// The global options of the last run_cli() call after parsing (for tests).
const GlobalOptions& last_global_options();

}  // namespace bootstorm::cli
