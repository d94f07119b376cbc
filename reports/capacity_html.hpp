#pragma once
// capacity.html of `bootstorm capacity`: the verdict, the curve as a chart (P50 and P95 against desktops per
// host, with the SLO's bound, the capacity and the knee marked) and the table of the steps. The view is plain
// data, so that the renderer knows nothing of the search (orchestrator/sizing fills it).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bootstorm::reports {

struct CapacityStepView {
  int per_host = 0;
  int vms = 0;
  int storms = 0;
  std::optional<double> p50_s, p95_s;
  double ready_fraction = 0;
  std::string slo_value;  // the SLO's statistic as shown, with its interval
  bool meets = false;
  bool marginal = false;
  std::string held_by;  // what held the step's boots back
  std::string run_dir;  // the step's run directory, relative to the search's
};

struct CapacityView {
  std::string title;              // "Capacity: <plan> — <scenario>"
  std::string origin;             // predicted / simulated lab / measured, with the lab and the what-ifs
  std::string slo;                // "ready p95 <= 60s"
  std::string stat;               // "p95": which curve the bound applies to
  std::optional<double> bound_s;  // the SLO's time bound (none for ready_fraction)
  std::optional<int> capacity, knee;
  std::vector<std::string> verdict;     // sentences
  std::vector<CapacityStepView> steps;  // ascending per_host
};

std::string render_capacity_html(const CapacityView& view, std::string_view generated_at);

}  // namespace bootstorm::reports
