// Which resource bound a layout (see the header).
#include "orchestrator/sizing/binding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace bootstorm::sizing {

namespace model = sim::model;

namespace {

// The vocabulary: link, memory, CPU, array, per-I/O latency (and the host bus, a VM's vCPUs).
std::string resource_name(model::LimitKind kind) {
  switch (kind) {
    case model::LimitKind::host_cpu:
      return "CPU";
    case model::LimitKind::host_link:
      return "link";
    case model::LimitKind::host_bus:
      return "I/O bus";
    case model::LimitKind::datastore_bandwidth:
    case model::LimitKind::datastore_iops:
      return "array";
    case model::LimitKind::per_io_latency:
      return "per-I/O latency";
    case model::LimitKind::vcpus:
      return "vCPUs";
  }
  return "";
}

std::string capacity_text(const model::BootLimit& l) {
  switch (l.kind) {
    case model::LimitKind::host_cpu:
      return fmt::format("{:g} reference cores", l.capacity);
    case model::LimitKind::datastore_iops:
      return fmt::format("{:.0f} IOPS", l.capacity);
    default:
      return fmt::format("{:.0f} MB/s", l.capacity);
  }
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

model::BootLimits add_limits(const std::vector<model::BootLimits>& storms) {
  model::BootLimits total;
  for (const auto& s : storms) {
    if (total.limits.empty()) {
      total = s;
      continue;
    }
    total.since = std::min(total.since, s.since);
    for (std::size_t i = 0; i < total.limits.size() && i < s.limits.size(); ++i) {
      total.limits[i].flow_seconds += s.limits[i].flow_seconds;
      total.limits[i].peak_utilisation =
          std::max(total.limits[i].peak_utilisation, s.limits[i].peak_utilisation);
    }
    for (const auto& [host, n] : s.memory_refusals) total.memory_refusals[host] += n;
  }
  return total;
}

Binding binding_from_limits(const model::BootLimits& limits, const std::string& source) {
  Binding b;
  b.source = source;
  if (!limits.memory_refusals.empty()) {
    auto most = std::max_element(limits.memory_refusals.begin(), limits.memory_refusals.end(),
                                 [](const auto& a, const auto& c) { return a.second < c.second; });
    int refused = 0;
    for (const auto& [host, n] : limits.memory_refusals) refused += n;
    b.resource = "memory";
    b.on = most->first;
    b.detail = fmt::format("{} power-on(s) refused for lack of host memory ({} on {})", refused, most->second,
                           most->first);
    return b;
  }
  // The limits by resource (the four hosts' links are one "link"), the one that held the boots longest.
  double total = 0;
  std::map<std::string, double> by_resource;
  for (const auto& l : limits.limits) {
    total += l.flow_seconds;
    by_resource[resource_name(l.kind)] += l.flow_seconds;
  }
  if (total <= 0) {
    b.detail = "no boot ran long enough to be held by anything";
    return b;
  }
  const auto top_resource =
      std::max_element(by_resource.begin(), by_resource.end(),
                       [](const auto& a, const auto& c) { return a.second < c.second; });
  const model::BootLimit* top = nullptr;
  int places = 0;
  for (const auto& l : limits.limits) {
    if (resource_name(l.kind) != top_resource->first || l.flow_seconds <= 0) continue;
    ++places;
    if (!top || l.flow_seconds > top->flow_seconds) top = &l;
  }
  b.resource = top_resource->first;
  b.on = top->on;
  b.share = top_resource->second / total;
  if (top->on.empty()) {
    b.detail = top->kind == model::LimitKind::per_io_latency
                   ? fmt::format(
                         "each desktop's reads ran at their per-I/O latency limit (queue depth x I/O "
                         "size / latency) {:.0f} % of the boot time; no shared resource was full",
                         *b.share * 100)
                   : fmt::format(
                         "each desktop's own vCPUs held its boot {:.0f} % of the time; no shared "
                         "resource was full",
                         *b.share * 100);
    return b;
  }
  b.peak_utilisation = top->peak_utilisation;
  b.detail = fmt::format(
      "the {} of {} ({}){} was full and held the boots {:.0f} % of their time (peak use {:.0f} %)",
      model::to_string(top->kind), top->on, capacity_text(*top),
      places > 1 ? fmt::format(", like {} other(s),", places - 1) : "", *b.share * 100,
      top->peak_utilisation * 100);
  return b;
}

Binding binding_from_storms(const std::vector<results::ScenarioSummary>& storms) {
  Binding b;
  std::map<std::string, int> memory;
  for (const auto& s : storms) {
    for (const auto& f : s.failures) {
      const std::string reason = lower(f.reason);
      if (reason.find("memory") != std::string::npos ||
          reason.find("insufficientresources") != std::string::npos)
        ++memory[f.vm];
    }
  }
  if (!memory.empty()) {
    b.resource = "memory";
    b.source = "power-on failures";
    b.detail = fmt::format("{} desktop(s) failed for lack of memory (the platform's answers)", memory.size());
    return b;
  }
  const results::HostStorage* fullest = nullptr;
  bool telemetry = false;
  for (const auto& s : storms) {
    if (!s.storage) continue;
    telemetry = true;
    for (const auto& h : s.storage->hosts) {
      if (h.peak_utilisation && (!fullest || *h.peak_utilisation > *fullest->peak_utilisation)) fullest = &h;
    }
  }
  if (fullest && *fullest->peak_utilisation >= 0.9) {
    b.resource = "link";
    b.on = fullest->host;
    b.peak_utilisation = fullest->peak_utilisation;
    b.source = "telemetry";
    b.detail = fmt::format("the HBA link of {} ran at {:.0f} % of its capacity at the peak (telemetry)",
                           fullest->host, *fullest->peak_utilisation * 100);
    return b;
  }
  b.source = telemetry ? "telemetry" : "";
  b.detail = fmt::format(
      "not named: no power-on was refused for memory and {}; CPU, array and per-I/O latency are not visible "
      "from the run (on the lab, and with --predict, they are)",
      !telemetry ? "the storms have no storage telemetry"
      : fullest  ? fmt::format("the fullest host link peaked at {:.0f} % ({})",
                               *fullest->peak_utilisation * 100, fullest->host)
                 : "the telemetry gives no link capacity");
  return b;
}

}  // namespace bootstorm::sizing
