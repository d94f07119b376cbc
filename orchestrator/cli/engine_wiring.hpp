#pragma once
// How the `bootstorm` executable wires the engine to the rest of the tree (providers, embedded lab, beacon
// listener, report renderers): the one place that composes the application (engine_wiring.cpp). The
// commands (cmd_run, cmd_migrate, cmd_report, cmd_merge, cmd_cleanup) parse their arguments and call it.
#include <filesystem>

#include "common/expected.hpp"
#include "orchestrator/engine/hooks.hpp"
#include "results/run_record.hpp"

namespace bootstorm::cli {

// Registers every platform kind built into this executable, its descriptor (what `validate` checks plans
// against) and its provider factory (idempotent). main() calls it before any command runs.
void register_builtin_platforms();

// EngineHooks for real runs: api::create_provider, the in-process lab, the HTTP beacon, the report writers.
engine::EngineHooks make_engine_hooks();

// summary.json, vms.csv, report.md/html, junit.xml, metrics.prom from the record; true when every SLO passed.
Expected<bool> write_run_outputs(const std::filesystem::path& run_dir, const results::RunRecord& record);

}  // namespace bootstorm::cli
