// The terminal's account of a scenario's boots (see the header).
#include "orchestrator/cli/run_summary.hpp"

#include <fmt/format.h>

namespace bootstorm::cli {

std::string ready_clause(const results::ScenarioSummary& s) {
  const results::Distribution* ready = s.find("ready");
  if (ready == nullptr || ready->count == 0) return fmt::format("0/{} ready", s.vms);
  return fmt::format("{}/{} ready, boot time ({}) mean {:.2f} s, P50 {:.2f} s, P95 {:.2f} s, max {:.2f} s",
                     ready->count, ready->total, s.ready_milestone, *ready->mean, *ready->p50, *ready->p95,
                     *ready->max);
}

}  // namespace bootstorm::cli
