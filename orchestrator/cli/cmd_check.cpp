// `bootstorm check PLAN`: asks the platform, read-only, every question a run would find the answer to too
// late (privileges, golden image, node memory, quota, the start burst...) and prints one line per check:
// PASS, WARN or FAIL with what to do, or UNKNOWN where the platform cannot tell. Exit 0 when nothing failed,
// 1 when a check failed or the platform could not be reached, 2 for an invalid plan. `run` asks the same
// checks before it creates anything (--skip-checks skips them).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/command_support.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/engine/preflight.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "orchestrator/plan/plan.hpp"

namespace bootstorm::cli {

namespace {

struct CheckArgs {
  std::string plan;
  std::string scenario;
  long long max_vms = kRunMaxVms;
};

int check(const CheckArgs& args) {
  const auto loaded = load_plan_for(args.plan, "nothing was checked",
                                    PlanBounds{"run creates", args.max_vms, {}, nullptr, {}});
  if (!loaded) return kExitUsage;
  const plan::StormPlan& p = *loaded;
  if (!args.scenario.empty()) {
    bool found = false;
    for (const auto& s : p.scenarios) found = found || s.name == args.scenario;
    if (!found) {
      std::cerr << args.plan << ": no scenario named '" << args.scenario << "'\n";
      return kExitUsage;
    }
  }
  engine::RunOptions options;
  options.plan_yaml = plan::to_yaml(p);
  options.only_scenario = args.scenario;
  options.check_only = true;
  options.progress = engine::Progress::Mode::none;
  engine::RunEngine engine(p, options, make_engine_hooks());
  const engine::RunResult result = engine.run();

  std::cout << fmt::format("bootstorm check: plan {} on {} at {}\n", p.name, p.platform.kind,
                           p.platform.endpoint);
  if (const std::string facts = api::describe(result.facts); !facts.empty())
    std::cout << "platform: " << facts << "\n";
  std::cout << engine::check_table(result.checks);
  std::size_t counts[4] = {0, 0, 0, 0};
  for (const auto& c : result.checks) ++counts[static_cast<int>(c.status)];
  if (!result.checks.empty()) {
    std::cout << fmt::format("{} checks: {} passed, {} warnings, {} failed, {} unknown\n",
                             result.checks.size(), counts[static_cast<int>(api::CheckStatus::pass)],
                             counts[static_cast<int>(api::CheckStatus::warn)],
                             counts[static_cast<int>(api::CheckStatus::fail)],
                             counts[static_cast<int>(api::CheckStatus::unknown)]);
  }
  if (result.error) std::cerr << "error: " << result.error->what() << "\n";
  std::cout.flush();
  return result.exit_code;
}

const CommandRegistration registration{Command{
    "check", 15, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<CheckArgs>();
      CLI::App* sub = app.add_subcommand(
          "check",
          "Ask the platform, read-only, whether a plan can run: privileges, golden image, capacity, quota");
      sub->add_option("plan", args->plan, "Plan file (YAML or JSON)")->required();
      sub->add_option("--scenario", args->scenario, "Check only the scenario with this name");
      sub->add_option("--max-vms", args->max_vms,
                      "Refuse plans with more VMs than this, as run does (default 500)")
          ->check(CLI::PositiveNumber);
      return [args] { return check(*args); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
