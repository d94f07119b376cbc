// capacity.json, capacity.md and the terminal's verdict (see the header).
#include "orchestrator/sizing/capacity_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "results/slo_text.hpp"

namespace bootstorm::sizing {

namespace {

double round_ms(double s) {
  return std::round(s * 1000) / 1000;
}

std::string seconds(const std::optional<double>& s) {
  return s ? fmt::format("{:.2f} s", *s) : "-";
}

std::string slo_value_text(const results::SloRecord& slo, const StepFigures& f) {
  if (!f.value) return "not reached";
  std::string v = slo.is_min ? fmt::format("{:.3f}", *f.value) : fmt::format("{:.2f} s", *f.value);
  if (f.value_low && f.value_high) {
    v += slo.is_min ? fmt::format(" [{:.3f}, {:.3f}]", *f.value_low, *f.value_high)
                    : fmt::format(" [{:.2f}, {:.2f}]", *f.value_low, *f.value_high);
  }
  return v;
}

std::string held_by(const Binding& b) {
  return b.resource.empty() ? "-" : b.resource + (b.on.empty() ? "" : " " + b.on);
}

// Where the figures come from; `markdown` marks the label up for capacity.md.
std::string label(const CapacityContext& c, bool markdown) {
  const char* strong = markdown ? "**" : "";
  const char* code = markdown ? "`" : "";
  if (c.source == "predicted") {
    std::string what = fmt::format("{0}predicted{0} with lab model {1}", strong, c.lab);
    for (const auto& o : c.overrides) what += fmt::format(", {0}{1}{0}", code, o);
    return what + " (virtual time: not a measurement)";
  }
  if (c.source == "simulated")
    return fmt::format("{0}simulated lab{0} {1} in real time (not a hardware measurement)", strong, c.lab);
  return fmt::format("measured on {} at {}", c.platform, c.endpoint);
}

std::string desktops(int per_host, std::size_t hosts) {
  return hosts == 1
             ? fmt::format("{}", per_host)
             : fmt::format("{} ({} in all on {} hosts)", per_host, per_host * static_cast<int>(hosts), hosts);
}

nlohmann::ordered_json binding_json(const Binding& b) {
  nlohmann::ordered_json j;
  j["resource"] = b.resource.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(b.resource);
  if (!b.on.empty()) j["on"] = b.on;
  if (b.share) j["share"] = std::round(*b.share * 1000) / 1000;
  if (b.peak_utilisation) j["peakUtilisation"] = std::round(*b.peak_utilisation * 1000) / 1000;
  if (!b.source.empty()) j["source"] = b.source;
  j["detail"] = b.detail;
  return j;
}

}  // namespace

std::vector<std::string> capacity_verdict(const CapacityContext& c, const CapacityResult& r) {
  std::vector<std::string> out;
  const std::string tag = c.source == "predicted"   ? " (predicted)"
                          : c.source == "simulated" ? " (simulated lab)"
                                                    : "";
  const std::string slo = results::slo_text(r.slo);
  if (r.capacity) {
    std::string line = fmt::format("capacity{}: {} desktops per host within '{}'", tag,
                                   desktops(*r.capacity, r.hosts.size()), slo);
    if (r.first_miss) {
      line += fmt::format("; {} per host missed it", *r.first_miss);
    } else if (r.interrupted || r.error) {
      line += "; the search stopped before a step missed it: the capacity is at least this";
    } else if (r.reached_max) {
      line +=
          fmt::format("; the search stopped at its bound ({}): the capacity is at least this", r.bound_note);
    }
    if (r.marginal_low) {
      line += fmt::format("; marginal between {} and {} per host (the repeats' interval crosses the bound)",
                          *r.marginal_low, *r.marginal_high);
    }
    out.push_back(line);
  } else if (r.first_step_missed) {
    const StepFigures& f = r.steps.front().figures;
    out.push_back(
        fmt::format("capacity{}: none found: the first step, {} per host, already misses '{}' ({}: {})", tag,
                    f.per_host, slo, r.slo.stat, slo_value_text(r.slo, f)));
  } else {
    out.push_back(fmt::format("capacity{}: not determined", tag));
  }
  if (r.binding_at) {
    out.push_back(fmt::format("bound at {} per host by: {}{}", *r.binding_at,
                              r.binding.resource.empty() ? "(not named)" : r.binding.resource,
                              r.binding.on.empty() ? "" : " on " + r.binding.on) +
                  " — " + r.binding.detail);
  }
  if (r.interrupted) out.push_back("the search was interrupted: these are the steps it had finished");
  if (r.error) out.push_back("the search stopped: " + r.error->what());
  return out;
}

reports::CapacityView capacity_view(const CapacityContext& c, const CapacityResult& r) {
  reports::CapacityView v;
  v.title = fmt::format("Capacity: {} — {}", c.plan, r.scenario);
  v.origin = label(c, /*markdown=*/false);
  v.slo = results::slo_text(r.slo);
  v.stat = r.slo.stat;
  if (!r.slo.is_min) v.bound_s = r.slo.max;
  v.capacity = r.capacity;
  v.knee = r.knee;
  v.verdict = capacity_verdict(c, r);
  for (const auto& s : r.steps) {
    const StepFigures& f = s.figures;
    v.steps.push_back({f.per_host, f.vms, f.storms, f.p50_s, f.p95_s, f.ready_fraction,
                       slo_value_text(r.slo, f), f.meets, f.marginal, held_by(s.binding),
                       "steps/" + s.run_dir.filename().string()});
  }
  std::stable_sort(v.steps.begin(), v.steps.end(),
                   [](const auto& a, const auto& b) { return a.per_host < b.per_host; });
  return v;
}

nlohmann::ordered_json capacity_json(const CapacityContext& c, const CapacityResult& r) {
  nlohmann::ordered_json j;
  j["schemaVersion"] = 1;
  j["plan"] = c.plan;
  j["scenario"] = r.scenario;
  j["platform"] = c.platform;
  j["source"] = c.source;
  if (!c.lab.empty()) j["lab"] = c.lab;
  if (!c.overrides.empty()) j["overrides"] = c.overrides;
  j["startedAt"] = c.started_at;
  j["endedAt"] = c.ended_at;
  j["slo"] = results::slo_text(r.slo);
  j["hosts"] = r.hosts;
  j["search"] = {
      {"start", r.start}, {"maxPerHost", r.max_per_host}, {"resolution", r.resolution}, {"repeat", r.repeat}};
  if (!r.bound_note.empty()) j["search"]["bound"] = r.bound_note;
  j["capacityPerHost"] = r.capacity ? nlohmann::ordered_json(*r.capacity) : nlohmann::ordered_json();
  j["firstMissPerHost"] = r.first_miss ? nlohmann::ordered_json(*r.first_miss) : nlohmann::ordered_json();
  j["reachedMax"] = r.reached_max;
  j["firstStepMissed"] = r.first_step_missed;
  j["interrupted"] = r.interrupted;
  if (r.error) j["error"] = r.error->what();
  if (r.knee) j["kneePerHost"] = *r.knee;
  if (r.marginal_low) j["marginal"] = {*r.marginal_low, *r.marginal_high};
  if (r.binding_at) {
    j["binding"] = binding_json(r.binding);
    j["binding"]["atPerHost"] = *r.binding_at;
  }
  auto steps = nlohmann::ordered_json::array();
  for (const auto& s : r.steps) {
    const StepFigures& f = s.figures;
    nlohmann::ordered_json step;
    step["perHost"] = f.per_host;
    step["vms"] = f.vms;
    step["storms"] = f.storms;
    step["p50S"] = f.p50_s ? nlohmann::ordered_json(round_ms(*f.p50_s)) : nlohmann::ordered_json();
    step["p95S"] = f.p95_s ? nlohmann::ordered_json(round_ms(*f.p95_s)) : nlohmann::ordered_json();
    step["readyFraction"] = std::round(f.ready_fraction * 10000) / 10000;
    step["sloValue"] =
        f.value ? nlohmann::ordered_json(std::round(*f.value * 1e4) / 1e4) : nlohmann::ordered_json();
    if (f.value_low)
      step["sloInterval"] = {std::round(*f.value_low * 1e4) / 1e4, std::round(*f.value_high * 1e4) / 1e4};
    step["meets"] = f.meets;
    step["marginal"] = f.marginal;
    step["outcome"] = s.outcome;
    step["binding"] = binding_json(s.binding);
    step["runDir"] = s.run_dir.filename().string();
    steps.push_back(std::move(step));
  }
  j["steps"] = std::move(steps);
  return j;
}

std::string capacity_markdown(const CapacityContext& c, const CapacityResult& r) {
  std::string md = fmt::format("# Capacity: {} — {}\n\n", c.plan, r.scenario);
  md += fmt::format(
      "{}. SLO `{}`, {} storm(s) per step, desktops per host doubled from {} then bisected to {} "
      "desktop(s); hosts: {}.\n\n",
      label(c, /*markdown=*/true), results::slo_text(r.slo), r.repeat, r.start, r.resolution,
      fmt::join(r.hosts, ", "));
  md += "## Verdict\n\n";
  for (const auto& line : capacity_verdict(c, r)) md += "- " + line + "\n";
  if (r.knee) {
    md += fmt::format(
        "- Knee: up to {} per host the median boot stays within 10 % of the lightest step's; past "
        "it, density costs boot time.\n",
        *r.knee);
  }
  md += "\n## The curve\n\n";
  md +=
      "A desktop that never became ready counts as slower than every one that did: a percentile that falls "
      "among them is \"not reached\", and a step with such a desktop misses a time bound whatever its "
      "percentile. The SLO column is the mean over the step's storms, with its 95 % interval when there are "
      "two or more.\n\n";
  md += fmt::format("| per host | desktops | P50 | P95 | ready | {} | meets | held back by | run |\n",
                    results::slo_text(r.slo));
  md += "| ---: | ---: | ---: | ---: | ---: | ---: | :---: | --- | --- |\n";
  std::vector<const CapacityStep*> curve;
  for (const auto& s : r.steps) curve.push_back(&s);
  std::stable_sort(curve.begin(), curve.end(), [](const CapacityStep* a, const CapacityStep* b) {
    return a->figures.per_host < b->figures.per_host;
  });
  for (const auto* s : curve) {
    const StepFigures& f = s->figures;
    md +=
        fmt::format("| {} | {} | {} | {} | {:.1f} % | {} | {} | {} | {} |\n", f.per_host, f.vms,
                    seconds(f.p50_s), seconds(f.p95_s), f.ready_fraction * 100, slo_value_text(r.slo, f),
                    f.meets ? (f.marginal ? "yes (marginal)" : "yes") : (f.marginal ? "no (marginal)" : "no"),
                    held_by(s->binding), s->run_dir.filename().string());
  }
  md += "\nEvery step is a run directory under `steps/`, with its own report.\n";
  return md;
}

}  // namespace bootstorm::sizing
