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

bool confirmed(const std::string& what) {
  std::cerr << what << "\nContinue? [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES";
}

}  // namespace bootstorm::cli
