// Fuzz target: the plan loader (YAML or JSON, validation with file:line:col diagnostics) and, for every plan
// it accepts, the resolved-plan emitter: what to_yaml() writes must load again to the same plan.
#include "orchestrator/plan/plan.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "providers/kubevirt/descriptor.hpp"
#include "providers/vsphere/descriptor.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The built-in kinds' plan rules, as the bootstorm executable registers them (once, on the first input).
  static const bool registered = [] {
    bootstorm::vsphere::register_platform_descriptor();
    bootstorm::kubevirt::register_platform_descriptor();
    return true;
  }();
  (void)registered;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto loaded = bootstorm::plan::load_plan_text(text, "fuzz.yaml");
  if (loaded.plan.has_value() != loaded.diagnostics.empty()) {
    std::fprintf(stderr, "a plan and diagnostics must exclude each other\n");
    std::abort();
  }
  for (const auto& d : loaded.diagnostics) (void)d.to_string();
  if (!loaded.plan) return 0;
  const std::string emitted = bootstorm::plan::to_yaml(*loaded.plan);
  auto again = bootstorm::plan::load_plan_text(emitted, "fuzz.yaml");
  if (!again.plan) {
    std::fprintf(stderr, "the resolved plan does not load again:\n%s\n", emitted.c_str());
    for (const auto& d : again.diagnostics) std::fprintf(stderr, "  %s\n", d.to_string().c_str());
    std::abort();
  }
  if (!(*again.plan == *loaded.plan)) {
    std::fprintf(stderr, "the resolved plan loads to a different plan:\n%s\n", emitted.c_str());
    std::abort();
  }
  return 0;
}
