#pragma once
// How large a plan a command takes: the bounds every command that reads a plan applies before it acts
// (validate, check, run, predict, capacity, migrate), each as a diagnostic at the placement line to edit.
//   - The count: a command creates or models at most `max_vms` VMs unless told more with --max-vms.
//   - The hosts' memory, where it is known without touching a platform (a lab profile): the desktops placed
//   on
//     a host at once must fit in its memory, as the lab admits a power-on only when they do.
// Pure: the caller says what it knows of the hosts (HostMemory); nothing here reads a file or a platform.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/plan/plan.hpp"

namespace bootstorm::plan {

// The memory of the hosts a placement may name, and of each desktop.
struct HostMemory {
  std::string source;                      // what the figures are, for messages: "lab tolly-2024"
  std::string host_word;                   // "host" or "node"
  std::map<std::string, double> host_mib;  // each host's memory, by the name placements use
  double desktop_mib = 0;                  // what one desktop holds of its host while it runs
  std::string desktop;                     // what sizes a desktop: "golden VM win10-golden (4096 MiB)"
};

struct SizeLimits {
  std::string bound_by;  // who sets the count bound, for the message: "run creates", "predict models"
  // The most VMs the command creates or models, all scenarios together; 0: no count bound.
  long long max_vms = 0;
  // How many of a scenario's VMs this invocation creates (run --shard: its share); empty: all.
  std::function<long long(int scenario_vms)> share;
  std::optional<HostMemory> hosts;
};

// Every bound the plan's placements break, in file order.
std::vector<Diagnostic> check_plan_size(const StormPlan& plan, const SizeLimits& limits);

// The same for one list of placements (a MigrationPlan's vms.fromStorm): `context` names the list in messages
// ("vms.fromStorm.placement").
std::vector<Diagnostic> check_placement_size(const std::string& file, const std::string& context,
                                             const std::vector<Placement>& placement,
                                             const SizeLimits& limits);

}  // namespace bootstorm::plan
