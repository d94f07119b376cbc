// `bootstorm capacity PLAN --scenario NAME --slo 'ready p95 <= 60s' [--predict]`: how many desktops per host
// a layout boots within an SLO (orchestrator/sizing/capacity.hpp). Each step is a storm run like `bootstorm
// run` (every interlock of run applies), on the plan's platform, on the embedded lab in real time, or with
// --predict in the lab model's virtual time; the search writes capacity.md and capacity.json beside the
// steps' run directories.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/rfc3339.hpp"
#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/command_support.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/platform.hpp"
#include "orchestrator/engine/run_directory.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/sizing/capacity.hpp"
#include "orchestrator/sizing/capacity_report.hpp"
#include "orchestrator/sizing/predict.hpp"
#include "reports/capacity_html.hpp"
#include "results/slo_text.hpp"
#include "results/summary.hpp"
#include "simulator/lab/lab_server.hpp"
#include "simulator/model/lab_overrides.hpp"

namespace bootstorm::cli {

namespace {

struct CapacityArgs {
  std::string plan;
  std::string scenario;
  std::string slo;
  bool predict = false;
  std::string lab;
  std::vector<std::string> sets;
  long long seed = -1;
  int start = 0;
  int max_per_host = 0;
  int resolution = 1;
  int repeat = 0;
  std::string out;
  int max_vms = static_cast<int>(kRunMaxVms);
  bool yes = false;
  bool dry_run = false;
  bool skip_checks = false;
};

// Ctrl-C (or SIGTERM) between steps, or during a predicted step: the search ends before the next step and
// writes what it found. During a run's step the engine handles it (and cleans up). A second one ends the
// process at once.
std::atomic<bool> g_interrupted{false};
extern "C" void on_stop_signal(int sig) {
  if (g_interrupted.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

void catch_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

bool confirm(const plan::StormPlan& p, const sizing::CapacityResult& search) {
  const int hosts = static_cast<int>(search.hosts.size());
  return confirmed(fmt::format(
      "This capacity search runs storms of {} desktops per host and more (up to {} per host, {} VMs) on {} "
      "hosts, cloned from '{}' on {} at {}, {} storm(s) per step, deleting each step's VMs before the next.",
      search.start, search.max_per_host, static_cast<long long>(search.max_per_host) * hosts, hosts,
      p.platform.settings.golden_image(), p.platform.kind, p.platform.endpoint, search.repeat));
}

std::string step_line(const sizing::CapacityStep& step, const results::SloRecord& slo) {
  const auto& f = step.figures;
  std::string value = "not reached";
  if (f.value) value = slo.is_min ? fmt::format("{:.3f}", *f.value) : fmt::format("{:.2f} s", *f.value);
  return fmt::format(
      "  {} per host ({} desktops, {} storm(s)): P50 {}, P95 {}, ready {:.1f} %, {} {} -> {}{}", f.per_host,
      f.vms, f.storms, f.p50_s ? fmt::format("{:.2f} s", *f.p50_s) : "-",
      f.p95_s ? fmt::format("{:.2f} s", *f.p95_s) : "-", f.ready_fraction * 100, slo.stat, value,
      f.meets ? "meets" : "misses", f.marginal ? " (marginal)" : "");
}

// One `bootstorm capacity` search, stage by stage; a stage that ends the command returns its exit code.
struct CapacitySearch {
  const CapacityArgs& args;
  std::optional<plan::StormPlan> loaded;
  results::SloRecord slo;
  std::vector<sim::model::LabOverride> overrides;
  bool embedded = false, simulated = false;
  std::string lab_name;
  std::optional<sim::model::LabSpec> lab_spec;
  std::optional<sizing::CapacityResult> planned;  // the search as planned: its scenario, steps and bounds
  std::chrono::system_clock::time_point began;
  std::string source;
  std::filesystem::path dir, steps_dir;
  // On the embedded lab the search keeps one lab for all its steps, as a platform would be.
  std::unique_ptr<sim::LabServer> lab;
  plan::StormPlan base;
  int step_number = 0;

  int run() {
    if (auto code = prepare()) return *code;
    const plan::StormPlan& p = *loaded;
    if (!args.predict && !simulated && !args.yes && !args.dry_run && ::isatty(STDIN_FILENO)) {
      if (!confirm(p, *planned)) {
        std::cerr << "aborted: nothing was changed\n";
        return kExitUsage;
      }
    }
    if (args.dry_run) return dry_run();
    if (auto code = make_directory()) return *code;
    if (auto code = start_embedded_lab()) return *code;
    g_interrupted.store(false);
    catch_stop_signals();
    sizing::CapacityResult result = sizing::search_capacity(
        *planned, base,
        [this](const plan::StormPlan& step, int per_host) { return run_step(step, per_host); },
        [] { return g_interrupted.load(); },
        [&](const sizing::CapacityStep& step) { std::cout << step_line(step, slo) << std::endl; });
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    lab.reset();
    return report(result);
  }

  // The plan, the SLO, the lab model and --set, the bounds, and the search's steps.
  std::optional<int> prepare() {
    loaded = load_plan_for(args.plan, "no capacity was searched");
    if (!loaded) return kExitUsage;
    const plan::StormPlan& p = *loaded;
    auto parsed_slo = results::parse_slo_text(args.slo);
    if (!parsed_slo) {
      std::cerr << "--slo: " << parsed_slo.error().what() << "\n";
      return kExitUsage;
    }
    slo = *parsed_slo;
    auto parsed_overrides = sim::model::parse_lab_overrides(args.sets);
    if (!parsed_overrides) {
      std::cerr << parsed_overrides.error().what() << "\n";
      return kExitUsage;
    }
    overrides = std::move(*parsed_overrides);
    embedded = !args.predict && p.platform.endpoint == "embedded";
    simulated = !args.predict && engine::is_simulated_endpoint(p.platform.endpoint);
    if (!args.predict && !embedded && (!args.sets.empty() || !args.lab.empty() || args.seed >= 0)) {
      std::cerr << fmt::format(
          "--lab, --set and --seed change the lab model: they apply with --predict or to a plan with "
          "`endpoint: embedded`, not to {} at '{}'\n",
          p.platform.kind, p.platform.endpoint);
      return kExitUsage;
    }
    lab_name = args.lab.empty() ? p.platform.lab : args.lab;
    if (args.predict || embedded) {
      if (lab_name.empty()) {
        std::cerr << fmt::format(
            "Plan '{}' names no lab profile: pass --lab PROFILE (e.g. --lab tolly-2024)\n", p.name);
        return kExitUsage;
      }
      auto spec = sim::model::load_lab_spec_with(lab_name, overrides);
      if (!spec) {
        std::cerr << "--lab/--set: " << spec.error().what() << "\n";
        return kExitUsage;
      }
      lab_spec = std::move(*spec);
    }
    {
      // The count bound is the search's own (plan_search: its steps, not the plan's placement); the hosts'
      // memory bounds the placement as written.
      PlanBounds bounds{"capacity", 0, {}, lab_spec ? &*lab_spec : nullptr, {}};
      if (lab_spec) bounds.lab_label = "lab " + lab_spec->name + (args.sets.empty() ? "" : " with --set");
      if (!within_bounds(p, "no capacity was searched", bounds)) return kExitUsage;
    }

    sizing::CapacityOptions options;
    options.scenario = args.scenario;
    options.slo = slo;
    options.start = args.start;
    options.max_per_host = args.max_per_host;
    // A prediction creates nothing: its bound is what the model holds, and keeps a runaway doubling finite.
    options.max_vms = args.predict ? std::max<int>(args.max_vms, kPredictMaxVms) : args.max_vms;
    options.resolution = args.resolution;
    options.repeat = args.repeat;
    auto searched = sizing::plan_search(p, options);
    if (!searched) {
      std::cerr << "capacity: " << searched.error().what() << "\n";
      return kExitUsage;
    }
    planned = std::move(*searched);
    return std::nullopt;
  }

  // --dry-run: the search's shape, and the calls of its first step.
  int dry_run() {
    const plan::StormPlan& p = *loaded;
    std::cout << fmt::format(
        "capacity search of '{}' against '{}': from {} per host, doubling up to {} per host "
        "({}), then bisecting to {}; {} storm(s) per step.\n",
        planned->scenario, results::slo_text(slo), planned->start, planned->max_per_host,
        planned->bound_note.empty() ? "no bound" : planned->bound_note, planned->resolution, planned->repeat);
    if (args.predict) return kExitOk;
    auto first = sizing::step_plan(p, planned->scenario, planned->start, slo, planned->repeat);
    if (!first) return kExitUsage;
    std::cout << "The first step's calls:" << std::endl;
    engine::RunOptions run_options;
    run_options.plan_yaml = plan::to_yaml(*first);
    run_options.dry_run = true;
    run_options.skip_checks = args.skip_checks;
    engine::RunEngine engine(*first, run_options, make_engine_hooks());
    return engine.run().exit_code;
  }

  // The search's directory: capacity.md / capacity.json, and every step's run directory under steps/.
  std::optional<int> make_directory() {
    const plan::StormPlan& p = *loaded;
    began = std::chrono::system_clock::now();
    source = args.predict ? "predicted" : simulated ? "simulated" : "measured";
    const std::filesystem::path output = std::filesystem::path(args.out.empty() ? p.output : args.out);
    std::string name = engine::run_directory_name(p.name + "-capacity", began, engine::new_run_id());
    if (args.predict) name += "-predicted";
    auto made = engine::make_run_directory(output, name, plan::to_yaml(p));
    if (!made) {
      std::cerr << "capacity: " << made.error().what() << "\n";
      return kExitFailed;
    }
    dir = *made;
    steps_dir = dir / "steps";
    std::cout << "capacity directory: " << dir.string() << "\n";
    return std::nullopt;
  }

  // The embedded lab, kept for every step; each step reads from it what held its boots back.
  std::optional<int> start_embedded_lab() {
    const plan::StormPlan& p = *loaded;
    base = p;
    if (!embedded) return std::nullopt;
    sim::LabServerOptions lab_options;
    lab_options.spec = *lab_spec;
    if (args.seed >= 0) lab_options.seed = static_cast<std::uint64_t>(args.seed);
    auto started = sim::LabServer::start(std::move(lab_options));
    if (!started) {
      std::cerr << "capacity: the embedded lab did not start: " << started.error().what() << "\n";
      return kExitFailed;
    }
    lab = std::move(*started);
    const std::filesystem::path state = std::filesystem::absolute(dir / "lab");
    if (auto written = lab->write_state(state.string()); !written) {
      std::cerr << "capacity: " << written.error().what() << "\n";
      return kExitFailed;
    }
    base.platform.endpoint = "lab:" + state.string();
    return std::nullopt;
  }

  sizing::StepRun run_step(const plan::StormPlan& step, int per_host) {
    ++step_number;
    std::cout << fmt::format("step {}: {} desktops per host ...", step_number, per_host) << std::endl;
    return args.predict ? predict_step(step) : storm_step(step, per_host);
  }

  sizing::StepRun predict_step(const plan::StormPlan& step) {
    sizing::StepRun out;
    sizing::PredictOptions predict_options;
    predict_options.lab = lab_name;
    predict_options.overrides = overrides;
    if (args.seed >= 0) predict_options.seed = static_cast<std::uint64_t>(args.seed);
    predict_options.output_dir = steps_dir;
    predict_options.plan_yaml = plan::to_yaml(step);
    auto predicted = sizing::predict(step, predict_options);
    if (!predicted) {
      out.outcome = "error";
      out.error = predicted.error();
      return out;
    }
    (void)write_run_outputs(predicted->run_dir, predicted->record);
    out.storms = results::summarize(predicted->record).scenarios;
    std::vector<sim::model::BootLimits> limits;
    for (const auto& l : predicted->limits) limits.push_back(l.limits);
    out.binding = sizing::binding_from_limits(sizing::add_limits(limits), "lab model");
    out.run_dir = predicted->run_dir;
    out.outcome = "predicted";
    return out;
  }

  sizing::StepRun storm_step(const plan::StormPlan& step, int per_host) {
    sizing::StepRun out;
    if (lab) lab->run_on_lab([](sim::model::Lab& l) { l.reset_boot_limits(); });
    engine::RunOptions run_options;
    run_options.output_dir = steps_dir;
    run_options.plan_yaml = plan::to_yaml(step);
    run_options.skip_checks = args.skip_checks || step_number > 1;  // the platform was checked at step 1
    engine::RunEngine engine(step, run_options, make_engine_hooks());
    engine::RunResult result = engine.run();
    catch_stop_signals();  // the engine's handling of Ctrl-C ended with its run
    out.storms = results::summarize(result.record).scenarios;
    out.run_dir = result.run_dir;
    out.outcome = result.outcome;
    out.error = result.error;
    // The next step needs the hosts as this one found them: VMs its cleanup could not delete end the search.
    if (!out.error && !result.run_dir.empty() && result.outcome != "interrupted") {
      if (auto journal = engine::read_journal(result.run_dir / "journal.jsonl");
          journal && !journal->undeleted.empty()) {
        out.error = make_error(
            ErrorKind::conflict,
            fmt::format("Step {} ({} per host) left {} VM(s) its cleanup could not delete.", step_number,
                        per_host, journal->undeleted.size()),
            fmt::format("Run `bootstorm cleanup {}`, then search again.", result.run_dir.string()));
      }
    }
    if (lab) {
      const auto limits = lab->run_on_lab([](sim::model::Lab& l) { return l.boot_limits(); });
      out.binding = sizing::binding_from_limits(limits, "embedded lab");
    } else {
      out.binding = sizing::binding_from_storms(out.storms);
    }
    return out;
  }

  // capacity.json, .md and .html, the verdict on the terminal, and the exit code.
  int report(const sizing::CapacityResult& result) {
    const plan::StormPlan& p = *loaded;
    sizing::CapacityContext context;
    context.plan = p.name;
    context.platform = p.platform.kind;
    context.endpoint = p.platform.endpoint;
    context.source = source;
    context.lab = (args.predict || embedded) ? lab_spec->name : std::string();
    for (const auto& o : overrides) context.overrides.push_back(o.text());
    context.started_at = format_rfc3339(began);
    context.ended_at = format_rfc3339(std::chrono::system_clock::now());
    {
      std::ofstream json_out(dir / "capacity.json");
      json_out << sizing::capacity_json(context, result).dump(2) << "\n";
      std::ofstream md_out(dir / "capacity.md");
      md_out << sizing::capacity_markdown(context, result);
      std::ofstream html_out(dir / "capacity.html");
      html_out << reports::render_capacity_html(sizing::capacity_view(context, result), context.ended_at);
      if (!json_out || !md_out || !html_out) {
        std::cerr << "capacity: cannot write capacity.json / .md / .html in " << dir.string() << "\n";
        return kExitFailed;
      }
    }
    for (const auto& line : sizing::capacity_verdict(context, result)) std::cout << line << "\n";
    std::cout << "report: " << (dir / "capacity.html").string() << " (and capacity.md, capacity.json)\n";
    if (result.interrupted) return kExitInterrupted;
    if (result.error) return result.error->kind == ErrorKind::invalid_input ? kExitUsage : kExitFailed;
    if (result.first_step_missed) {
      std::cerr << fmt::format(
          "capacity: the first step ({} per host) already misses '{}'; nothing smaller was tried. Start "
          "lower "
          "with --start N{}.\n",
          result.steps.front().figures.per_host, results::slo_text(slo),
          result.binding.resource.empty() ? ""
                                          : fmt::format(" (what held it back: {})", result.binding.resource));
      return kExitFailed;
    }
    return result.capacity ? kExitOk : kExitFailed;
  }
};

int capacity(const CapacityArgs& args) {
  return CapacitySearch{args}.run();
}

const CommandRegistration registration{Command{
    "capacity", 26, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<CapacityArgs>();
      CLI::App* sub = app.add_subcommand(
          "capacity",
          "Find how many desktops per host a scenario's layout boots within an SLO: storms of growing "
          "density, doubled then bisected, on the platform, the embedded lab or (--predict) the lab model");
      sub->add_option("plan", args->plan, "Plan file (YAML or JSON)")->required();
      sub->add_option("--scenario", args->scenario,
                      "The scenario whose layout to size (needed when the plan has several)");
      sub->add_option("--slo", args->slo, "The SLO every step is judged by, e.g. 'ready p95 <= 60s'")
          ->required();
      sub->add_flag("--predict", args->predict,
                    "Search in the lab model's virtual time: no platform touched");
      sub->add_option("--lab", args->lab,
                      "Lab profile for --predict or the embedded lab (default: the plan's)");
      sub->add_option("--set", args->sets,
                      "What-if for --predict or the embedded lab: KEY=VALUE (repeatable)");
      sub->add_option("--seed", args->seed, "The lab's seed (--predict, embedded lab)")
          ->check(CLI::NonNegativeNumber);
      sub->add_option("--start", args->start, "Desktops per host of the first step (default: the scenario's)")
          ->check(CLI::PositiveNumber);
      sub->add_option("--max-per-host", args->max_per_host, "Never storm more desktops per host than this")
          ->check(CLI::PositiveNumber);
      sub->add_option("--resolution", args->resolution,
                      "Stop bisecting when the last count that met and the first that missed are this close")
          ->default_val(1)
          ->check(CLI::PositiveNumber);
      sub->add_option("--repeat", args->repeat, "Storms per step (default: the plan's repeat)")
          ->check(CLI::PositiveNumber);
      sub->add_option("--out", args->out,
                      "Directory for the search's directory (default: the plan's output)");
      sub->add_option("--max-vms", args->max_vms, "Refuse steps with more VMs than this (not with --predict)")
          ->default_val(500)
          ->check(CLI::PositiveNumber);
      sub->add_flag("--yes,-y", args->yes, "Do not ask before touching a non-simulated platform");
      sub->add_flag("--dry-run", args->dry_run, "Print the search and the first step's API calls; make none");
      sub->add_flag("--skip-checks", args->skip_checks,
                    "Do not ask the checks of `bootstorm check` before step 1");
      return [args] { return capacity(*args); };
    }}};

}  // namespace

}  // namespace bootstorm::cli
