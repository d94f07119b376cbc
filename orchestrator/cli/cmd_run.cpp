// `bootstorm run PLAN`: validates the plan, asks before touching a real platform, runs the storm with the
// engine and prints the run directory and a short summary. Also defines the engine wiring
// (engine_wiring.hpp) shared with `report` and `cleanup`.
#include <unistd.h>

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <mutex>
#include <set>

#include "common/log.hpp"
#include "orchestrator/beacon/listener.hpp"
#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/platform.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/stats/summary.hpp"
#include "reports/reports.hpp"
#include "providers/kubevirt/kubevirt_provider.hpp"
#include "providers/vsphere/vsphere_provider.hpp"
#include "simulator/lab/lab_server.hpp"

namespace bootstorm::cli {

void register_builtin_providers() {
  static std::once_flag once;
  std::call_once(once, [] {
    vsphere::register_provider();
    kubevirt::register_provider();
  });
}

Expected<bool> write_run_outputs(const std::filesystem::path& run_dir, const stats::RunRecord& record) {
  stats::Summary summary = stats::summarize(record);
  // Re-rendering from the journal must give the same files: stamp them with the run's end, not with now.
  std::string generated_at =
      !record.ended_at.empty() ? record.ended_at : engine::rfc3339_ms(std::chrono::system_clock::now());
  auto written = reports::write_run_outputs(run_dir, record, summary, generated_at);
  if (!written) return written.error();
  return summary.slo_passed();
}

// `endpoint: embedded`: the lab simulator in-process, on its own thread, for the duration of the run.
Expected<engine::EmbeddedLab> start_embedded_lab(const std::string& lab) {
  sim::LabServerOptions options;
  if (!lab.empty()) options.lab = lab;
  auto server = sim::LabServer::start(options);
  if (!server) return server.error();
  const sim::Endpoints& ep = (*server)->endpoints();
  engine::EmbeddedLab embedded;
  embedded.endpoints.vcenter_url = ep.vcenter_url;
  embedded.endpoints.kube_url = ep.kube_url;
  embedded.endpoints.ca_pem = ep.ca_pem;
  embedded.endpoints.username = ep.username;
  embedded.endpoints.password = ep.password;
  embedded.endpoints.kube_token = ep.kube_token;
  embedded.keepalive = std::shared_ptr<sim::LabServer>(std::move(*server));
  return embedded;
}

engine::EngineHooks make_engine_hooks() {
  register_builtin_providers();
  engine::EngineHooks hooks;
  hooks.make_provider = [](boost::asio::any_io_executor ex, const api::ProviderConfig& config) {
    return api::create_provider(config.kind, std::move(ex), config);
  };
  hooks.make_beacon = [](boost::asio::any_io_executor ex, const beacon::ListenerOptions& options) {
    return beacon::start_listener(std::move(ex), options);
  };
  hooks.write_outputs = [](const std::filesystem::path& dir, const stats::RunRecord& record) {
    return write_run_outputs(dir, record);
  };
  hooks.start_embedded_lab = [](boost::asio::any_io_executor, const std::string& lab) {
    return start_embedded_lab(lab);
  };
  return hooks;
}

namespace {

// The end of a run on the terminal: where the results are, the distribution per scenario (from the same
// stats::summarize as summary.json, so the numbers agree), the consolidation verdicts and the outcome.
void print_run_summary(std::ostream& out, const engine::RunResult& result) {
  if (!result.run_dir.empty()) out << "run directory: " << result.run_dir.string() << "\n";
  const stats::Summary summary = stats::summarize(result.record);
  if (summary.run.simulated) out << "(simulated lab " << summary.run.lab << ": not a hardware measurement)\n";
  for (const auto& s : summary.scenarios) {
    const stats::Distribution* ready = s.find("ready");
    out << fmt::format("  {} (repeat {}): ", s.name, s.repeat);
    if (ready == nullptr || ready->count == 0) {
      out << fmt::format("0/{} ready", s.vms);
    } else {
      out << fmt::format("{}/{} ready, boot time ({}) mean {:.2f} s, P50 {:.2f} s, P95 {:.2f} s, max {:.2f} s",
                         ready->count, ready->total, s.ready_milestone, *ready->mean, *ready->p50, *ready->p95,
                         *ready->max);
    }
    out << fmt::format(", fire skew {:.2f} ms, {} API requests\n", s.fire_skew_ms, s.api_requests);
  }
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
  int max_vms = 500;
};

bool confirm(const plan::StormPlan& p, int vms) {
  std::cerr << "This run clones " << vms << " VMs from '"
            << (p.golden.vm.empty() ? p.golden.datasource_name : p.golden.vm) << "' on " << p.platform.kind
            << " at " << p.platform.endpoint
            << ", powers them on at once and deletes them afterwards (cleanup: " << p.cleanup
            << ").\nContinue? [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES";
}

int run(const RunArgs& args) {
  plan::LoadResult loaded = plan::load_plan_file(args.plan);
  for (const auto& d : loaded.diagnostics) std::cerr << d.to_string() << "\n";
  if (!loaded.plan) {
    std::cerr << args.plan << ": invalid plan, nothing was run\n";
    return kExitUsage;
  }
  plan::StormPlan p = *loaded.plan;

  int vms = 0;
  bool found = args.scenario.empty();
  for (auto& s : p.scenarios) {
    if (!args.scenario.empty() && s.name != args.scenario) continue;
    found = true;
    vms += s.total_vms();
  }
  if (!found) {
    std::cerr << args.plan << ": no scenario named '" << args.scenario << "'; the plan has:";
    for (auto& s : p.scenarios) std::cerr << " '" << s.name << "'";
    std::cerr << "\n";
    return kExitUsage;
  }
  if (vms > args.max_vms) {
    std::cerr << args.plan << ": the plan creates " << vms << " VMs, more than the limit of " << args.max_vms
              << "; pass --max-vms " << vms << " (or higher) to allow it\n";
    return kExitUsage;
  }
  if (args.repeat < 0) {
    std::cerr << "--repeat must be 1 or more\n";
    return kExitUsage;
  }
  const bool simulated = engine::is_simulated_endpoint(p.platform.endpoint);
  if (!simulated && !args.yes && !args.dry_run && ::isatty(STDIN_FILENO)) {
    if (!confirm(p, vms)) {
      std::cerr << "aborted: nothing was changed\n";
      return kExitUsage;
    }
  }

  engine::RunOptions options;
  options.output_dir = args.out;
  options.plan_yaml = plan::to_yaml(p);
  options.only_scenario = args.scenario;
  options.repeat = args.repeat;
  options.dry_run = args.dry_run;
  engine::RunEngine engine(p, options, make_engine_hooks());
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
      sub->add_option("--max-vms", args->max_vms, "Refuse plans with more VMs than this")
          ->default_val(500)
          ->check(CLI::PositiveNumber);
      return [args] { return run(*args); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
