// `bootstorm version`: the release and, when the build was configured from a git checkout, the commit.
#include <iostream>

#include "orchestrator/cli/command.hpp"

#ifndef BOOTSTORM_VERSION
#error "BOOTSTORM_VERSION is set by orchestrator/cli/CMakeLists.txt"
#endif
#ifndef BOOTSTORM_GIT_COMMIT
#define BOOTSTORM_GIT_COMMIT ""
#endif

namespace bootstorm::cli {
namespace {

const CommandRegistration registration{
    Command{"version", 900, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
              app.add_subcommand("version", "Print the bootstorm version (and git commit when known)");
              return [] {
                std::string commit = BOOTSTORM_GIT_COMMIT;
                std::cout << "bootstorm " << BOOTSTORM_VERSION;
                if (!commit.empty()) std::cout << " (commit " << commit << ")";
                std::cout << "\n";
                return kExitOk;
              };
            }}};

}  // namespace
}  // namespace bootstorm::cli
