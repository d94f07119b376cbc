// The plan loader offers the ready signals kind kubevirt's descriptor names: they must be the milestones the
// provider observes (its capabilities, known without connecting).
#include "providers/kubevirt/descriptor.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "common/quantity.hpp"
#include "providers/kubevirt/kube_objects.hpp"
#include "providers/kubevirt/kubevirt_provider.hpp"

namespace bootstorm::kubevirt {
namespace {

TEST(KubevirtDescriptor, NamesTheMilestonesTheProviderObserves) {
  boost::asio::io_context io;
  api::ProviderConfig config;
  config.kind = descriptor().kind;
  auto provider = make_provider(io.get_executor(), config);
  std::vector<std::string> observed;
  for (const auto& [milestone, resolution] : provider->capabilities().observed)
    observed.emplace_back(api::to_string(milestone));
  EXPECT_EQ(observed, descriptor().observed_milestones);
}

// The size bounds weigh a KubeVirt desktop with the descriptor's figure: what the VirtualMachine requests.
TEST(KubevirtDescriptor, DesktopMemoryIsWhatTheVirtualMachineRequests) {
  const auto requested = parse_quantity(VmBuild{}.memory);
  ASSERT_TRUE(requested.has_value());
  EXPECT_EQ(*requested, descriptor().desktop_memory_mib * 1024.0 * 1024.0);
}

}  // namespace
}  // namespace bootstorm::kubevirt
