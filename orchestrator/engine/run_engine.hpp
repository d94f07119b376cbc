#pragma once
// RunEngine: one run of a plan, end to end (DESIGN.md "Data flow of one run"):
//   connect -> inventory check -> for every scenario x repeat:
//     provision (bounded concurrency, clone time per VM) -> wait startable -> settle -> storm (StartBarrier)
//     -> observe (provider + beacon + TCP probe -> MilestoneTimeline, until all ready or storm.timeout)
//     -> collect -> clean up per policy
// Everything is journaled as it happens into <output>/<plan>-<UTC stamp>-<run id>/journal.jsonl; at the end
// the outputs are rendered from the record through EngineHooks::write_outputs.
//
// Ctrl-C / SIGTERM (or RunOptions::interrupt): no new clones or starts, the journal is kept, cleanup follows
// the policy, exit code 130. A second signal skips the remaining cleanup (`bootstorm cleanup RUN` finishes
// it).
#include <chrono>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "orchestrator/engine/hooks.hpp"
#include "orchestrator/engine/progress.hpp"
#include "orchestrator/engine/shard.hpp"
#include "orchestrator/plan/plan.hpp"
#include "providers/api/check.hpp"
#include "providers/api/platform_facts.hpp"
#include "results/run_record.hpp"

namespace bootstorm::engine {

struct RunOptions {
  std::filesystem::path output_dir;  // empty: plan.output
  std::string plan_yaml;             // the resolved plan (plan::to_yaml) for plan.yaml and run_started
  std::string only_scenario;         // --scenario NAME (empty: all)
  int repeat = 0;                    // --repeat N (0: plan.repeat)
  bool dry_run = false;              // providers log every changing call instead of making it
  // `bootstorm check`: connect, ask the checks (RunResult::checks), and stop: no run directory, nothing made.
  bool check_only = false;
  bool skip_checks = false;    // --skip-checks: straight to the inventory check, with a warning
  bool handle_signals = true;  // install SIGINT/SIGTERM handling for the run's duration
  CancelSignal interrupt;      // an interrupt from the caller (same effect as Ctrl-C)
  std::string run_id;          // empty: random 6 hex
  // Sharded run (shard.hpp): only the VMs of `shard` are created; the run directory name ends in
  // "-shard<INDEX>of<COUNT>" so that the workers of one run can share an output volume.
  ShardSpec shard;
  // The wall-clock instant (CLOCK_REALTIME) the first storm's barrier opens; storm k (0-based over the
  // scenario x repeat order) opens at start_at + k * storm_interval. A storm whose instant has passed when
  // its VMs are provisioned is not fired (the run fails with a message saying how late it was).
  std::optional<std::chrono::system_clock::time_point> start_at;
  std::chrono::milliseconds storm_interval{0};
  Progress::Mode progress = Progress::Mode::automatic;
  std::chrono::milliseconds provision_timeout{std::chrono::minutes(30)};  // wait_startable per VM
  std::chrono::milliseconds observe_tick{100};                     // timeout checks and progress redraws
  std::chrono::milliseconds stop_grace{std::chrono::seconds(10)};  // observers must return after stop
  std::chrono::milliseconds probe_interval{250};                   // first TCP probe gap (backs off to 2 s)
  // With EngineHooks::serve_live: how long the final figures stay served after the run (not after Ctrl-C),
  // so that a scraper's last scrape sees them.
  std::chrono::milliseconds metrics_linger{0};
};

struct RunResult {
  int exit_code = 1;    // 0 all ready + SLOs pass, 1 failed / SLO missed, 2 invalid input, 130 interrupted
  std::string outcome;  // completed | failed | interrupted | error
  std::filesystem::path run_dir;  // empty for dry runs and when it could not be created
  results::RunRecord record;
  bool slo_passed = true;
  std::optional<Error> error;  // why the run could not proceed (connect, inventory, setup, outputs)
  std::size_t vms_total = 0, vms_ready = 0, vms_failed = 0;
  std::uint64_t api_requests = 0;
  std::vector<api::CheckResult> checks;  // the checks before the run (none with skip_checks)
  api::PlatformFacts facts;              // what the provider learned of the platform
};

class RunEngine {
 public:
  RunEngine(plan::StormPlan plan, RunOptions options, EngineHooks hooks);
  // Runs the plan on the calling thread (its own io_context); returns when everything is cleaned up.
  RunResult run();

 private:
  plan::StormPlan plan_;
  RunOptions options_;
  EngineHooks hooks_;
};

// The milestone that defines "ready": plan.ready.signal, else beacon when the beacon is enabled, else
// guest_agent. nullopt when the plan names an unknown milestone.
std::optional<api::Milestone> ready_milestone(const plan::StormPlan& plan);

// The plan's SLOs as run_started writes them: [{milestone, stat, max, isMin}] (journal_events.hpp). The run
// session and `bootstorm predict` both write it.
nlohmann::json slo_json(const plan::StormPlan& plan);

}  // namespace bootstorm::engine
