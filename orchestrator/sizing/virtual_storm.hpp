#pragma once
// One scenario's storm in the lab model's virtual time: the VMs cloned onto their hosts, all powered on at
// one instant (or on the plan's ramp), and the model run until every VM is ready or the storm's timeout. No
// servers and no sockets; deterministic for the lab's seed.
//
// What the lab's fronts add to the model in a real-time run is applied here the same way, so that a
// prediction agrees with an embedded run: vCenter's admission control (AdmissionQueue: power-ons hold a host
// cost until the VM runs, clones until they complete) and virt-controller's launch rate limit (the KubeVirt
// CR's, 19 writes per launch). What a real run adds on top — the client's request spread and the
// milestones' observation delay — is not modelled: a prediction's milestones are the model's own instants.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "providers/api/milestone.hpp"
#include "providers/api/platform_descriptor.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sizing {

struct VirtualVmSpec {
  std::string name;  // as the run names it
  std::string host;  // vSphere host or Kubernetes node, by name
  // The name in the model, which keys the VM's random draws (boot jitter, faults): predictions that differ
  // only in a what-if use the same names, so that the difference is the what-if's alone. Empty: `name`.
  std::string model_name;
};

struct VirtualStormOptions {
  // The lab model's front that plays the plan's platform kind (its descriptor's lab_front).
  api::LabFront front = api::LabFront::vcenter;
  sim::model::CloneKind clone_kind = sim::model::CloneKind::linked;  // vcenter: full | linked | instant
  std::string golden_vm;                                             // vcenter: the golden VM's name
  std::string namespace_ = "storm";                                  // kubernetes: the VMs' namespace
  std::string ramp_mode = "simultaneous";                            // simultaneous | ramp
  double ramp_per_second = 0;
  double timeout_s = 600;
  double settle_s = 0;
  int max_concurrent = 64;  // the plan's apiBudget.maxConcurrent: clones in flight at once
};

struct VirtualVm {
  std::string name;
  std::string model_name;
  std::string id;
  std::string host;
  double clone_s = -1;
  std::string clone_method;                     // the clone kind as the model made it
  std::optional<double> start;                  // unix s (virtual): the start request
  std::map<api::Milestone, double> milestones;  // unix s (virtual)
  std::string failure;                          // why it was not made or did not start
};

struct VirtualStorm {
  double provision_begin = 0, provision_end = 0;  // unix s (virtual)
  double fired_at = 0;
  double ended_at = 0;  // every VM ready, or the timeout
  std::vector<VirtualVm> vms;
  std::size_t peak_operations_queued = 0;  // vCenter admission: power-ons and clones that waited
};

// Runs one scenario on `lab` (virtual time), leaving its VMs in the lab; delete_vms() removes them.
Expected<VirtualStorm> run_virtual_storm(sim::model::Lab& lab, const std::vector<VirtualVmSpec>& vms,
                                         const VirtualStormOptions& options);
void delete_vms(sim::model::Lab& lab, const VirtualStorm& storm);

// The model's clone kind for a plan's golden.clone on the lab's vCenter front (full | linked | instant); an
// error otherwise.
Expected<sim::model::CloneKind> vcenter_clone_kind(const std::string& clone);

}  // namespace bootstorm::sizing
