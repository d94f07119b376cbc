#include "providers/kubevirt/clone_forecast.hpp"

#include <fmt/format.h>

#include "common/quantity.hpp"
#include "providers/kubevirt/kube_objects.hpp"

namespace bootstorm::kubevirt {

using nlohmann::json;

namespace {

constexpr const char* kName = "clone strategy";

const json* items_of(const json& list) {
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return nullptr;
  return &list["items"];
}

}  // namespace

CloneForecast forecast_clone(const json& storage_classes, const json& profile, const json& snapshot_classes,
                             const std::string& source_class) {
  CloneForecast f;
  f.source_class = source_class;
  const json* classes = items_of(storage_classes);
  if (!classes) return f;
  const json* chosen = nullptr;
  for (const char* annotation :
       {"storageclass.kubevirt.io/is-default-virt-class", "storageclass.kubernetes.io/is-default-class"}) {
    for (const auto& sc : *classes) {
      if (text_at(sc, {"metadata", "annotations", annotation}) == "true") {
        chosen = &sc;
        break;
      }
    }
    if (chosen) break;
  }
  if (!chosen) return f;
  f.storage_class = text_at(*chosen, {"metadata", "name"});
  f.provisioner = text_at(*chosen, {"provisioner"});
  f.strategy = text_at(profile, {"spec", "cloneStrategy"});
  if (f.strategy.empty()) f.strategy = text_at(profile, {"status", "cloneStrategy"});
  if (f.strategy.empty()) return f;
  f.method = f.strategy;
  if (f.strategy == "copy") return f;
  if (!source_class.empty() && source_class != f.storage_class) {
    std::string source_driver;
    for (const auto& sc : *classes)
      if (text_at(sc, {"metadata", "name"}) == source_class) source_driver = text_at(sc, {"provisioner"});
    if (source_driver != f.provisioner) {
      f.method = "copy";
      f.fallback = fmt::format("the golden volume is in storage class {} ({}), not on {}", source_class,
                               source_driver.empty() ? "driver unknown" : source_driver, f.provisioner);
      return f;
    }
  }
  if (f.strategy == "snapshot") {
    const json* snapshot = items_of(snapshot_classes);
    if (!snapshot) {
      f.method.clear();  // cannot tell whether the snapshot clone will work
      return f;
    }
    bool found = false;
    for (const auto& vsc : *snapshot) found = found || text_at(vsc, {"driver"}) == f.provisioner;
    if (!found) {
      f.method = "copy";
      f.fallback = "no VolumeSnapshotClass serves " + f.provisioner + ", which a snapshot clone needs";
    }
  }
  return f;
}

api::CheckResult clone_strategy_check(const CloneForecast& f, std::size_t clones,
                                      const std::string& source_size) {
  if (f.storage_class.empty()) {
    return api::check_result(
        kName, api::CheckStatus::unknown,
        "no default StorageClass could be read (storage.k8s.io storageclasses)",
        "ask a cluster admin which StorageClass VMs get and its StorageProfile's cloneStrategy");
  }
  const std::string where = fmt::format("storage class {} ({})", f.storage_class, f.provisioner);
  if (f.method.empty()) {
    return api::check_result(
        kName, api::CheckStatus::unknown,
        f.strategy.empty()
            ? fmt::format("the StorageProfile of {} could not be read", where)
            : fmt::format("{} clones by snapshot, and the VolumeSnapshotClasses could not be read", where),
        "kubectl get storageprofile " + f.storage_class + " -o yaml; kubectl get volumesnapshotclass");
  }
  if (f.method != "copy") {
    return api::check_result(
        kName, api::CheckStatus::pass,
        fmt::format("{}: CDI clones by {}, on the storage, without copying through the nodes", where,
                    f.method));
  }
  std::string moved;
  if (auto bytes = parse_quantity(source_size); bytes && *bytes > 0) {
    moved = fmt::format(
        "; each clone copies the whole golden volume ({}) through a node: {} clones move {:.0f} GiB "
        "that a CSI or snapshot clone would leave on the storage",
        source_size, clones, *bytes * static_cast<double>(clones) / (1024.0 * 1024 * 1024));
  } else {
    moved = "; each clone copies the whole golden volume through a node";
  }
  const std::string why = f.fallback.empty() ? "its StorageProfile's cloneStrategy is copy"
                                             : "it falls back from " + f.strategy + ": " + f.fallback;
  return api::check_result(
      kName, api::CheckStatus::warn,
      fmt::format("{}: CDI will clone host-assisted (copy), {}{}", where, why, moved),
      "expect provisioning to take as long as those copies; where the storage supports it, set "
      "StorageProfile " +
          f.storage_class +
          " spec.cloneStrategy to csi-clone, or to snapshot with a VolumeSnapshotClass for " + f.provisioner);
}

}  // namespace bootstorm::kubevirt
