// Test executables that load plans of the built-in kinds, or resolve their platforms, compile this file: the
// kinds' descriptors are registered before any test runs, as the bootstorm executable's main() does. Only the
// descriptors (bootstorm::vsphere_descriptor, bootstorm::kubevirt_descriptor), not the providers.
#include <gtest/gtest.h>

#include "providers/kubevirt/descriptor.hpp"
#include "providers/vsphere/descriptor.hpp"

namespace {

class BuiltinPlatforms : public ::testing::Environment {
 public:
  void SetUp() override {
    bootstorm::vsphere::register_platform_descriptor();
    bootstorm::kubevirt::register_platform_descriptor();
  }
};

// A test executable links every object file, so this registration is not dropped.
[[maybe_unused]] ::testing::Environment* const kBuiltinPlatforms =
    ::testing::AddGlobalTestEnvironment(new BuiltinPlatforms);

}  // namespace
