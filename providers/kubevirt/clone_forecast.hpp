#pragma once
// How CDI will clone the golden image for this run, read from the cluster before anything is created: the
// storage class the clones land in (the default for VMs), its CSI driver, the StorageProfile's cloneStrategy,
// and whether CDI must fall back to a host-assisted copy (a snapshot clone without a VolumeSnapshotClass for
// the driver, or a source volume on another driver). Pure: the provider reads the objects and hands them in.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "providers/api/check.hpp"

namespace bootstorm::kubevirt {

struct CloneForecast {
  std::string storage_class;  // where the clones go
  std::string provisioner;    // its CSI driver
  std::string strategy;       // the StorageProfile's cloneStrategy (spec over status); "" not readable
  std::string method;         // what CDI will do: csi-clone | snapshot | copy; "" unknown
  std::string fallback;       // why a smart strategy becomes a copy ("" when it does not)
  std::string source_class;   // the golden volume's storage class ("" unknown)
};

// `storage_classes`: a StorageClassList (null: not readable). The clones' class is the one annotated
// storageclass.kubevirt.io/is-default-virt-class, else storageclass.kubernetes.io/is-default-class.
// `profile`: that class's StorageProfile (null: none or not readable). `snapshot_classes`: a
// VolumeSnapshotClassList (null: not readable). `source_class`: the golden PVC's class ("" unknown).
CloneForecast forecast_clone(const nlohmann::json& storage_classes, const nlohmann::json& profile,
                             const nlohmann::json& snapshot_classes, const std::string& source_class);

// The "clone strategy" check: a smart clone passes; a host-assisted copy is a warning with the data it will
// move through the nodes (`clones` x the golden volume's `source_size`, a Kubernetes quantity, "" unknown);
// unknown when the StorageClasses or the profile could not be read.
api::CheckResult clone_strategy_check(const CloneForecast& forecast, std::size_t clones,
                                      const std::string& source_size);

}  // namespace bootstorm::kubevirt
