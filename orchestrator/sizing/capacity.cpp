// `bootstorm capacity` (see the header).
#include "orchestrator/sizing/capacity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace bootstorm::sizing {

namespace {

const plan::Scenario* find_scenario(const plan::StormPlan& plan, const std::string& name) {
  if (name.empty()) return plan.scenarios.size() == 1 ? &plan.scenarios.front() : nullptr;
  for (const auto& s : plan.scenarios) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Error no_scenario(const plan::StormPlan& plan, const std::string& name) {
  std::string names;
  for (const auto& s : plan.scenarios) names += (names.empty() ? "'" : ", '") + s.name + "'";
  if (name.empty()) {
    return make_error(ErrorKind::invalid_input,
                      fmt::format("Plan '{}' has {} scenarios: say which layout to size.", plan.name,
                                  plan.scenarios.size()),
                      fmt::format("Pass --scenario NAME, one of {}.", names));
  }
  return make_error(ErrorKind::invalid_input,
                    fmt::format("Plan '{}' has no scenario named '{}'.", plan.name, name),
                    fmt::format("Pass --scenario with one of {}.", names));
}

}  // namespace

const CapacityStep* CapacityResult::step_at(int per_host) const {
  const CapacityStep* found = nullptr;
  for (const auto& s : steps) {
    if (s.figures.per_host == per_host) found = &s;
  }
  return found;
}

Expected<plan::StormPlan> step_plan(const plan::StormPlan& plan, const std::string& scenario, int per_host,
                                    const results::SloRecord& slo, int repeat) {
  const plan::Scenario* s = find_scenario(plan, scenario);
  if (!s) return no_scenario(plan, scenario);
  plan::StormPlan out = plan;
  plan::Scenario scaled = *s;
  for (auto& p : scaled.placement) p.vms = per_host;
  out.scenarios = {scaled};
  out.repeat = std::max(1, repeat);
  out.slo = {plan::Slo{slo.milestone, slo.stat, slo.max, slo.is_min}};
  out.cleanup = "always";
  return out;
}

Expected<CapacityResult> plan_search(const plan::StormPlan& plan, const CapacityOptions& options) {
  const plan::Scenario* s = find_scenario(plan, options.scenario);
  if (!s) return no_scenario(plan, options.scenario);
  if (s->placement.empty()) {
    return make_error(ErrorKind::invalid_input, fmt::format("Scenario '{}' places no desktops.", s->name),
                      "Give it a placement: a list of {host, vms}.");
  }
  CapacityResult r;
  r.scenario = s->name;
  r.slo = options.slo;
  r.resolution = std::max(1, options.resolution);
  r.repeat = options.repeat > 0 ? options.repeat : std::max(1, plan.repeat);
  int largest = 0;
  for (const auto& p : s->placement) {
    r.hosts.push_back(p.host);
    largest = std::max(largest, p.vms);
  }
  const int hosts = static_cast<int>(r.hosts.size());
  r.start = options.start > 0 ? options.start : std::max(1, largest);
  r.max_per_host = options.max_per_host > 0 ? options.max_per_host : std::numeric_limits<int>::max() / 4;
  if (options.max_per_host > 0) r.bound_note = fmt::format("--max-per-host {}", options.max_per_host);
  if (options.max_vms > 0 && options.max_vms / hosts < r.max_per_host) {
    r.max_per_host = options.max_vms / hosts;
    r.bound_note = fmt::format("--max-vms {} over {} host(s)", options.max_vms, hosts);
  }
  if (r.start > r.max_per_host) {
    return make_error(
        ErrorKind::invalid_input,
        fmt::format("The first step ({} desktops on each of {} host(s), {} in all) is beyond the search's "
                    "bound ({}: at most {} per host).",
                    r.start, hosts, r.start * hosts, r.bound_note, r.max_per_host),
        "Start lower with --start N, or raise --max-vms / --max-per-host.");
  }
  return r;
}

CapacityResult search_capacity(CapacityResult r, const plan::StormPlan& plan, const StepRunner& run_step,
                               const std::function<bool()>& stop_requested,
                               const std::function<void(const CapacityStep&)>& on_step) {
  CapacitySearch search(r.start, r.max_per_host, r.resolution);
  while (auto n = search.next()) {
    if (stop_requested && stop_requested()) {
      r.interrupted = true;
      break;
    }
    auto p = step_plan(plan, r.scenario, *n, r.slo, r.repeat);
    if (!p) {
      r.error = p.error();
      break;
    }
    StepRun run = run_step(*p, *n);
    CapacityStep step;
    step.figures = judge_step(*n, run.storms, r.slo);
    step.binding = std::move(run.binding);
    step.run_dir = std::move(run.run_dir);
    step.outcome = run.outcome;
    if (on_step) on_step(step);
    if (run.outcome == "interrupted") {
      r.interrupted = true;
      if (!run.storms.empty()) r.steps.push_back(std::move(step));
      break;
    }
    if (run.error) {
      // The step could not run as planned (the platform went away, the journal could not be written, VMs
      // were left behind): what it measured is not a density's answer, and the next step would not start
      // clean. Shown, not judged.
      r.error = run.error;
      if (!run.storms.empty()) r.steps.push_back(std::move(step));
      break;
    }
    search.record(*n, step.figures.meets);
    r.steps.push_back(std::move(step));
  }
  r.capacity = search.capacity();
  r.first_miss = search.first_miss();
  r.reached_max = search.reached_max();
  r.first_step_missed = !r.steps.empty() && !r.capacity && r.first_miss;

  // What bound it: where the SLO broke nearest the capacity, else the heaviest step measured.
  std::optional<int> at = r.first_miss;
  if (!at && !r.steps.empty()) {
    at = std::max_element(r.steps.begin(), r.steps.end(), [](const CapacityStep& a, const CapacityStep& b) {
           return a.figures.per_host < b.figures.per_host;
         })->figures.per_host;
  }
  if (at) {
    if (const CapacityStep* s = r.step_at(*at)) {
      r.binding = s->binding;
      r.binding_at = *at;
    }
  }

  std::vector<const CapacityStep*> curve;
  for (const auto& s : r.steps) curve.push_back(&s);
  std::sort(curve.begin(), curve.end(), [](const CapacityStep* a, const CapacityStep* b) {
    return a->figures.per_host < b->figures.per_host;
  });
  if (!curve.empty() && curve.front()->figures.p50_s) {
    const double base = *curve.front()->figures.p50_s;
    for (const auto* s : curve) {
      if (s->figures.p50_s && *s->figures.p50_s <= base * 1.10)
        r.knee = s->figures.per_host;
      else
        break;
    }
  }
  for (const auto* s : curve) {
    if (!s->figures.marginal) continue;
    if (!r.marginal_low) r.marginal_low = s->figures.per_host;
    r.marginal_high = s->figures.per_host;
  }
  return r;
}

}  // namespace bootstorm::sizing
