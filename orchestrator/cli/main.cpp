// bootstorm entry point: everything is in run_cli(); main() registers the built-in platform kinds and
// guarantees that no exception escapes as a raw std::terminate (exit 1 with the message instead).
#include <sys/resource.h>

#include <exception>
#include <iostream>

#include "orchestrator/cli/app.hpp"
#include "orchestrator/cli/engine_wiring.hpp"

namespace {
// A storm keeps one connection per concurrent start (apiBudget.maxConcurrent, thousands at scale) and the
// simulator one socket per client connection: raise the soft descriptor limit to the hard one, as servers do.
void raise_file_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}
}  // namespace

int main(int argc, char** argv) {
  raise_file_descriptor_limit();
  try {
    // Every command sees the same platform kinds: `validate` checks plans against their descriptors, `run`
    // builds providers through their factories.
    bootstorm::cli::register_builtin_platforms();
    return bootstorm::cli::run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bootstorm: error: " << e.what() << "\n";
    return bootstorm::cli::kExitFailed;
  } catch (...) {
    std::cerr << "bootstorm: error: unknown exception\n";
    return bootstorm::cli::kExitFailed;
  }
}
