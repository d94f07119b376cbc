// The bounds on a plan's size (see the header).
#include "orchestrator/plan/size_bounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

}  // namespace

std::vector<Diagnostic> check_placement_size(const std::string& file, const std::string& context,
                                             const std::vector<Placement>& placement,
                                             const SizeLimits& limits) {
  std::vector<Diagnostic> out;
  if (limits.max_vms > 0) {
    long long total = 0;
    for (std::size_t i = 0; i < placement.size(); ++i) {
      total += placement[i].vms;
      if (total > limits.max_vms) {
        out.push_back(at(file, placement[i].vms_at,
                         count_message(fmt::format("{}[{}].vms", context, i), total, false, limits)));
        break;
      }
    }
  }
  if (limits.hosts) check_memory(file, context, placement, *limits.hosts, out);
  return out;
}

std::vector<Diagnostic> check_plan_size(const StormPlan& plan, const SizeLimits& limits) {
  std::vector<Diagnostic> out;
  const auto share = [&](long long vms) { return limits.share ? limits.share(static_cast<int>(vms)) : vms; };
  long long created = 0;
  bool counted = limits.max_vms <= 0;
  for (std::size_t s = 0; s < plan.scenarios.size(); ++s) {
    const Scenario& scenario = plan.scenarios[s];
    const std::string context = fmt::format("scenarios[{}].placement", s);
    long long prefix = 0;
    for (std::size_t i = 0; i < scenario.placement.size() && !counted; ++i) {
      prefix += scenario.placement[i].vms;
      if (created + share(prefix) > limits.max_vms) {
        out.push_back(at(plan.source_path, scenario.placement[i].vms_at,
                         count_message(fmt::format("{}[{}].vms", context, i), created + share(prefix),
                                       static_cast<bool>(limits.share), limits)));
        counted = true;
      }
    }
    created += share(scenario.total_vms());
    if (limits.hosts) check_memory(plan.source_path, context, scenario.placement, *limits.hosts, out);
  }
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return out;
}

}  // namespace bootstorm::plan
