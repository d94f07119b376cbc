// `bootstorm run PLAN`: validates the plan, asks before touching a real platform, runs the storm with the
// engine (wired by engine_wiring.hpp) and prints the run directory and a short summary.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "common/duration.hpp"
#include "common/rfc3339.hpp"
#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/command_support.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/cli/live_metrics.hpp"
#include "orchestrator/cli/run_summary.hpp"
#include "orchestrator/engine/platform.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "orchestrator/engine/shard.hpp"
#include "orchestrator/plan/plan.hpp"
#include "reports/reports.hpp"
#include "results/summary.hpp"

namespace bootstorm::cli {

namespace {

// The end of a run on the terminal: where the results are, the distribution per scenario (from the same
// results::summarize as summary.json, so the numbers agree), the consolidation verdicts and the outcome.
void print_run_summary(std::ostream& out, const engine::RunResult& result) {
  if (!result.run_dir.empty()) out << "run directory: " << result.run_dir.string() << "\n";
  const results::Summary summary = results::summarize(result.record);
  if (summary.run.simulated) out << "(simulated lab " << summary.run.lab << ": not a hardware measurement)\n";
  for (const auto& s : summary.scenarios) {
    out << fmt::format("  {} (repeat {}): {}", s.name, s.repeat, ready_clause(s));
    out << fmt::format(", fire skew {:.2f} ms, {} API requests", s.fire_skew_ms, s.api_requests);
    if (s.start_at_offset_ms)
      out << fmt::format(", barrier opened {:+.3f} ms from --start-at", *s.start_at_offset_ms);
    out << "\n";
  }
  for (const auto& sentence : reports::control_plane_sentences(summary)) out << sentence << "\n";
  for (const auto& comparison : reports::scenario_comparisons(summary)) out << comparison.verdict << "\n";
  out << "outcome: " << result.outcome
      << (result.slo_passed ? "" : " (an SLO was missed or could not be evaluated)") << "\n";
  if (result.error) out << "error: " << result.error->what() << "\n";
  out.flush();
}

struct RunArgs {
  std::string plan;
  std::string scenario;
  int repeat = 0;
  std::string out;
  bool dry_run = false;
  bool yes = false;
  bool skip_checks = false;
  long long max_vms = kRunMaxVms;
  std::string shard;           // INDEX/COUNT
  std::string start_at;        // RFC 3339
  std::string storm_interval;  // duration between storms of a --start-at run
  std::string run_id;
  std::string beacon_advertise;  // this worker's beacon URL (not part of the plan digest)
  std::string metrics_listen;    // HOST:PORT of the live /metrics
  std::string metrics_linger;    // how long the final figures stay served
};

bool confirm(const plan::StormPlan& p, int vms) {
  return confirmed(
      fmt::format("This run clones {} VMs from '{}' on {} at {}, powers them on at once and deletes "
                  "them afterwards (cleanup: {}).",
                  vms, p.platform.settings.golden_image(), p.platform.kind, p.platform.endpoint, p.cleanup));
}

// --metrics-listen and --metrics-linger checked: the linger (0 without it), or nullopt after saying what is
// wrong.
std::optional<std::chrono::milliseconds> metrics_flags(const RunArgs& args) {
  if (!args.metrics_listen.empty()) {
    if (auto ok = check_metrics_listen(args.metrics_listen); !ok) {
      std::cerr << ok.error().what() << "\n";
      return std::nullopt;
    }
  }
  if (args.metrics_linger.empty()) return std::chrono::milliseconds{0};
  auto parsed = parse_duration(args.metrics_linger);
  if (!parsed || *parsed < std::chrono::nanoseconds::zero()) {
    std::cerr << "--metrics-linger '" << args.metrics_linger << "' is not a duration (e.g. 30s)\n";
    return std::nullopt;
  }
  if (args.metrics_listen.empty()) {
    std::cerr << "--metrics-linger only applies with --metrics-listen\n";
    return std::nullopt;
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
}

int run(const RunArgs& args) {
  const auto loaded = load_plan_for(args.plan, "nothing was run");
  if (!loaded) return kExitUsage;
  plan::StormPlan p = *loaded;

  engine::ShardSpec shard;
  if (!args.shard.empty()) {
    auto parsed = engine::parse_shard(args.shard);
    if (!parsed) {
      std::cerr << parsed.error().what() << "\n";
      return kExitUsage;
    }
    shard = *parsed;
  }
  int vms = 0;
  int storms_per_repeat = 0;
  bool found = args.scenario.empty();
  for (auto& s : p.scenarios) {
    if (!args.scenario.empty() && s.name != args.scenario) continue;
    found = true;
    ++storms_per_repeat;
    vms += shard.owned_of(s.total_vms());
  }
  if (!found) {
    std::cerr << args.plan << ": no scenario named '" << args.scenario << "'; the plan has:";
    for (auto& s : p.scenarios) std::cerr << " '" << s.name << "'";
    std::cerr << "\n";
    return kExitUsage;
  }
  {
    // The bounds weigh the scenarios this run storms, and this shard's share of each.
    plan::StormPlan storms = p;
    std::erase_if(storms.scenarios,
                  [&](const plan::Scenario& s) { return !args.scenario.empty() && s.name != args.scenario; });
    PlanBounds bounds{"run creates", args.max_vms, {}, nullptr, {}};
    if (shard.sharded()) bounds.share = [shard](int scenario_vms) { return shard.owned_of(scenario_vms); };
    if (!within_bounds(storms, "nothing was run", bounds)) return kExitUsage;
  }
  if (args.repeat < 0) {
    std::cerr << "--repeat must be 1 or more\n";
    return kExitUsage;
  }

  // Sharding and the agreed start instant.
  std::optional<std::chrono::system_clock::time_point> start_at;
  if (!args.start_at.empty()) {
    auto parsed = parse_rfc3339(args.start_at);
    if (!parsed) {
      std::cerr << "--start-at: " << parsed.error().what() << "\n";
      return kExitUsage;
    }
    const auto now = std::chrono::system_clock::now();
    if (*parsed <= now) {
      std::cerr << fmt::format(
          "--start-at {} is {:.1f} s in the past (now {}): choose an instant far enough ahead for every "
          "shard "
          "to provision its VMs first\n",
          args.start_at, std::chrono::duration<double>(now - *parsed).count(), format_rfc3339(now));
      return kExitUsage;
    }
    start_at = *parsed;
  } else if (shard.sharded()) {
    std::cerr << "--shard " << args.shard
              << " needs --start-at: the shards of a run fire at one agreed wall-clock instant (e.g. "
                 "--start-at $(date -u -d '+10 min' +%Y-%m-%dT%H:%M:%SZ), the same for every shard)\n";
    return kExitUsage;
  }
  std::chrono::milliseconds storm_interval{0};
  if (!args.storm_interval.empty()) {
    auto parsed = parse_duration(args.storm_interval);
    if (!parsed || *parsed <= std::chrono::nanoseconds::zero()) {
      std::cerr << "--storm-interval '" << args.storm_interval
                << "' is not a positive duration (e.g. 10m, 90s)\n";
      return kExitUsage;
    }
    if (!start_at) {
      std::cerr << "--storm-interval only applies with --start-at\n";
      return kExitUsage;
    }
    storm_interval = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  }
  const auto metrics_linger = metrics_flags(args);
  if (!metrics_linger) return kExitUsage;
  const int repeats = args.repeat > 0 ? args.repeat : std::max(1, p.repeat);
  const int storms = storms_per_repeat * repeats;
  if (start_at && storms > 1 && storm_interval.count() == 0) {
    std::cerr << fmt::format(
        "--start-at with {} storms ({} scenario(s) x {} repeat(s)): pass --storm-interval DURATION (storm k "
        "fires at start-at + k x interval), or select one storm with --scenario NAME --repeat 1\n",
        storms, storms_per_repeat, repeats);
    return kExitUsage;
  }
  const std::string plan_yaml = plan::to_yaml(p);
  std::string run_id = args.run_id;
  if (!run_id.empty()) {
    if (auto valid = engine::validate_run_id(run_id); !valid) {
      std::cerr << "--run-id: " << valid.error().what() << "\n";
      return kExitUsage;
    }
  } else if (start_at) {
    run_id = engine::derive_run_id(engine::plan_digest(plan_yaml), *start_at);
  }
  const bool simulated = engine::is_simulated_endpoint(p.platform.endpoint);
  if (!simulated && !args.yes && !args.dry_run && ::isatty(STDIN_FILENO)) {
    if (!confirm(p, vms)) {
      std::cerr << "aborted: nothing was changed\n";
      return kExitUsage;
    }
  }

  if (!args.beacon_advertise.empty()) {
    // Per worker (each shard's pod has its own address), so it is applied after the plan digest: the shards
    // of one run keep one digest and one derived run id.
    if (!p.ready.beacon.enabled) {
      std::cerr << "--beacon-advertise needs a beacon in the plan (ready.beacon.listen, e.g. 0.0.0.0:8080)\n";
      return kExitUsage;
    }
    if (args.beacon_advertise.rfind("http://", 0) != 0 && args.beacon_advertise.rfind("https://", 0) != 0) {
      std::cerr << "--beacon-advertise must be an http:// or https:// URL, got '" << args.beacon_advertise
                << "'\n";
      return kExitUsage;
    }
    p.ready.beacon.advertise_url = args.beacon_advertise;
  }

  engine::RunOptions options;
  options.output_dir = args.out;
  options.plan_yaml = plan_yaml;
  options.run_id = run_id;
  options.shard = shard;
  options.start_at = start_at;
  options.storm_interval = storm_interval;
  options.only_scenario = args.scenario;
  options.repeat = args.repeat;
  options.dry_run = args.dry_run;
  options.skip_checks = args.skip_checks;
  options.metrics_linger = *metrics_linger;
  engine::EngineHooks hooks = make_engine_hooks();
  if (!args.metrics_listen.empty()) hooks.serve_live = live_metrics_server(args.metrics_listen);
  engine::RunEngine engine(p, options, std::move(hooks));
  engine::RunResult result = engine.run();
  print_run_summary(std::cout, result);
  return result.exit_code;
}

const CommandRegistration registration{Command{
    "run", 20, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<RunArgs>();
      CLI::App* sub = app.add_subcommand("run", "Run a boot storm plan and write its run directory");
      sub->add_option("plan", args->plan, "Plan file (YAML or JSON)")->required();
      sub->add_option("--scenario", args->scenario, "Run only the scenario with this name");
      sub->add_option("--repeat", args->repeat, "Repeat every scenario N times (overrides the plan)")
          ->check(CLI::PositiveNumber);
      sub->add_option("--out", args->out, "Directory for run directories (overrides the plan's output)");
      sub->add_flag("--dry-run", args->dry_run, "Print every API call the run would make and make none");
      sub->add_flag("--yes,-y", args->yes, "Do not ask before touching a non-simulated platform");
      sub->add_flag(
          "--skip-checks", args->skip_checks,
          "Do not ask the checks of `bootstorm check` before the run (the inventory is still checked)");
      sub->add_option("--max-vms", args->max_vms, "Refuse plans with more VMs than this (per shard)")
          ->default_val(500)
          ->check(CLI::PositiveNumber);
      sub->add_option(
          "--shard", args->shard,
          "Run only shard INDEX of COUNT (INDEX/COUNT, 0-based): VM k of every scenario belongs to "
          "shard (k-1) mod COUNT; needs --start-at");
      sub->add_option("--start-at", args->start_at,
                      "Fire the storm at this wall-clock instant (RFC 3339, e.g. 2026-11-30T10:00:00Z), the "
                      "same for every shard");
      sub->add_option("--storm-interval", args->storm_interval,
                      "With --start-at and several storms: storm k fires at start-at + k x this duration");
      sub->add_option(
          "--beacon-advertise", args->beacon_advertise,
          "The beacon URL guests call for this worker, overriding ready.beacon.advertiseUrl (e.g. "
          "http://$(POD_IP):8080 in an Indexed Job); not part of the plan digest");
      sub->add_option("--metrics-listen", args->metrics_listen,
                      "Serve the run's figures at http://HOST:PORT/metrics while it runs (OpenMetrics or "
                      "Prometheus text, as the scraper asks), e.g. 0.0.0.0:9464");
      sub->add_option(
          "--metrics-linger", args->metrics_linger,
          "With --metrics-listen: keep serving the final figures this long after the run (e.g. 30s, "
          "two scrape intervals), so that the last scrape sees them");
      sub->add_option("--run-id", args->run_id,
                      "Run id (a-z0-9, up to 16); default: random, or with --start-at derived from the plan "
                      "and the instant so every shard agrees");
      return [args] { return run(*args); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
