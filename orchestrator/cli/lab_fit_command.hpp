#pragma once
// `bootstorm lab fit`, a subcommand of `bootstorm lab` (cmd_lab.cpp): adds it to `lab` and returns what runs
// it.
#include <CLI/CLI.hpp>
#include <functional>

namespace bootstorm::cli {

// Adds `fit` to the `lab` command; the returned function runs it once parsed (its exit code).
std::function<int()> add_lab_fit(CLI::App& lab);

}  // namespace bootstorm::cli
