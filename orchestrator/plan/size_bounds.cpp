// The bounds on a plan's size (see the header).
#include "orchestrator/plan/size_bounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <tuple>

namespace bootstorm::plan {

namespace {

Diagnostic at(const std::string& file, const SourcePos& pos, std::string message) {
  return Diagnostic{file, pos.line, pos.column, std::move(message)};
}

std::string gib(double mib) {
  const double g = mib / 1024;
  if (g >= 1024 * 1024) return fmt::format("{:.0f} PiB", g / (1024 * 1024));
  if (g >= 1024 * 10) return fmt::format("{:.0f} TiB", g / 1024);
  return fmt::format("{:.0f} GiB", g);
}

std::string names_of(const std::map<std::string, double>& hosts) {
  std::string out;
  for (const auto& [name, mib] : hosts) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

// The memory bound of one placement list: each host holds its desktops at once.
void check_memory(const std::string& file, const std::string& context,
                  const std::vector<Placement>& placement, const HostMemory& hosts,
                  std::vector<Diagnostic>& out) {
  for (std::size_t i = 0; i < placement.size(); ++i) {
    const Placement& p = placement[i];
    const std::string where = fmt::format("{}[{}]", context, i);
    auto host = hosts.host_mib.find(p.host);
    if (host == hosts.host_mib.end()) {
      out.push_back(at(file, p.host_at,
                       fmt::format("{}.host: {} has no {} '{}' (its {}s: {})", where, hosts.source,
                                   hosts.host_word, p.host, hosts.host_word, names_of(hosts.host_mib))));
      continue;
    }
    if (hosts.desktop_mib <= 0) continue;
    const double need = static_cast<double>(p.vms) * hosts.desktop_mib;
    if (need <= host->second) continue;
    const auto fit = static_cast<long long>(std::floor(host->second / hosts.desktop_mib));
    out.push_back(at(
        file, p.vms_at,
        fmt::format("{}.vms: {} desktops need {} of memory on {} {}, which has {} ({}; {}): at most {} fit. "
                    "Place fewer there, or spread them over more {}s",
                    where, p.vms, gib(need), hosts.host_word, p.host, gib(host->second), hosts.source,
                    hosts.desktop, fit, hosts.host_word)));
  }
}

std::string count_message(const std::string& where, long long total, bool shared, const SizeLimits& limits) {
  return fmt::format(
      "{}: with it the plan has {} VMs{}, more than the {} that {} without a larger --max-vms; pass "
      "--max-vms "
      "{} if that is what you mean",
      where, total, shared ? " in this shard" : "", limits.max_vms, limits.bound_by, total);
}

// The count bound over one placement list, `created` VMs before it: the diagnostic at the entry that crosses
// it, if one does. `share` (may be empty) turns a count of the list's VMs into this invocation's share.
std::optional<Diagnostic> count_crossing(const std::string& file, const std::string& context,
                                         const std::vector<Placement>& placement, long long created,
                                         const std::function<long long(int)>& share,
                                         const SizeLimits& limits) {
  long long prefix = 0;
  for (std::size_t i = 0; i < placement.size(); ++i) {
    prefix += placement[i].vms;
    const long long total = created + (share ? share(static_cast<int>(prefix)) : prefix);
    if (total > limits.max_vms) {
      return at(
          file, placement[i].vms_at,
          count_message(fmt::format("{}[{}].vms", context, i), total, static_cast<bool>(share), limits));
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<Diagnostic> check_placement_size(const std::string& file, const std::string& context,
                                             const std::vector<Placement>& placement,
                                             const SizeLimits& limits) {
  std::vector<Diagnostic> out;
  if (limits.max_vms > 0) {
    if (auto d = count_crossing(file, context, placement, 0, limits.share, limits))
      out.push_back(std::move(*d));
  }
  if (limits.hosts) check_memory(file, context, placement, *limits.hosts, out);
  return out;
}

std::vector<Diagnostic> check_plan_size(const StormPlan& plan, const SizeLimits& limits) {
  std::vector<Diagnostic> out;
  long long created = 0;
  bool counted = limits.max_vms <= 0;
  for (std::size_t s = 0; s < plan.scenarios.size(); ++s) {
    const Scenario& scenario = plan.scenarios[s];
    const std::string context = fmt::format("scenarios[{}].placement", s);
    if (!counted) {
      if (auto d =
              count_crossing(plan.source_path, context, scenario.placement, created, limits.share, limits)) {
        out.push_back(std::move(*d));
        counted = true;  // one count diagnostic per plan
      }
    }
    created += limits.share ? limits.share(scenario.total_vms()) : scenario.total_vms();
    if (limits.hosts) check_memory(plan.source_path, context, scenario.placement, *limits.hosts, out);
  }
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return out;
}

}  // namespace bootstorm::plan
