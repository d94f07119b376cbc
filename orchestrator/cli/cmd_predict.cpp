// `bootstorm predict PLAN [--lab PROFILE] [--set KEY=VALUE ...]`: the plan's scenarios in the lab model's
// virtual time (orchestrator/sizing), written as a run directory with the same reports as a run, labelled
// predicted.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/command_support.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/cli/run_summary.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/sizing/predict.hpp"
#include "reports/reports.hpp"
#include "results/summary.hpp"

namespace bootstorm::cli {

namespace {

struct PredictArgs {
  std::string plan;
  std::string lab;
  std::vector<std::string> sets;
  std::string scenario;
  int repeat = 0;
  std::string out;
  long long seed = -1;
  long long max_vms = kPredictMaxVms;
};

int predict(const PredictArgs& args) {
  const auto loaded = load_plan_for(args.plan, "nothing was predicted");
  if (!loaded) return kExitUsage;
  const plan::StormPlan& p = *loaded;
  sizing::PredictOptions options;
  options.lab = args.lab;
  auto overrides = sim::model::parse_lab_overrides(args.sets);
  if (!overrides) {
    std::cerr << overrides.error().what() << "\n";
    return kExitUsage;
  }
  options.overrides = std::move(*overrides);
  // The model's lab, loaded here to weigh the plan's size with it, then handed to the prediction.
  const std::string lab_name = args.lab.empty() ? p.platform.lab : args.lab;
  if (!lab_name.empty()) {
    auto spec = sim::model::load_lab_spec_with(lab_name, options.overrides);
    if (!spec) {
      std::cerr << "--lab/--set: " << spec.error().what() << "\n";
      return kExitUsage;
    }
    options.spec = std::move(*spec);
  }
  PlanBounds bounds{"predict models", args.max_vms, {}, options.spec ? &*options.spec : nullptr, {}};
  if (options.spec) bounds.lab_label = "lab " + options.spec->name + (args.sets.empty() ? "" : " with --set");
  if (!within_bounds(p, "nothing was predicted", bounds)) return kExitUsage;
  if (args.seed >= 0) options.seed = static_cast<std::uint64_t>(args.seed);
  options.output_dir = args.out;
  options.only_scenario = args.scenario;
  options.repeat = args.repeat;
  options.plan_yaml = plan::to_yaml(p);
  const auto began = std::chrono::steady_clock::now();
  auto result = sizing::predict(p, options);
  if (!result) {
    std::cerr << "predict: " << result.error().what() << "\n";
    return result.error().kind == ErrorKind::io ? kExitFailed : kExitUsage;
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  auto written = write_run_outputs(result->run_dir, result->record);
  if (!written) {
    std::cerr << "predict: " << written.error().what() << "\n";
    return kExitFailed;
  }
  std::cout << "run directory: " << result->run_dir.string() << "\n";
  std::cout << fmt::format(
      "(predicted with lab model {}, seed {}, {:.0f} s of virtual time in {:.2f} s: not a "
      "measurement)\n",
      result->lab, result->seed, result->virtual_s, took);
  const results::Summary summary = results::summarize(result->record);
  for (const auto& s : summary.scenarios) {
    std::cout << fmt::format("  {} (repeat {}): {}\n", s.name, s.repeat, ready_clause(s));
  }
  for (const auto& comparison : reports::scenario_comparisons(summary))
    std::cout << comparison.verdict << "\n";
  std::cout << "outcome: predicted" << (*written ? "" : " (an SLO would be missed or could not be evaluated)")
            << "\n";
  return *written ? kExitOk : kExitFailed;
}

const CommandRegistration registration{Command{
    "predict", 25, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<PredictArgs>();
      CLI::App* sub = app.add_subcommand(
          "predict",
          "Predict a plan's storms in the lab model's virtual time (no platform touched) and write a run "
          "directory labelled predicted");
      sub->add_option("plan", args->plan, "Plan file (YAML or JSON)")->required();
      sub->add_option("--lab", args->lab,
                      "Lab profile to model the platform with (a name in simulator/labs or a path); default: "
                      "the plan's platform.lab");
      sub->add_option("--set", args->sets,
                      "What-if: change one value of the lab profile, KEY=VALUE (repeatable), e.g. "
                      "hosts.r740-01.linkMBps=3200, hosts.r740-*.ioLatencyMs=0.5, "
                      "profiles.win10-vdi.outstandingIOs=4");
      sub->add_option("--seed", args->seed,
                      "The first repetition's seed (each repetition adds one); default: the profile's")
          ->check(CLI::NonNegativeNumber);
      sub->add_option("--scenario", args->scenario, "Predict only the scenario with this name");
      sub->add_option("--repeat", args->repeat, "Repeat every scenario N times (overrides the plan)")
          ->check(CLI::PositiveNumber);
      sub->add_option("--out", args->out, "Directory for run directories (overrides the plan's output)");
      sub->add_option(
             "--max-vms", args->max_vms,
             fmt::format("Refuse plans with more VMs than this (default {}; the model holds every VM "
                         "of a storm in memory)",
                         kPredictMaxVms))
          ->check(CLI::PositiveNumber);
      return [args] { return predict(*args); };
    }}};

}  // namespace

}  // namespace bootstorm::cli
