// How CDI will clone: the default storage class, its StorageProfile's strategy, and the fallbacks to a
// host-assisted copy; and the "clone strategy" check built from it.
#include "providers/kubevirt/clone_forecast.hpp"

#include <gtest/gtest.h>

namespace {

using bootstorm::api::CheckStatus;
using namespace bootstorm::kubevirt;
using nlohmann::json;

json storage_class(const std::string& name, const std::string& driver,
                   const char* default_annotation = nullptr) {
  json sc = {{"metadata", {{"name", name}}}, {"provisioner", driver}};
  if (default_annotation) sc["metadata"]["annotations"] = {{default_annotation, "true"}};
  return sc;
}
json list(json items) {
  return {{"items", std::move(items)}};
}
json profile(const std::string& status_strategy, const std::string& spec_strategy = {}) {
  json p = {{"status", {{"cloneStrategy", status_strategy}}}, {"spec", json::object()}};
  if (!spec_strategy.empty()) p["spec"]["cloneStrategy"] = spec_strategy;
  return p;
}

const json kClasses = list(
    {storage_class("ceph-rbd", "rbd.csi.ceph.com", "storageclass.kubernetes.io/is-default-class"),
     storage_class("ceph-rbd-virt", "rbd.csi.ceph.com", "storageclass.kubevirt.io/is-default-virt-class"),
     storage_class("nfs", "nfs.csi.k8s.io")});

TEST(CloneForecast, TheDefaultVirtClassAndItsProfilesStrategy) {
  const auto f = forecast_clone(kClasses, profile("csi-clone"), list(json::array()), "ceph-rbd");
  EXPECT_EQ(f.storage_class, "ceph-rbd-virt");
  EXPECT_EQ(f.provisioner, "rbd.csi.ceph.com");
  EXPECT_EQ(f.method, "csi-clone");
  EXPECT_TRUE(f.fallback.empty());
  // spec.cloneStrategy overrides what CDI found.
  EXPECT_EQ(forecast_clone(kClasses, profile("csi-clone", "copy"), json(), "").method, "copy");
}

TEST(CloneForecast, ASnapshotCloneNeedsASnapshotClassForTheDriver) {
  auto f = forecast_clone(kClasses, profile("snapshot"), list(json::array({{{"driver", "other"}}})), "");
  EXPECT_EQ(f.method, "copy");
  EXPECT_NE(f.fallback.find("no VolumeSnapshotClass serves rbd.csi.ceph.com"), std::string::npos);
  f = forecast_clone(kClasses, profile("snapshot"), list(json::array({{{"driver", "rbd.csi.ceph.com"}}})),
                     "");
  EXPECT_EQ(f.method, "snapshot");
  // Unreadable snapshot classes: unknown, not a guess.
  EXPECT_TRUE(forecast_clone(kClasses, profile("snapshot"), json(), "").method.empty());
}

TEST(CloneForecast, ASourceOnAnotherDriverIsCopiedThroughTheNodes) {
  const auto f = forecast_clone(kClasses, profile("csi-clone"), json(), "nfs");
  EXPECT_EQ(f.method, "copy");
  EXPECT_NE(f.fallback.find("storage class nfs (nfs.csi.k8s.io)"), std::string::npos) << f.fallback;
}

TEST(CloneForecast, TheCheckPassesASmartCloneAndWarnsOfACopyWithTheDataItMoves) {
  auto pass = clone_strategy_check(forecast_clone(kClasses, profile("csi-clone"), json(), ""), 24, "40Gi");
  EXPECT_EQ(pass.status, CheckStatus::pass) << pass.finding;
  auto warn = clone_strategy_check(forecast_clone(kClasses, profile("copy"), json(), ""), 24, "40Gi");
  EXPECT_EQ(warn.status, CheckStatus::warn) << warn.finding;
  EXPECT_NE(warn.finding.find("24 clones move 960 GiB"), std::string::npos) << warn.finding;
  EXPECT_NE(warn.finding.find("its StorageProfile's cloneStrategy is copy"), std::string::npos)
      << warn.finding;
  auto unknown = clone_strategy_check(forecast_clone(json(), json(), json(), ""), 24, "");
  EXPECT_EQ(unknown.status, CheckStatus::unknown);
  auto no_profile = clone_strategy_check(forecast_clone(kClasses, json(), json(), ""), 24, "");
  EXPECT_EQ(no_profile.status, CheckStatus::unknown);
  EXPECT_NE(no_profile.finding.find("StorageProfile of storage class ceph-rbd-virt"), std::string::npos);
}

}  // namespace
