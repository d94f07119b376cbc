// `bootstorm version`: the version, with +git<commit count>.<commit> when built from a git checkout (the
// Debian package's version is the same string).
#include <iostream>

#include "orchestrator/cli/command.hpp"

#ifndef BOOTSTORM_VERSION
#error "BOOTSTORM_VERSION is set by orchestrator/cli/CMakeLists.txt"
#endif

namespace bootstorm::cli {
namespace {

const CommandRegistration registration{
    Command{"version", 900, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
              app.add_subcommand("version", "Print the bootstorm version");
              app.set_version_flag("--version", "bootstorm " BOOTSTORM_VERSION, "Print the version and exit");
              return [] {
                std::cout << "bootstorm " << BOOTSTORM_VERSION << "\n";
                return kExitOk;
              };
            }}};

}  // namespace
}  // namespace bootstorm::cli
