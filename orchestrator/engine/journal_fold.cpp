#include "orchestrator/engine/journal_fold.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "orchestrator/engine/journal_events.hpp"
#include "results/api_answers.hpp"
#include "results/telemetry_json.hpp"

namespace bootstorm::engine {

using nlohmann::json;

namespace {

std::string str(const json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}
double num(const json& e, const char* key, double fallback = 0) {
  auto it = e.find(key);
  return it != e.end() && it->is_number() ? it->get<double>() : fallback;
}
int integer(const json& e, const char* key, int fallback = 0) {
  auto it = e.find(key);
  return it != e.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

}  // namespace

results::VmRecord* RunRecordBuilder::find_vm(const std::string& name) {
  auto it = vm_index_.find(name);
  return it == vm_index_.end() ? nullptr : &record_.vms[it->second];
}

results::ScenarioRecord* RunRecordBuilder::find_scenario(const std::string& name, int repeat) {
  for (auto& s : record_.scenarios)
    if (s.name == name && s.repeat == repeat) return &s;
  return nullptr;
}

void RunRecordBuilder::apply(const json& e) {
  if (!e.is_object()) return;
  const std::string type = str(e, "type");
  if (type == events::run_started) {
    on_run_started(e);
  } else if (type == events::platform_connected) {
    record_.platform_api = str(e, fields::api);
  } else if (type == events::platform_facts) {
    on_platform_facts(e);
  } else if (type == events::scenario_started) {
    on_scenario_started(e);
  } else if (type == events::vm_created || type == events::vm_provision_failed) {
    on_vm_created(e, type == events::vm_provision_failed);
  } else if (type == events::power_on_batch) {
    on_power_on_batch(e);
  } else if (type == events::vm_moved) {
    if (auto* s = scenario_of(e)) {
      results::HostMove m{str(e, fields::vm), str(e, fields::planned_host), str(e, fields::host)};
      if (std::find(s->moves.begin(), s->moves.end(), m) == s->moves.end()) s->moves.push_back(std::move(m));
    }
  } else if (type == events::storm_fired) {
    if (auto* s = scenario_of(e)) {
      s->fire_skew_ms = num(e, fields::fire_skew_ms);
      s->started_unix_s = num(e, fields::first_wall);
      if (e.contains(fields::start_at)) s->start_at_unix_s = num(e, fields::start_at);
      if (e.contains(fields::start_at_offset_ms)) s->start_at_offset_ms = num(e, fields::start_at_offset_ms);
    }
  } else if (type == events::milestone) {
    on_milestone(e);
  } else if (type == events::vm_failed) {
    if (auto* vm = find_vm(str(e, fields::vm)); vm && vm->status != "failed") {
      vm->status = "failed";
      vm->reason = str(e, fields::reason);
      vm->failure = str(e, fields::failure);
    }
  } else if (type == events::vm_startable) {
    if (auto* vm = find_vm(str(e, fields::vm))) vm->clone_method = str(e, fields::clone_method);
  } else if (type == events::vm_deleted) {
    deleted_[str(e, fields::vm)] = true;
  } else if (type == events::telemetry) {
    on_telemetry(e);
  } else if (type == events::scenario_ended) {
    on_scenario_ended(e);
  } else if (type == events::run_ended) {
    record_.outcome = str(e, fields::outcome);
    record_.ended_at = str(e, "t");
  }
}

results::ScenarioRecord* RunRecordBuilder::scenario_of(const json& e) {
  return find_scenario(str(e, fields::scenario), integer(e, fields::repeat, 1));
}

void RunRecordBuilder::on_run_started(const json& e) {
  record_.run_id = str(e, fields::run_id);
  record_.plan_name = str(e, fields::plan);
  record_.platform = str(e, fields::platform);
  record_.simulated = e.value(fields::simulated, false);
  record_.lab = str(e, fields::lab);
  record_.source = str(e, fields::run_source) == "predicted" ? "predicted" : "";
  record_.prediction.reset();
  if (auto it = e.find(fields::prediction); it != e.end() && it->is_object()) {
    results::PredictionRecord p;
    p.lab = str(*it, "lab");
    if (auto seed = it->find("seed"); seed != it->end() && seed->is_number_unsigned()) {
      p.seed = seed->get<std::uint64_t>();
    }
    if (auto o = it->find("overrides"); o != it->end() && o->is_array()) {
      for (const auto& text : *o) {
        if (text.is_string()) p.overrides.push_back(text.get<std::string>());
      }
    }
    record_.prediction = std::move(p);
  }
  record_.ready_signal = str(e, fields::ready_signal);
  record_.plan_yaml = str(e, fields::plan_yaml);
  record_.clone_kind = str(e, fields::clone_kind);
  record_.golden = str(e, fields::golden);
  record_.started_at = str(e, "t");
  record_.slo.clear();
  if (auto it = e.find(fields::slo); it != e.end() && it->is_array()) {
    for (auto& s : *it) {
      results::SloRecord slo;
      slo.milestone = str(s, fields::milestone);
      slo.stat = str(s, fields::slo_stat);
      slo.max = num(s, fields::slo_max);
      slo.is_min = s.value(fields::slo_is_min, false);
      record_.slo.push_back(slo);
    }
  }
}

void RunRecordBuilder::on_platform_facts(const json& e) {
  if (auto it = e.find(fields::facts); it != e.end()) record_.facts = api::facts_from_json(*it);
  if (auto it = e.find(fields::api_budget); it != e.end() && it->is_object()) {
    results::ApiBudgetRecord budget;
    budget.requests_per_second = num(*it, "requestsPerSecond");
    budget.max_concurrent = integer(*it, "maxConcurrent");
    budget.start_concurrency = integer(*it, "startConcurrency");
    budget.starts_per_connection = integer(*it, "startsPerConnection");
    record_.api_budget = budget;
  }
  // A platform that says it is a simulator makes the run simulated, whatever the endpoint's form.
  if (!record_.facts.simulator.empty()) {
    record_.simulated = true;
    if (record_.lab.empty()) record_.lab = api::lab_profile_of(record_.facts.simulator);
  }
}

void RunRecordBuilder::on_scenario_started(const json& e) {
  results::ScenarioRecord s;
  s.name = str(e, fields::scenario);
  s.repeat = integer(e, fields::repeat, 1);
  s.vms = integer(e, fields::vms);
  s.hosts = integer(e, fields::hosts);
  if (e.contains("mono")) s.provision_begin_mono = num(e, "mono");
  if (!find_scenario(s.name, s.repeat)) record_.scenarios.push_back(std::move(s));
}

void RunRecordBuilder::on_vm_created(const json& e, bool failed) {
  const std::string name = str(e, fields::vm);
  if (name.empty() || find_vm(name)) return;
  results::VmRecord vm;
  vm.scenario = str(e, fields::scenario);
  vm.repeat = integer(e, fields::repeat, 1);
  vm.name = name;
  vm.id = str(e, fields::id);
  vm.host = str(e, fields::host);
  vm.clone_s = num(e, fields::clone_s, -1);
  if (auto* s = find_scenario(vm.scenario, vm.repeat); s && e.contains("mono"))
    s->provision_end_mono = std::max(s->provision_end_mono.value_or(0.0), num(e, "mono"));
  if (failed) {
    vm.status = "failed";
    vm.reason = str(e, fields::reason);
    vm.failure = str(e, fields::failure);
    if (auto* s = find_scenario(vm.scenario, vm.repeat))
      s->errors.push_back(fmt::format("{}: {}", name, vm.reason));
  } else {
    created_.push_back(api::VmHandle{name, vm.id, vm.host, vm.scenario});
  }
  vm_index_[name] = record_.vms.size();
  record_.vms.push_back(std::move(vm));
}

void RunRecordBuilder::on_power_on_batch(const json& e) {
  auto* s = scenario_of(e);
  if (!s) return;
  ++s->power_on_calls;
  if (auto it = e.find(fields::not_attempted); it != e.end() && it->is_array()) {
    for (const auto& n : *it) {
      // By name where the run knows the VM's id.
      const std::string id = str(n, fields::id);
      auto known = std::find_if(record_.vms.begin(), record_.vms.end(),
                                [&](const results::VmRecord& r) { return !id.empty() && r.id == id; });
      s->not_attempted.push_back(
          results::NotAttempted{known == record_.vms.end() ? id : known->name, str(n, fields::reason)});
    }
  }
}

void RunRecordBuilder::on_milestone(const json& e) {
  auto* vm = find_vm(str(e, fields::vm));
  auto m = api::milestone_from_string(str(e, fields::milestone));
  if (!vm || !m || vm->milestones.count(*m)) return;  // first observation wins
  results::MilestoneRecord r;
  r.offset_s = num(e, fields::offset_s);
  r.resolution_s = num(e, fields::resolution_s);
  r.source = str(e, fields::source);
  r.wall_unix_s = num(e, fields::wall);
  r.detail = str(e, fields::detail);
  if (*m == api::Milestone::start_requested) vm->start_requested_unix_s = r.wall_unix_s;
  vm->milestones.emplace(*m, std::move(r));
}

void RunRecordBuilder::on_telemetry(const json& e) {
  auto* s = scenario_of(e);
  if (!s) return;
  // A merged journal has one event per shard: their VMs add up (results::merge_telemetry).
  if (auto it = e.find(fields::report); it != e.end()) {
    if (auto report = results::telemetry_from_json(*it)) {
      if (s->telemetry) {
        results::merge_telemetry(*s->telemetry, std::move(*report));
      } else {
        s->telemetry = std::move(report);
      }
    }
  }
  if (const std::string why = str(e, fields::unavailable); !why.empty()) {
    s->telemetry_unavailable = s->telemetry_unavailable.empty() ? why : s->telemetry_unavailable + "; " + why;
  }
}

void RunRecordBuilder::on_scenario_ended(const json& e) {
  auto* s = scenario_of(e);
  if (!s) return;
  s->api_requests = static_cast<std::uint64_t>(num(e, fields::api_requests));
  if (e.contains(fields::storm_api_requests))
    s->storm_api_requests = static_cast<std::uint64_t>(num(e, fields::storm_api_requests));
  if (auto it = e.find(fields::api_answers); it != e.end())
    s->api_answers = results::api_answers_from_json(*it);
  if (auto it = e.find(fields::errors); it != e.end() && it->is_array()) {
    s->errors.clear();
    for (auto& err : *it)
      if (err.is_string()) s->errors.push_back(err.get<std::string>());
  }
}

results::RunRecord RunRecordBuilder::record() const {
  results::RunRecord out = record_;
  auto ready_m = api::milestone_from_string(out.ready_signal);
  for (auto& vm : out.vms) {
    if (ready_m) {
      auto it = vm.milestones.find(*ready_m);
      if (it != vm.milestones.end() && vm.status != "failed") {
        vm.status = "ready";
        vm.ready_s = it->second.offset_s;
        continue;
      }
    }
    if (vm.status == "failed") continue;
    vm.status = vm.milestones.count(api::Milestone::start_requested) ? "pending" : "not_started";
  }
  return out;
}

std::vector<api::VmHandle> RunRecordBuilder::undeleted() const {
  std::vector<api::VmHandle> out;
  for (auto& vm : created_)
    if (!deleted_.count(vm.name)) out.push_back(vm);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Reader

Expected<JournalContents> parse_journal(std::istream& in, const std::string& name) {
  JournalContents contents;
  RunRecordBuilder builder;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const bool complete = !in.eof();  // getline hit '\n' (eof set only when the last line lacks it)
    if (line.empty()) continue;
    json event = json::parse(line, nullptr, false);
    if (event.is_discarded() || !event.is_object()) {
      if (!complete) {
        contents.truncated_tail = true;  // crash while writing the last line: expected, ignored
      } else {
        contents.warnings.push_back(fmt::format("{}:{}: not a JSON object, line skipped", name, line_no));
      }
      continue;
    }
    const std::string type = str(event, "type");
    if (type == events::run_started && !contents.has_run_started) {
      contents.has_run_started = true;
      contents.run_started = event;
      if (auto shard = event.find(fields::shard); shard != event.end() && shard->is_object()) {
        contents.shard.index = shard->value(fields::shard_index, 0);
        contents.shard.count = std::max(1, shard->value(fields::shard_count, 1));
      }
    }
    if (type == events::run_ended) contents.has_run_ended = true;
    builder.apply(event);
  }
  if (!contents.has_run_started) {
    return make_error(ErrorKind::invalid_input, fmt::format("{} has no run_started event", name),
                      "is this the journal.jsonl of a bootstorm run directory?");
  }
  contents.record = builder.record();
  contents.undeleted = builder.undeleted();
  return contents;
}

Expected<JournalContents> read_journal(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return make_error(ErrorKind::not_found, fmt::format("cannot read {}", file.string()),
                      "pass a run directory created by `bootstorm run` (it contains journal.jsonl)");
  }
  return parse_journal(in, file.string());
}

}  // namespace bootstorm::engine
