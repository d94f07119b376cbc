// The commands' size bounds with the lab's hosts (see the header).
#include "orchestrator/cli/plan_bounds.hpp"

#include <fmt/format.h>

#include "providers/api/platform_descriptor.hpp"
#include "simulator/lab/lab_server.hpp"

namespace bootstorm::cli {

namespace {

const sim::model::GuestProfile* profile_named(const sim::model::LabSpec& lab, const std::string& name) {
  for (const auto& p : lab.profiles)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace

std::optional<plan::HostMemory> lab_host_memory(const plan::StormPlan& plan, const sim::model::LabSpec& lab,
                                                const std::string& label) {
  const auto descriptor = api::find_platform_descriptor(plan.platform.kind);
  if (!descriptor) return std::nullopt;
  plan::HostMemory hosts;
  hosts.source = label;
  std::string golden;
  const sim::model::GuestProfile* profile = nullptr;
  if (descriptor->lab_front == api::LabFront::vcenter) {
    hosts.host_word = "host";
    for (const auto& h : lab.hosts)
      if (h.inventory == "vcenter") hosts.host_mib[h.name] = h.memory_gb * 1024;
    for (const auto& g : lab.golden_vms) {
      if (g.name != plan.platform.settings.golden_image()) continue;
      golden = "golden VM " + g.name;
      profile = profile_named(lab, g.profile);
    }
  } else {
    hosts.host_word = "node";
    for (const auto& n : lab.kube.nodes) {
      for (const auto& h : lab.hosts)
        if (h.name == n.host) hosts.host_mib[n.name] = h.memory_gb * 1024;
    }
    for (const auto& g : lab.golden_images) {
      if (g.name != plan.platform.settings.golden_image()) continue;
      golden = "golden image " + g.name;
      profile = profile_named(lab, g.profile);
    }
  }
  if (descriptor->desktop_memory_mib > 0) {
    hosts.desktop_mib = descriptor->desktop_memory_mib;
    hosts.desktop = fmt::format("{} MiB per {} desktop", descriptor->desktop_memory_mib, descriptor->kind);
  } else if (profile) {
    hosts.desktop_mib = profile->memory_mb;
    hosts.desktop = fmt::format("{} MiB per desktop, the {}'s", profile->memory_mb, golden);
  }
  return hosts;
}

std::vector<plan::Diagnostic> plan_size_diagnostics(const plan::StormPlan& plan, const PlanBounds& bounds) {
  plan::SizeLimits limits;
  limits.bound_by = bounds.bound_by;
  limits.max_vms = bounds.max_vms;
  limits.share = bounds.share;
  std::optional<sim::model::LabSpec> own;
  const sim::model::LabSpec* lab = bounds.lab;
  std::string label = bounds.lab_label;
  if (!lab && plan.platform.endpoint == "embedded") {
    auto loaded = sim::model::load_lab_spec(plan.platform.lab.empty() ? sim::LabServerOptions{}.lab
                                                                      : plan.platform.lab);
    if (!loaded) {
      return {plan::Diagnostic{plan.source_path, plan.platform.lab_at.line, plan.platform.lab_at.column,
                               "platform.lab: " + loaded.error().what()}};
    }
    own = std::move(*loaded);
    lab = &*own;
  }
  if (lab && label.empty()) label = "lab " + lab->name;
  if (lab) limits.hosts = lab_host_memory(plan, *lab, label);
  return plan::check_plan_size(plan, limits);
}

std::vector<plan::Diagnostic> migration_size_diagnostics(const std::string& path,
                                                         const migrate::MigrationPlan& plan,
                                                         long long max_vms) {
  if (!plan.vms.from_storm) return {};
  plan::SizeLimits limits;
  limits.bound_by = "migrate creates";
  limits.max_vms = max_vms;
  return plan::check_placement_size(path, "vms.fromStorm.placement", plan.vms.from_storm->placement, limits);
}

}  // namespace bootstorm::cli
