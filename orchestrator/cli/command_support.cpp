// What several commands share (see the header).
#include "orchestrator/cli/command_support.hpp"

#include <iostream>

namespace bootstorm::cli {

std::optional<plan::StormPlan> load_plan_for(const std::string& path, std::string_view nothing_done) {
  plan::LoadResult loaded = plan::load_plan_file(path);
  for (const auto& d : loaded.diagnostics) std::cerr << d.to_string() << "\n";
  if (!loaded.plan) std::cerr << path << ": invalid plan, " << nothing_done << "\n";
  return std::move(loaded.plan);
}

bool within_bounds(const plan::StormPlan& plan, std::string_view nothing_done, const PlanBounds& bounds) {
  const auto diagnostics = plan_size_diagnostics(plan, bounds);
  for (const auto& d : diagnostics) std::cerr << d.to_string() << "\n";
  if (diagnostics.empty()) return true;
  std::cerr << plan.source_path << ": invalid plan, " << nothing_done << "\n";
  return false;
}

std::optional<plan::StormPlan> load_plan_for(const std::string& path, std::string_view nothing_done,
                                             const PlanBounds& bounds) {
  auto loaded = load_plan_for(path, nothing_done);
  if (!loaded || !within_bounds(*loaded, nothing_done, bounds)) return std::nullopt;
  return loaded;
}

bool confirmed(const std::string& what) {
  std::cerr << what << "\nContinue? [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES";
}

}  // namespace bootstorm::cli
