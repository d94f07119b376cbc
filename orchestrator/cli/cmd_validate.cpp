// `bootstorm validate PLAN...`: loads and checks plans without touching any platform. Every problem is
// printed as file:line:col: message on stderr; exit 2 when any plan is invalid.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/plan_bounds.hpp"
#include "orchestrator/migrate/migration_plan.hpp"
#include "orchestrator/plan/plan.hpp"

namespace bootstorm::cli {
namespace {

std::string plural(int n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

struct ValidateArgs {
  std::vector<std::string> plans;
  bool print = false;
  long long max_vms = kRunMaxVms;
};

// MigrationPlans (kind MigrationPlan) go to their own loader; everything else is a StormPlan, so a file
// that is neither still gets the StormPlan loader's precise messages.
bool is_migration_plan_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  return migrate::is_migration_plan_text(text.str());
}

bool validate_migration_plan(const std::string& path, const ValidateArgs& args, bool& first_printed) {
  const bool print = args.print;
  migrate::MigrationLoadResult result = migrate::load_migration_plan_file(path);
  if (result.plan) {
    result.diagnostics = migration_size_diagnostics(path, *result.plan, args.max_vms);
    if (!result.diagnostics.empty()) result.plan.reset();
  }
  for (const auto& d : result.diagnostics) std::cerr << d.to_string() << "\n";
  if (!result.plan) {
    std::cerr << path << ": invalid (" << plural(static_cast<int>(result.diagnostics.size()), "problem")
              << ")\n";
    return false;
  }
  const migrate::MigrationPlan& p = *result.plan;
  std::string what = !p.vms.names.empty()      ? plural(static_cast<int>(p.vms.names.size()), "VM")
                     : !p.vms.from_run.empty() ? "the VMs of " + p.vms.from_run
                                               : "VMs cloned and stormed first";
  std::string summary = path + ": valid (MigrationPlan, " + what + ")";
  if (print) {
    std::cerr << summary << "\n";
    if (!first_printed) std::cout << "---\n";
    std::cout << "# resolved from " << path << "\n" << migrate::to_yaml(p);
    first_printed = false;
  } else {
    std::cout << summary << "\n";
  }
  return true;
}

int validate(const ValidateArgs& args) {
  bool all_valid = true;
  bool first_printed = true;
  for (const auto& path : args.plans) {
    if (is_migration_plan_file(path)) {
      if (!validate_migration_plan(path, args, first_printed)) all_valid = false;
      continue;
    }
    plan::LoadResult result = plan::load_plan_file(path);
    // A valid plan is also one that run takes: within its size bounds, and on its lab's hosts.
    if (result.plan) {
      result.diagnostics =
          plan_size_diagnostics(*result.plan, PlanBounds{"run creates", args.max_vms, {}, nullptr, {}});
      if (!result.diagnostics.empty()) result.plan.reset();
    }
    for (const auto& d : result.diagnostics) std::cerr << d.to_string() << "\n";
    if (!result.plan) {
      all_valid = false;
      std::cerr << path << ": invalid (" << plural(static_cast<int>(result.diagnostics.size()), "problem")
                << ")\n";
      continue;
    }
    const plan::StormPlan& p = *result.plan;
    std::string summary = path + ": valid (" + plural(static_cast<int>(p.scenarios.size()), "scenario") +
                          ", " + plural(p.total_vms(), "VM") + ")";
    if (args.print) {
      // The YAML goes to stdout alone so that `validate --print plan.yaml > resolved.yaml` is a usable plan.
      std::cerr << summary << "\n";
      if (!first_printed) std::cout << "---\n";
      std::cout << "# resolved from " << path << "\n" << plan::to_yaml(p);
      first_printed = false;
    } else {
      std::cout << summary << "\n";
    }
  }
  return all_valid ? kExitOk : kExitUsage;
}

const CommandRegistration registration{Command{
    "validate", 10, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<ValidateArgs>();
      CLI::App* sub =
          app.add_subcommand("validate", "Check plans (YAML or JSON) without touching any platform");
      sub->add_option("plans", args->plans, "Plan files to check")->required();
      sub->add_flag("--print", args->print, "Print each resolved plan (all defaults filled in) as YAML");
      sub->add_option("--max-vms", args->max_vms,
                      "Refuse plans with more VMs than this, as run does (default 500)")
          ->check(CLI::PositiveNumber);
      return [args] { return validate(*args); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
