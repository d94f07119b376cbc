// `bootstorm predict` (see the header).
#include "orchestrator/sizing/predict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "common/rfc3339.hpp"
#include "orchestrator/engine/journal.hpp"
#include "orchestrator/engine/journal_events.hpp"
#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/run_directory.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "orchestrator/engine/shard.hpp"
#include "orchestrator/sizing/predicted_telemetry.hpp"
#include "orchestrator/sizing/virtual_storm.hpp"
#include "providers/api/platform_descriptor.hpp"
#include "results/telemetry_json.hpp"

namespace bootstorm::sizing {

namespace model = sim::model;
namespace events = engine::events;
namespace fields = engine::fields;
using nlohmann::json;

namespace {

// The events of one run, stamped with their virtual time.
class EventList {
 public:
  void add(double at, std::string type, json payload) {
    payload["t"] = at;
    events_.emplace_back(std::move(type), std::move(payload));
  }
  std::vector<std::pair<std::string, json>> take() { return std::move(events_); }

 private:
  std::vector<std::pair<std::string, json>> events_;
};

json scenario_key(const std::string& scenario, int repeat) {
  return {{fields::scenario, scenario}, {fields::repeat, repeat}};
}

}  // namespace

namespace {

// ---- one prediction, step by step ----

Expected<VirtualStormOptions> storm_options_of(const plan::StormPlan& plan) {
  VirtualStormOptions storm_options;
  // The lab model plays the kind through the front its descriptor names.
  const auto descriptor = api::find_platform_descriptor(plan.platform.kind);
  if (!descriptor) {
    return make_error(
        ErrorKind::invalid_input,
        fmt::format("predict models registered platform kinds, and '{}' is none.", plan.platform.kind));
  }
  storm_options.front = descriptor->lab_front;
  if (storm_options.front == api::LabFront::vcenter) {
    auto kind = vcenter_clone_kind(plan.platform.settings.clone_kind());
    if (!kind) return kind.error();
    storm_options.clone_kind = *kind;
    storm_options.golden_vm = plan.platform.settings.golden_image();
  }
  storm_options.ramp_mode = plan.storm.mode;
  storm_options.ramp_per_second = plan.storm.ramp_per_second;
  storm_options.timeout_s = std::chrono::duration<double>(plan.storm.timeout).count();
  storm_options.settle_s = std::chrono::duration<double>(plan.storm.settle).count();
  storm_options.max_concurrent = plan.platform.api_budget.max_concurrent;

  return storm_options;
}

// run_started, platform_connected and platform_facts of a predicted run.
void add_run_header(EventList& out, const PredictedRun& run, const plan::StormPlan& plan,
                    const PredictOptions& options, const model::LabSpec& spec, const std::string& lab_name,
                    std::uint64_t seed, api::Milestone ready) {
  json overrides = json::array();
  for (const auto& o : options.overrides) overrides.push_back(o.text());
  json started = {{fields::run_id, run.run_id},
                  {fields::plan, plan.name},
                  {fields::platform, plan.platform.kind},
                  {"endpoint", plan.platform.endpoint},
                  {fields::simulated, true},
                  {fields::run_source, "predicted"},
                  {fields::lab, spec.name},
                  {fields::ready_signal, std::string(api::to_string(ready))},
                  {"cleanup", plan.cleanup},
                  {"dryRun", false},
                  {fields::plan_yaml, options.plan_yaml},
                  {fields::clone_kind, plan.platform.settings.clone_kind()},
                  {fields::golden, plan.platform.settings.golden_image()},
                  {"planDigest", engine::plan_digest(options.plan_yaml)},
                  {fields::slo, engine::slo_json(plan)},
                  {fields::prediction, {{"lab", lab_name}, {"seed", seed}, {"overrides", overrides}}}};
  if (options.repeat > 0) started[fields::repeat] = options.repeat;
  if (!options.only_scenario.empty()) started["onlyScenario"] = options.only_scenario;
  out.add(run.virtual_start, events::run_started, std::move(started));
  out.add(run.virtual_start, events::platform_connected,
          {{fields::api, "none: the lab model in virtual time (bootstorm predict)"}});
  api::PlatformFacts facts;
  facts.product = "bootstorm lab model";
  facts.version = spec.name;
  facts.simulator = "bootstorm predict (virtual time)";
  out.add(run.virtual_start, events::platform_facts,
          {{fields::facts, api::facts_to_json(facts)},
           {fields::api_budget,
            {{"requestsPerSecond", plan.platform.api_budget.requests_per_second},
             {"maxConcurrent", plan.platform.api_budget.max_concurrent},
             {"startConcurrency", plan.storm.start_concurrency}}}});
}

// The clones as the model made them, in the order they finished.
void add_provisioning(EventList& out, const VirtualStorm& storm, const std::function<json(json)>& with_key) {
  std::vector<const VirtualVm*> made;
  for (const auto& vm : storm.vms) made.push_back(&vm);
  std::stable_sort(made.begin(), made.end(), [&](const VirtualVm* a, const VirtualVm* b) {
    return storm.provision_begin + std::max(0.0, a->clone_s) <
           storm.provision_begin + std::max(0.0, b->clone_s);
  });
  for (const auto* vm : made) {
    const double at = storm.provision_begin + std::max(0.0, vm->clone_s);
    if (vm->id.empty()) {
      out.add(at, events::vm_provision_failed,
              with_key({{fields::vm, vm->name},
                        {fields::host, vm->host},
                        {fields::reason, vm->failure},
                        {fields::failure, "clone"}}));
      continue;
    }
    out.add(at, events::vm_created,
            with_key({{fields::vm, vm->name},
                      {fields::id, vm->id},
                      {fields::host, vm->host},
                      {fields::clone_s, std::round(vm->clone_s * 1e6) / 1e6}}));
    out.add(at, events::vm_startable,
            with_key({{fields::vm, vm->name}, {fields::clone_method, vm->clone_method}}));
  }
}

// The storm's fire and every milestone the model reached, in time order; the VMs that never got ready.
void add_storm(EventList& out, const PredictedRun& run, const VirtualStorm& storm,
               const VirtualStormOptions& storm_options, api::Milestone ready,
               const std::function<json(json)>& with_key) {
  double first = storm.fired_at, last = storm.fired_at;
  int starts = 0;
  for (const auto& vm : storm.vms) {
    if (!vm.start) continue;
    last = std::max(last, *vm.start);
    ++starts;
  }
  out.add(storm.fired_at, events::storm_fired,
          with_key({{"firstMono", first - run.virtual_start},
                    {"lastMono", last - run.virtual_start},
                    {fields::fire_skew_ms, (last - first) * 1e3},
                    {fields::first_wall, first},
                    {"starts", starts}}));
  struct Seen {
    double at;
    const VirtualVm* vm;
    api::Milestone milestone;
  };
  std::vector<Seen> seen;
  for (const auto& vm : storm.vms) {
    for (const auto& [m, at] : vm.milestones) seen.push_back({at, &vm, m});
  }
  std::stable_sort(seen.begin(), seen.end(), [](const Seen& a, const Seen& b) { return a.at < b.at; });
  for (const auto& s : seen) {
    out.add(s.at, events::milestone,
            with_key({{fields::vm, s.vm->name},
                      {fields::milestone, std::string(api::to_string(s.milestone))},
                      {fields::offset_s, std::round((s.at - *s.vm->start) * 1e6) / 1e6},
                      {fields::resolution_s, 0},
                      {fields::source, "model"},
                      {fields::wall, s.at},
                      {fields::detail, ""}}));
  }
  for (const auto& vm : storm.vms) {
    if (vm.id.empty() || vm.milestones.count(ready)) continue;
    const std::string reason = !vm.failure.empty()
                                   ? vm.failure
                                   : fmt::format("not {} within storm.timeout ({:g} s) in the model",
                                                 api::to_string(ready), storm_options.timeout_s);
    out.add(storm.ended_at, events::vm_failed,
            {{fields::vm, vm.name},
             {fields::reason, reason},
             {fields::failure, vm.failure.empty() ? "timeout" : "start_failed"}});
  }
}

// One scenario of one repeat in the model: its events, its limits, and the storage the model moved.
Expected<void> predict_scenario(EventList& out, PredictedRun& run, model::Lab& lab,
                                const plan::Scenario& scenario, int repeat,
                                const VirtualStormOptions& storm_options, api::Milestone ready) {
  const std::string slug = engine::scenario_slug(scenario.name);
  const int total = scenario.total_vms();
  std::vector<VirtualVmSpec> vms;
  for (const auto& p : scenario.placement) {
    for (int k = 0; k < p.vms; ++k) {
      const int index = (repeat - 1) * total + static_cast<int>(vms.size()) + 1;
      vms.push_back(
          {engine::vm_name(run.run_id, slug, index), p.host, engine::vm_name("model", slug, index)});
    }
  }
  lab.reset_boot_limits();
  auto storm = run_virtual_storm(lab, vms, storm_options);
  if (!storm) {
    Error error = storm.error();
    error.message = fmt::format("Scenario '{}': {}", scenario.name, error.message);
    return error;
  }
  const json key = scenario_key(scenario.name, repeat);
  auto with_key = [&](json payload) {
    payload.update(key);
    return payload;
  };
  out.add(storm->provision_begin, events::scenario_started,
          with_key({{fields::vms, total}, {fields::hosts, scenario.placement.size()}}));
  add_provisioning(out, *storm, with_key);
  add_storm(out, run, *storm, storm_options, ready, with_key);
  // The storage the model moved, over the window a run reads: from just before the first start to one
  // grid step after the last ready.
  double last_ready = storm->fired_at;
  std::vector<std::string> ids, names;
  for (const auto& vm : storm->vms) {
    if (vm.id.empty()) continue;
    ids.push_back(vm.id);
    names.push_back(vm.name);
    if (auto it = vm.milestones.find(ready); it != vm.milestones.end())
      last_ready = std::max(last_ready, it->second);
  }
  run.limits.push_back({scenario.name, repeat, lab.boot_limits()});
  const double window_end = last_ready + lab.storage_telemetry().step;
  if (lab.now() < window_end) lab.run_until(window_end);
  const api::TelemetryReport storage = predicted_telemetry(lab, ids, names, storm->fired_at - 1, window_end);
  const double scenario_end = std::max(storm->ended_at, window_end);
  out.add(scenario_end, events::telemetry, with_key({{fields::report, results::telemetry_json(storage)}}));
  out.add(scenario_end, events::scenario_ended,
          with_key({{fields::api_requests, 0},
                    {fields::storm_api_requests, 0},
                    {"apiErrors", 0},
                    {fields::errors, json::array()}}));
  delete_vms(lab, *storm);
  for (const auto& vm : storm->vms) {
    if (!vm.id.empty()) out.add(lab.now(), events::vm_deleted, {{fields::vm, vm.name}, {fields::id, vm.id}});
  }
  return {};
}

}  // namespace

Expected<PredictedRun> simulate_plan(const plan::StormPlan& plan, const PredictOptions& options) {
  const std::string lab_name = options.lab.empty() ? plan.platform.lab : options.lab;
  if (lab_name.empty()) {
    return make_error(ErrorKind::invalid_input,
                      fmt::format("Plan '{}' names no lab profile to predict with.", plan.name),
                      "Pass --lab PROFILE (e.g. --lab tolly-2024), or set platform.lab in the plan.");
  }
  auto spec = options.spec ? Expected<model::LabSpec>(*options.spec)
                           : model::load_lab_spec_with(lab_name, options.overrides);
  if (!spec) return spec.error();
  auto ready = engine::ready_milestone(plan);
  if (!ready) {
    return make_error(ErrorKind::invalid_input,
                      fmt::format("ready.signal '{}' is not a milestone.", plan.ready.signal));
  }
  auto storm_options = storm_options_of(plan);
  if (!storm_options) return storm_options.error();
  std::vector<const plan::Scenario*> scenarios;
  for (const auto& s : plan.scenarios) {
    if (options.only_scenario.empty() || s.name == options.only_scenario) scenarios.push_back(&s);
  }
  if (scenarios.empty()) {
    return make_error(ErrorKind::invalid_input,
                      fmt::format("Plan '{}' has no scenario named '{}'.", plan.name, options.only_scenario),
                      "Name one of the plan's scenarios with --scenario.");
  }
  const int repeats = options.repeat > 0 ? options.repeat : std::max(1, plan.repeat);
  const std::uint64_t seed = options.seed.value_or(spec->seed);

  PredictedRun run;
  run.lab = spec->name;
  run.seed = seed;
  std::string identity =
      engine::plan_digest(options.plan_yaml) + "\n" + lab_name + "\n" + std::to_string(seed);
  for (const auto& o : options.overrides) identity += "\n" + o.text();
  for (const auto* s : scenarios) identity += "\n" + s->name;
  identity += "\n" + std::to_string(repeats);
  // The same for the same plan, profile, overrides and seed: the project's digest, as derive_run_id does.
  run.run_id = engine::plan_digest(identity).substr(0, 6);

  // Virtual time starts on a whole hour, so that the lab's sampling grids fall alike in every prediction.
  const double wall_now = unix_seconds(std::chrono::system_clock::now());
  run.virtual_start = std::floor(wall_now / 3600) * 3600;
  EventList out;
  add_run_header(out, run, plan, options, *spec, lab_name, seed, *ready);
  double clock = run.virtual_start;
  for (int repeat = 1; repeat <= repeats; ++repeat) {
    model::LabOptions lab_options;
    lab_options.mode = model::LabOptions::TimeMode::virtual_time;
    lab_options.virtual_start = clock;
    lab_options.seed = seed + static_cast<std::uint64_t>(repeat - 1);
    model::Lab lab(*spec, lab_options);
    for (const auto* scenario : scenarios) {
      auto predicted = predict_scenario(out, run, lab, *scenario, repeat, *storm_options, *ready);
      if (!predicted) return predicted.error();
      clock = lab.now();
    }
    clock = lab.now();
  }
  out.add(clock, events::run_ended, {{fields::outcome, "completed"}});
  run.virtual_end = clock;
  run.events = out.take();
  return run;
}

results::RunRecord record_of(const PredictedRun& run) {
  engine::RunRecordBuilder builder;
  for (const auto& [type, event] : run.events) {
    json payload = event;
    const double at = payload["t"].get<double>();
    const auto wall = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(at)));
    payload["t"] = format_rfc3339(wall);
    payload["mono"] = at - run.virtual_start;
    payload["type"] = type;
    builder.apply(payload);
  }
  return builder.record();
}

