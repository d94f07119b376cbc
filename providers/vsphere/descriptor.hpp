#pragma once
// Platform kind "vsphere" as it describes itself (api::PlatformDescriptor). Pure data: the plan loader links
// this without the provider (bootstorm::vsphere_descriptor).
#include "providers/api/platform_descriptor.hpp"

namespace bootstorm::vsphere {

api::PlatformDescriptor descriptor();

// Registers the descriptor alone (plan validation); register_provider() (platform/api_choice.hpp) registers
// it with the factory.
void register_platform_descriptor();

}  // namespace bootstorm::vsphere
