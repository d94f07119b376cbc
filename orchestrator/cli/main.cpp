// bootstorm entry point: everything is in run_cli(); main() only guarantees that no exception escapes as a
// raw std::terminate (exit 1 with the message instead).
#include <exception>
#include <iostream>

#include "orchestrator/cli/app.hpp"

int main(int argc, char** argv) {
  try {
    return bootstorm::cli::run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bootstorm: error: " << e.what() << "\n";
    return bootstorm::cli::kExitFailed;
  } catch (...) {
    std::cerr << "bootstorm: error: unknown exception\n";
    return bootstorm::cli::kExitFailed;
  }
}
