// `bootstorm lab fit RUN... --lab PROFILE --fit KEY [--fit KEY ...] --out NEW.yaml`: fits lab-model values to
// measured runs (orchestrator/sizing/lab_fit.hpp) and writes the fitted profile, commented with the runs and
// the residuals.
#include "orchestrator/cli/lab_fit_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/rfc3339.hpp"
#include "orchestrator/cli/command.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/sizing/lab_fit.hpp"
#include "results/summary.hpp"
#include "results/summary_json.hpp"

namespace bootstorm::cli {

namespace {

namespace fs = std::filesystem;

struct LabFitArgs {
  std::vector<std::string> runs;
  std::string lab;
  std::vector<std::string> fits;
  std::vector<std::string> sets;
  std::string out;
  std::string scenario;
  long long seed = -1;
  double span = 10;
  int model_repeats = 5;
};

Expected<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorKind::not_found, fmt::format("{}: cannot be read.", path.string()));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A run directory as fit reads it: plan.yaml and summary.json, each scenario's repetitions averaged.
Expected<sizing::FitRun> read_fit_run(const fs::path& dir) {
  const std::string hint = "Name run directories of `bootstorm run` (or `predict`) that finished.";
  auto plan_text = read_text(dir / "plan.yaml");
  if (!plan_text)
    return make_error(ErrorKind::invalid_input, fmt::format("{} has no plan.yaml.", dir.string()), hint);
  auto summary_text = read_text(dir / "summary.json");
  if (!summary_text)
    return make_error(ErrorKind::invalid_input, fmt::format("{} has no summary.json.", dir.string()), hint);
  plan::LoadResult loaded = plan::load_plan_text(*plan_text, (dir / "plan.yaml").string());
  if (!loaded.plan) {
    return make_error(
        ErrorKind::invalid_input,
        fmt::format("{}: {}", (dir / "plan.yaml").string(),
                    loaded.diagnostics.empty() ? "invalid" : loaded.diagnostics.front().to_string()));
  }
  auto document = nlohmann::json::parse(*summary_text, nullptr, false);
  if (document.is_discarded())
    return make_error(ErrorKind::invalid_input,
                      fmt::format("{}: not JSON.", (dir / "summary.json").string()));
  auto summary = results::summary_from_json(document);
  if (!summary) return summary.error();
  sizing::FitRun run;
  run.name = fs::absolute(dir).lexically_normal().filename().string();
  if (run.name.empty()) run.name = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  run.plan = *loaded.plan;
  run.plan_yaml = *plan_text;
  run.source = !summary->run.source.empty() ? summary->run.source
               : summary->run.simulated     ? "simulated"
                                            : "measured";
  std::map<std::string, sizing::FitRun::Scenario> by_name;
  std::vector<std::string> order;
  for (const auto& s : summary->scenarios) {
    const results::Distribution& d = s.ready();
    if (!d.mean || !d.p95) continue;  // nothing became ready: nothing to fit to
    auto [it, added] = by_name.try_emplace(s.name);
    if (added) order.push_back(s.name);
    it->second.name = s.name;
    it->second.mean_s += *d.mean;
    it->second.p95_s += *d.p95;
    ++it->second.repeats;
  }
  for (const auto& name : order) {
    auto s = by_name.at(name);
    s.mean_s /= s.repeats;
    s.p95_s /= s.repeats;
    run.scenarios.push_back(s);
  }
  return run;
}

int fit(const LabFitArgs& args) {
  if (fs::exists(args.out)) {
    std::cerr << fmt::format(
        "--out {}: the file exists; fit writes a new profile. Remove it or choose another "
        "name.\n",
        args.out);
    return kExitUsage;
  }
  std::vector<sizing::FitRun> runs;
  for (const auto& dir : args.runs) {
    auto run = read_fit_run(dir);
    if (!run) {
      std::cerr << "lab fit: " << run.error().what() << "\n";
      return kExitUsage;
    }
    runs.push_back(std::move(*run));
  }
  sizing::FitOptions options;
  options.lab = args.lab;
  options.keys = args.fits;
  options.only_scenario = args.scenario;
  options.span = args.span;
  options.model_repeats = args.model_repeats;
  if (args.seed >= 0) options.seed = static_cast<std::uint64_t>(args.seed);
  auto fixed = sim::model::parse_lab_overrides(args.sets);
  if (!fixed) {
    std::cerr << "--set: " << fixed.error().what() << "\n";
    return kExitUsage;
  }
  options.fixed = std::move(*fixed);
  const auto began = std::chrono::steady_clock::now();
  auto result = sizing::fit_lab(runs, options);
  if (!result) {
    std::cerr << "lab fit: " << result.error().what() << "\n";
    return result.error().kind == ErrorKind::invalid_input || result.error().kind == ErrorKind::not_found
               ? kExitUsage
               : kExitFailed;
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  auto yaml = sizing::fitted_profile_yaml(*result, runs, format_rfc3339(std::chrono::system_clock::now()));
  if (!yaml) {
    std::cerr << "lab fit: " << yaml.error().what() << "\n";
    return kExitFailed;
  }
  {
    std::ofstream out(args.out, std::ios::binary);
    out << *yaml;
    if (!out) {
      std::cerr << "lab fit: cannot write " << args.out << "\n";
      return kExitFailed;
    }
  }
  std::cout << fmt::format("fitted lab profile {} to {} run(s) in {:.1f} s ({} model runs):\n", result->lab,
                           runs.size(), took, result->model_runs);
  for (const auto& p : result->parameters) {
    std::cout << fmt::format(
        "  {}: {:.6g} -> {:.6g} (x{:.4f}){}\n", p.key, p.initial, p.fitted, p.fitted / p.initial,
        p.at_bound ? "  at the edge of the searched range: widen --span or check the runs" : "");
  }
  for (const auto& p : result->points) {
    std::cout << fmt::format(
        "  {} / {}: measured {:.2f} / {:.2f} s, fitted model {:.2f} / {:.2f} s ({:+.1f} % / "
        "{:+.1f} %)\n",
        p.run, p.scenario, p.measured_mean, p.measured_p95, p.fitted_mean, p.fitted_p95,
        (p.fitted_mean / p.measured_mean - 1) * 100, (p.fitted_p95 / p.measured_p95 - 1) * 100);
  }
  std::cout << fmt::format("RMS relative residual {:.1f} % before, {:.1f} % after\n",
                           result->rms_initial * 100, result->rms_fitted * 100);
  std::cout << "wrote " << args.out << ": predict other layouts with `bootstorm predict PLAN --lab "
            << args.out << "`\n";
  return kExitOk;
}

}  // namespace

std::function<int()> add_lab_fit(CLI::App& lab) {
  auto args = std::make_shared<LabFitArgs>();
  CLI::App* sub = lab.add_subcommand(
      "fit",
      "Fit lab-model values to measured runs and write the fitted profile (measure one layout, predict the "
      "others)");
  sub->add_option("runs", args->runs, "Run directories to fit to")->required();
  sub->add_option("--lab", args->lab, "The lab profile to start from (a name in simulator/labs or a path)")
      ->required();
  sub->add_option("--fit", args->fits,
                  "A profile value to fit (repeatable), e.g. datastores.tolly-aff-ds01.latencyMs; a glob "
                  "(hosts.r740-*.ioLatencyMs) ties every match to one value")
      ->required();
  sub->add_option("--out", args->out, "Where to write the fitted profile (a new file)")->required();
  sub->add_option("--set", args->sets, "Change a profile value before fitting, KEY=VALUE (repeatable)");
  sub->add_option("--scenario", args->scenario, "Fit to this scenario of the runs only");
  sub->add_option("--seed", args->seed, "The model's seed (default: the profile's)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--span", args->span, "Search each value within [initial / span, initial x span]")
      ->default_val(10);
  sub->add_option(
         "--model-repeats", args->model_repeats,
         "Predict each measured scenario this many times on successive seeds and average (at least as "
         "often as it was measured)")
      ->default_val(5)
      ->check(CLI::PositiveNumber);
  return [args]() -> int { return fit(*args); };
}

}  // namespace bootstorm::cli
