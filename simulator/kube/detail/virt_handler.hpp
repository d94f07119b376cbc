#pragma once
// Internal to bootstorm::sim_kube: virt-handler against the lab model. The model's boot milestones of a lab
// VM move its VirtualMachineInstance through its phases, conditions, interfaces and guest OS info. It owns
// the record of which VMI versions carry a milestone no watch has written yet, which the watches consume.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "simulator/kube/detail/event_recorder.hpp"
#include "simulator/kube/detail/object_publisher.hpp"
#include "simulator/kube/detail/vm_controller.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube {

class VirtHandler {
 public:
  // `rng` is the front's: interface MAC addresses come from the same seeded sequence as the uids.
  VirtHandler(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher, EventRecorder& events,
              VmController& vms, std::mt19937_64& rng);

  void on_lab_event(const model::VmEvent& event);
  // A watch is handing a chunk with these VMI resourceVersions to its socket: stamps "delivered" truth and
  // returns the milestones it stamped, for mark_written once the write has completed.
  using Delivered = std::vector<std::pair<std::string, model::Milestone>>;
  Delivered mark_delivered(const std::vector<std::uint64_t>& resource_versions);
  // The milestones these VMI resourceVersions carry that nothing has taken yet, taken without stamping any
  // truth: for a writer that sends the versions to another server (lab attach).
  Delivered take_milestones(const std::vector<std::uint64_t>& resource_versions);
  void mark_written(const Delivered& delivered);

 private:
  ObjectStore& store_;
  model::Lab& lab_;
  ObjectPublisher& publisher_;
  EventRecorder& events_;
  VmController& vms_;
  std::mt19937_64& rng_;
  // VMI resourceVersions that carry a lab milestone no watch has written yet: (lab VM id, milestone). The
  // first watch frame carrying one stamps the truth's "delivered" time (Lab::note_milestone_delivered).
  static constexpr std::size_t kMaxUndelivered = 200000;
  std::unordered_map<std::uint64_t, std::pair<std::string, model::Milestone>> undelivered_;
};

}  // namespace bootstorm::sim::kube