Expected<PredictResult> predict(const plan::StormPlan& plan, const PredictOptions& options) {
  auto run = simulate_plan(plan, options);
  if (!run) return run.error();
  const std::filesystem::path out =
      options.output_dir.empty() ? std::filesystem::path(plan.output) : options.output_dir;
  const std::string name =
      engine::run_directory_name(plan.name, std::chrono::system_clock::now(), run->run_id) + "-predicted";
  auto dir = engine::make_run_directory(out, name, options.plan_yaml);
  if (!dir) return dir.error();
  const auto origin = std::chrono::steady_clock::now();
  auto journal = engine::Journal::open(*dir / "journal.jsonl", origin);
  if (!journal) return journal.error();
  engine::RunRecordBuilder builder;
  for (auto& [type, payload] : run->events) {
    const double at = payload["t"].get<double>();
    payload.erase("t");
    const auto wall = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(at)));
    builder.apply((*journal)->write_at(type, std::move(payload), wall, at - run->virtual_start));
  }
  (*journal)->sync();
  if (auto failed = (*journal)->write_error(); !failed.empty()) {
    return make_error(ErrorKind::io,
                      fmt::format("Writing {}: {}", ((*dir) / "journal.jsonl").string(), failed));
  }
  PredictResult result;
  result.run_id = run->run_id;
  result.run_dir = *dir;
  result.record = builder.record();
  result.lab = run->lab;
  result.seed = run->seed;
  result.virtual_s = run->virtual_end - run->virtual_start;
  result.limits = std::move(run->limits);
  return result;
}

}  // namespace bootstorm::sizing
