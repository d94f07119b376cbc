#pragma once
// The storage a predicted storm moved, from the lab model's own counters (exact integrals of its flows, on
// the model's storage grid): per VM, per host link and per host×datastore, as the TelemetryReport the run's
// reports read. Source "lab model"; the resolution is the model's grid. Pure: reads a lab in virtual time.
#include <string>
#include <vector>

#include "providers/api/storage_telemetry.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sizing {

// The VMs whose own series a report keeps: beyond, their hosts' and datastores' series and each VM's totals,
// as the Prometheus source reads per-node sums beyond its per-VMI limit (a 10,000-VM storm would otherwise
// write a sample per VM per step, gigabytes of journal).
constexpr std::size_t kPredictedVmSeriesLimit = 2000;

// The window [from, to] (unix s, virtual) on the model's grid, for the VMs whose model ids are `vm_ids`
// (named `names` in the run, in the same order), their hosts (KubeVirt: named by their nodes) and the
// datastores those hosts used.
api::TelemetryReport predicted_telemetry(sim::model::Lab& lab, const std::vector<std::string>& vm_ids,
                                         const std::vector<std::string>& names, double from, double to);

}  // namespace bootstorm::sizing
