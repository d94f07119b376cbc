// The provision phase's order: round-robin over the hosts, so that per-host clone caps run side by side.
#include "orchestrator/engine/provision_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

namespace bootstorm::engine {
namespace {

std::vector<api::VmSpec> specs_on(const std::vector<std::string>& hosts) {
  std::vector<api::VmSpec> out;
  for (std::size_t i = 0; i < hosts.size(); ++i) out.push_back({"vm-" + std::to_string(i), "s", hosts[i], 0});
  return out;
}

TEST(ProvisionOrder, OneVmOfEachHostInTurnHostsInTheOrderTheyAppear) {
  // Placement order: h1 ×3, h2 ×1, h3 ×2.
  const auto specs = specs_on({"h1", "h1", "h1", "h2", "h3", "h3"});
  EXPECT_EQ(provision_order(specs), (std::vector<std::size_t>{0, 3, 4, 1, 5, 2}));
}

TEST(ProvisionOrder, OneHostKeepsThePlacementOrder) {
  EXPECT_EQ(provision_order(specs_on({"h", "h", "h"})), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_TRUE(provision_order({}).empty());
}

TEST(ProvisionOrder, EveryVmExactlyOnceAndEachHostsVmsInTheirOrder) {
  std::vector<std::string> hosts;
  for (int i = 0; i < 250; ++i) hosts.push_back("h" + std::to_string(i % 7 == 0 ? 0 : (i * 13) % 4 + 1));
  const auto specs = specs_on(hosts);
  auto order = provision_order(specs);
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> all(specs.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  EXPECT_EQ(sorted, all);
  std::map<std::string, std::size_t> last;
  for (std::size_t i : order) {
    if (auto it = last.find(specs[i].host); it != last.end()) {
      EXPECT_LT(it->second, i) << specs[i].host;
    }
    last[specs[i].host] = i;
  }
}

}  // namespace
}  // namespace bootstorm::engine
