#pragma once
// Which resource bound a layout's boots. On the lab (the model in virtual time, or the embedded lab in real
// time) it is the lab's own accounting of what held the boot flows back (sim::model::Lab::boot_limits); on a
// real platform, what the run shows: power-ons refused for memory, and a host link the platform's telemetry
// saw full. Pure.
#include <optional>
#include <string>
#include <vector>

#include "results/summary.hpp"
#include "simulator/model/boot_limits.hpp"

namespace bootstorm::sizing {

struct Binding {
  // memory | link | I/O bus | CPU | array | per-I/O latency | vCPUs; empty when nothing says.
  std::string resource;
  std::string on;                          // the host's or datastore's name, when it is one
  std::optional<double> share;             // of the boot flows' time, the part this limit held them (lab)
  std::optional<double> peak_utilisation;  // the resource's peak use, 0..1
  std::string source;                      // "lab model", "embedded lab", "telemetry", "power-on failures"
  std::string detail;                      // one sentence for the report and the terminal
};

// The limits of several storms added up (flow-seconds and refusals summed, peaks the highest).
sim::model::BootLimits add_limits(const std::vector<sim::model::BootLimits>& storms);

// What held the boots back most: memory when a power-on was refused for it, else the limit that held the boot
// flows the longest. `source` names where the accounting came from.
Binding binding_from_limits(const sim::model::BootLimits& limits, const std::string& source);

// On a real platform: memory from the failures' reasons, a link from the telemetry (peak use >= 90 %);
// otherwise an empty resource and a detail saying what was and was not visible.
Binding binding_from_storms(const std::vector<results::ScenarioSummary>& storms);

}  // namespace bootstorm::sizing
