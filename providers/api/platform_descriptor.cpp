#include "providers/api/platform_descriptor.hpp"

#include <algorithm>
#include <mutex>

namespace bootstorm::api {
namespace {

// Registration happens at start-up, look-ups on every plan load and run; a mutex keeps both simple.
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::vector<PlatformDescriptor>& registry() {
  static std::vector<PlatformDescriptor> r;
  return r;
}

}  // namespace

void register_platform_descriptor(PlatformDescriptor descriptor) {
  std::lock_guard lock(registry_mutex());
  auto& kinds = registry();
  auto same = std::find_if(kinds.begin(), kinds.end(),
                           [&](const PlatformDescriptor& d) { return d.kind == descriptor.kind; });
  if (same != kinds.end()) {
    *same = std::move(descriptor);
  } else {
    kinds.push_back(std::move(descriptor));
  }
}

std::optional<PlatformDescriptor> find_platform_descriptor(const std::string& kind) {
  std::lock_guard lock(registry_mutex());
  for (const auto& d : registry())
    if (d.kind == kind) return d;
  return std::nullopt;
}

std::vector<PlatformDescriptor> platform_descriptors() {
  std::lock_guard lock(registry_mutex());
  return registry();
}

}  // namespace bootstorm::api
