// What the lab's long-running commands share.
#include "orchestrator/cli/lab_command_support.hpp"

#include <pthread.h>

#include "simulator/model/lab_overrides.hpp"

namespace bootstorm::cli {

sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

Expected<std::optional<sim::model::LabSpec>> lab_spec_with_sets(const std::string& lab,
                                                                const std::vector<std::string>& sets) {
  if (sets.empty()) return std::optional<sim::model::LabSpec>();
  auto overrides = sim::model::parse_lab_overrides(sets);
  if (!overrides) return overrides.error();
  auto spec = sim::model::load_lab_spec_with(lab, *overrides);
  if (!spec) return spec.error();
  return std::optional<sim::model::LabSpec>(std::move(*spec));
}

}  // namespace bootstorm::cli
