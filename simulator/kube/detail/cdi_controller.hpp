#pragma once
// Internal to bootstorm::sim_kube: CDI's DataVolume controller against the lab model. A DataVolume gets its
// PVC; a clone (sourceRef DataSource or source.pvc, leading to a golden image) runs as the model's
// volume-clone flow with the front's clone strategy and reports progress while it runs; blank volumes and
// imports are populated at once. It owns the state of the clones in progress.
#include <functional>
#include <map>
#include <string>

#include "simulator/kube/detail/event_recorder.hpp"
#include "simulator/kube/detail/lifetime.hpp"
#include "simulator/kube/detail/object_publisher.hpp"
#include "simulator/kube/kube_front_options.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube {

class CdiController {
 public:
  // The VirtualMachine ns/name owning a DataVolume that finished (or failed) should reconcile.
  using ReconcileOwner = std::function<void(const std::string& ns, const std::string& name)>;

  CdiController(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher, EventRecorder& events,
                const Lifetime& lifetime, const KubeFrontOptions& options, ReconcileOwner reconcile_owner);

  // Populates the new DataVolume ns/name: creates its PVC and starts its clone.
  void start(const std::string& ns, const std::string& name);
  // The DataVolume ns/name is being deleted: no more progress updates for it.
  void forget(const std::string& ns, const std::string& name);
  // The clone CDI does into `target_class` from a source PVC in `source_class` ("" unknown): the target's
  // StorageProfile strategy (spec over status), or "copy" (host-assisted) when the source is on another
  // driver, or a snapshot clone finds no VolumeSnapshotClass for the driver.
  std::string clone_type_for(const std::string& target_class, const std::string& source_class) const;

 private:
  struct Clone {
    std::string datastore_id;
    double size_mb = 0;
    double done_mb = 0;
    std::string in_progress_phase;
  };

  void finish_clone(const std::string& ns, const std::string& name, const Expected<void>& result);
  void progress_tick();

  ObjectStore& store_;
  model::Lab& lab_;
  ObjectPublisher& publisher_;
  EventRecorder& events_;
  const Lifetime& lifetime_;
  const KubeFrontOptions& options_;
  ReconcileOwner reconcile_owner_;
  std::map<std::string, Clone> clones_;  // "ns/name" of DataVolumes being cloned
  bool progress_ticker_ = false;         // a progress_tick is scheduled
};

}  // namespace bootstorm::sim::kube
