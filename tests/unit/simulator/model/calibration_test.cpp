// The key acceptance test of the lab: Tolly 2024 (Broadcom) — 24 Windows 10 VMs booted at once average
// 31.54 s as 4x R740 16GFC x 6 VMs and 7.58 s as 1x R7625 64GFC x 24 VMs. The result must emerge from the
// lab profile's physics (simulator/labs/tolly-2024.yaml), computed here in virtual time.
#include <gtest/gtest.h>

#include "tests/unit/simulator/model/lab_test_support.hpp"

namespace bootstorm::sim::model {
namespace {

using namespace bootstorm::sim::model::testing;

double tolly_storm(const std::vector<std::pair<std::string, int>>& placement, Milestone milestone,
                   const std::function<void(LabSpec&)>& tweak = nullptr, CloneKind kind = CloneKind::linked) {
  auto spec = load_lab_spec("tolly-2024");
  EXPECT_TRUE(spec.has_value()) << (spec ? "" : spec.error().what());
  if (!spec) return -1;
  if (tweak) tweak(*spec);
  Lab lab(*spec, virtual_options());
  std::vector<std::string> ids;
  int n = 0;
  for (const auto& [host, count] : placement) {
    for (int i = 0; i < count; ++i) {
      ids.push_back(
          clone_to(lab, "win10-golden", "bs-" + std::to_string(n++), lab.find_host(host)->id, kind));
    }
  }
  storm(lab, ids);
  return mean_since_start(lab, ids, milestone);
}

TEST(Calibration, FourPurleyHostsWithSixVmsEachAverage31_54s) {
  const double mean =
      tolly_storm({{"r740-01", 6}, {"r740-02", 6}, {"r740-03", 6}, {"r740-04", 6}}, Milestone::guest_agent);
  RecordProperty("mean_s", std::to_string(mean));
  EXPECT_NEAR(mean, 31.54, 31.54 * 0.10);
}

TEST(Calibration, OneEpycHostWithTwentyFourVmsAverages7_58s) {
  const double mean = tolly_storm({{"r7625-01", 24}}, Milestone::guest_agent);
  RecordProperty("mean_s", std::to_string(mean));
  EXPECT_NEAR(mean, 7.58, 7.58 * 0.10);
}

// Tolly booted existing VMs, each on its own disk: full clones. In this lab every disk, the golden VM's
// included, is on the one shared array, so linked clones (whose boot reads go to the golden VM's base disk)
// load the same datastore and boot alike: the calibration holds for both kinds.
TEST(Calibration, FullClonesLikeTheReportsExistingVmsBootAlike) {
  const double purley = tolly_storm({{"r740-01", 6}, {"r740-02", 6}, {"r740-03", 6}, {"r740-04", 6}},
                                    Milestone::guest_agent, nullptr, CloneKind::full);
  const double epyc = tolly_storm({{"r7625-01", 24}}, Milestone::guest_agent, nullptr, CloneKind::full);
  RecordProperty("purley_mean_s", std::to_string(purley));
  RecordProperty("epyc_mean_s", std::to_string(epyc));
  EXPECT_NEAR(purley, 31.54, 31.54 * 0.10);
  EXPECT_NEAR(epyc, 7.58, 7.58 * 0.10);
}

TEST(Calibration, TheEpycHostIsNotLimitedByTheArray) {
  // With the array's bandwidth doubled the 64G storm barely changes: the array is not THE bottleneck.
  const double base = tolly_storm({{"r7625-01", 24}}, Milestone::guest_agent);
  const double bigger = tolly_storm({{"r7625-01", 24}}, Milestone::guest_agent, [](LabSpec& s) {
    s.datastores[0].mbps *= 2;
    s.datastores[0].iops *= 2;
  });
  EXPECT_NEAR(bigger, base, base * 0.02);
}

TEST(Calibration, PackingTheEpycHostUntilItsLinkSaturatesSlowsItDown) {
  // Contention emerges from shared resources: 96 VMs want ~10 GB/s, more than the 6,400 MB/s 64GFC link.
  const double crowded = tolly_storm({{"r7625-01", 96}}, Milestone::guest_agent);
  EXPECT_GT(crowded, 7.58 * 1.3);
}

}  // namespace
}  // namespace bootstorm::sim::model
