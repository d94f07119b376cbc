#pragma once
// `bootstorm lab attach`, a subcommand of `bootstorm lab` (cmd_lab.cpp): adds it to `lab` and returns what
// runs it.
#include <CLI/CLI.hpp>
#include <functional>

namespace bootstorm::cli {

// Adds `attach` to the `lab` command; the returned function runs it once parsed (its exit code).
std::function<int()> add_lab_attach(CLI::App& lab);

}  // namespace bootstorm::cli
