#pragma once
// Platform kind "kubevirt" as it describes itself (api::PlatformDescriptor). Pure data: the plan loader links
// this without the provider (bootstorm::kubevirt_descriptor).
#include "providers/api/platform_descriptor.hpp"

namespace bootstorm::kubevirt {

api::PlatformDescriptor descriptor();

// Registers the descriptor alone (plan validation); register_provider() (kubevirt_provider.hpp) registers it
// with the factory.
void register_platform_descriptor();

}  // namespace bootstorm::kubevirt
