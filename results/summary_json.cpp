// summary.json, schema version 1: writing a Summary and reading one back (summary_json.hpp).
#include "results/summary_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "results/api_answers.hpp"

namespace bootstorm::results {
namespace {

constexpr std::string_view kReady = "ready";

// Seconds are written with microsecond precision: more digits would only be noise from the clocks and
// would make renders of the same run differ in the last bits across compilers.
double round_us(double v) {
  return std::round(v * 1e6) / 1e6;
}

nlohmann::ordered_json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(round_us(*v)) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json distribution_to_json(const Distribution& d) {
  nlohmann::ordered_json j;
  j["count"] = d.count;
  j["readyFraction"] = round_us(d.ready_fraction);
  j["meanS"] = optional_number(d.mean);
  j["stdevS"] = optional_number(d.stdev);
  j["minS"] = optional_number(d.min);
  j["p50S"] = optional_number(d.p50);
  j["p90S"] = optional_number(d.p90);
  j["p95S"] = optional_number(d.p95);
  j["p99S"] = optional_number(d.p99);
  j["maxS"] = optional_number(d.max);
  j["resolutionS"] = round_us(d.resolution_s);
  return j;
}

// Reading helpers: tolerate absent optional fields, reject wrong types with a path in the message.
struct Reader {
  std::string where;
  std::optional<Error> error;

  void fail(const std::string& path, const std::string& what) {
    if (!error)
      error = make_error(ErrorKind::invalid_input, fmt::format("{}: {} {}", where, path, what),
                         "pass a run directory written by bootstorm (summary.json schema version 1)");
  }
  std::optional<double> number(const nlohmann::json& obj, const char* key, const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) {
      fail(path + "." + key, "is not a number");
      return std::nullopt;
    }
    return it->get<double>();
  }
  std::string string(const nlohmann::json& obj, const char* key, const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return {};
    if (!it->is_string()) {
      fail(path + "." + key, "is not a string");
      return {};
    }
    return it->get<std::string>();
  }
};

Distribution distribution_from_json(Reader& r, const nlohmann::json& j, const std::string& path, int vms) {
  Distribution d;
  if (!j.is_object()) {
    r.fail(path, "is not an object");
    return d;
  }
  d.count = static_cast<std::size_t>(r.number(j, "count", path).value_or(0));
  d.ready_fraction = r.number(j, "readyFraction", path).value_or(0);
  d.total = std::max<std::size_t>(d.count, static_cast<std::size_t>(std::max(vms, 0)));
  d.mean = r.number(j, "meanS", path);
  d.stdev = r.number(j, "stdevS", path);
  d.min = r.number(j, "minS", path);
  d.p50 = r.number(j, "p50S", path);
  d.p90 = r.number(j, "p90S", path);
  d.p95 = r.number(j, "p95S", path);
  d.p99 = r.number(j, "p99S", path);
  d.max = r.number(j, "maxS", path);
  d.resolution_s = r.number(j, "resolutionS", path).value_or(0);
  return d;
}

// ---- writing ----

nlohmann::ordered_json scenario_to_json(const ScenarioSummary& s) {
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["repeat"] = s.repeat;
  j["vms"] = s.vms;
  j["hosts"] = s.hosts;
  j["fireSkewMs"] = round_us(s.fire_skew_ms);
  j["apiRequests"] = s.api_requests;
  if (s.storm_api_requests) j["stormApiRequests"] = *s.storm_api_requests;
  if (s.api_answers) j["apiAnswers"] = api_answers_json(*s.api_answers);
  if (s.storage) {
    j["telemetry"] = storage_figures_json(*s.storage);
  } else if (!s.storage_unavailable.empty()) {
    j["telemetry"] = {{"unavailable", s.storage_unavailable}};
  }
  if (!s.clone_methods.empty()) j["cloneMethods"] = s.clone_methods;
  if (s.start_at_unix_s) j["startAtUnixS"] = std::round(*s.start_at_unix_s * 1e3) / 1e3;
  if (s.start_at_offset_ms) j["startAtOffsetMs"] = round_us(*s.start_at_offset_ms);
  j["timeToAllReadyS"] = optional_number(s.time_to_all_ready_s);
  j["cloneMeanS"] = optional_number(s.clone_mean_s);
  if (s.provisioning_s) j["provisioningS"] = round_us(*s.provisioning_s);
  if (s.power_on_spread_ms) j["powerOnSpreadMs"] = round_us(*s.power_on_spread_ms);
  if (s.power_on_calls > 0) {
    j["powerOnCalls"] = s.power_on_calls;
    auto skipped = nlohmann::ordered_json::array();
    for (const auto& n : s.not_attempted) skipped.push_back({{"vm", n.vm}, {"reason", n.reason}});
    j["notAttempted"] = std::move(skipped);
  }
  if (!s.moves.empty()) {
    auto moves = nlohmann::ordered_json::array();
    for (const auto& m : s.moves)
      moves.push_back({{"vm", m.vm}, {"plannedHost", m.planned_host}, {"host", m.host}});
    j["hostMoves"] = std::move(moves);
  }
  j["readyMilestone"] = s.ready_milestone;
  auto& milestones = j["milestones"];
  milestones = nlohmann::ordered_json::object();
  for (const auto& m : s.milestones) milestones[m.name] = distribution_to_json(m.dist);
  if (!s.phases.empty()) {
    auto& phases = j["phases"];
    phases = nlohmann::ordered_json::object();
    for (const auto& p : s.phases) {
      auto d = distribution_to_json(p.dist);
      d["meanPartS"] = round_us(p.mean_part_s);
      phases[std::string(phase_info(p.phase).key)] = std::move(d);
    }
  }
  if (s.control_plane) {
    const auto& c = *s.control_plane;
    j["controlPlane"] = {{"medianS", round_us(c.median_s)},
                         {"medianBootS", round_us(c.median_boot_s)},
                         {"largestOtherPhase", std::string(phase_info(c.largest_other).key)},
                         {"largestOtherMedianS", round_us(c.largest_other_median_s)},
                         {"delayed", c.delayed}};
  }
  auto failures = nlohmann::ordered_json::array();
  for (const auto& f : s.failures) failures.push_back({{"vm", f.vm}, {"reason", f.reason}});
  j["failures"] = std::move(failures);
  j["errors"] = s.errors;
  return j;
}

// ---- reading: the run, a scenario, the SLOs ----

void run_from_json(Reader& r, const nlohmann::json& doc, RunInfo& run_info) {
  if (auto run = doc.find("run"); run != doc.end() && run->is_object()) {
    run_info.id = r.string(*run, "id", "run");
    run_info.plan = r.string(*run, "plan", "run");
    run_info.platform = r.string(*run, "platform", "run");
    run_info.lab = r.string(*run, "lab", "run");
    run_info.simulated = run->value("simulated", false);
    run_info.started_at = r.string(*run, "startedAt", "run");
    run_info.ended_at = r.string(*run, "endedAt", "run");
    run_info.outcome = r.string(*run, "outcome", "run");
    if (run->contains("api") && (*run)["api"].is_string()) run_info.api = (*run)["api"].get<std::string>();
    if (run->contains("cloneKind") && (*run)["cloneKind"].is_string())
      run_info.clone_kind = (*run)["cloneKind"].get<std::string>();
    if (run->contains("golden") && (*run)["golden"].is_string())
      run_info.golden = (*run)["golden"].get<std::string>();
    if (run->contains("source") && (*run)["source"].is_string())
      run_info.source = (*run)["source"].get<std::string>();
    else
      run_info.source = run_info.simulated ? "simulated" : "measured";  // a summary from before the field
  } else {
    r.fail("run", "is missing or not an object");
  }
  if (auto platform = doc.find("platform"); platform != doc.end() && platform->is_object()) {
    run_info.facts = api::facts_from_json(*platform);
    if (auto b = platform->find("apiBudget"); b != platform->end() && b->is_object()) {
      auto number = [&b](const char* key) {
        auto it = b->find(key);
        // Clamped: a hand-edited value must not overflow the int it becomes.
        return it != b->end() && it->is_number() ? std::clamp(it->get<double>(), 0.0, 1e9) : 0.0;
      };
      ApiBudgetRecord budget;
      budget.requests_per_second = number("requestsPerSecond");
      budget.max_concurrent = static_cast<int>(number("maxConcurrent"));
      budget.start_concurrency = static_cast<int>(number("startConcurrency"));
      budget.starts_per_connection = static_cast<int>(number("startsPerConnection"));
      run_info.api_budget = budget;
    }
  }
}

// The distributions of a scenario: its milestones ("ready" first, the rest in boot order) and its phases.
void distributions_from_json(Reader& r, const nlohmann::json& j, const std::string& path,
                             ScenarioSummary& sc) {
  if (auto m = j.find("milestones"); m != j.end() && m->is_object()) {
    for (auto it = m->begin(); it != m->end(); ++it)
      sc.milestones.push_back(MilestoneStats{
          it.key(), distribution_from_json(r, it.value(), path + ".milestones." + it.key(), sc.vms)});
    // "ready" first, the rest in boot order, whatever order the file had.
    std::stable_sort(sc.milestones.begin(), sc.milestones.end(), [](const auto& a, const auto& b) {
      auto rank = [](const std::string& n) {
        if (n == kReady) return -1;
        auto ms = api::milestone_from_string(n);
        return ms ? static_cast<int>(*ms) : static_cast<int>(api::kMilestoneCount);
      };
      return rank(a.name) < rank(b.name);
    });
  }
  if (auto ph = j.find("phases"); ph != j.end() && ph->is_object()) {
    for (auto it = ph->begin(); it != ph->end(); ++it) {
      auto phase = phase_from_key(it.key());
      if (!phase) continue;  // a phase of a later version
      PhaseStats p;
      p.phase = *phase;
      p.dist = distribution_from_json(r, it.value(), path + ".phases." + it.key(), sc.vms);
      if (it.value().is_object()) p.mean_part_s = r.number(it.value(), "meanPartS", path).value_or(0);
      sc.phases.push_back(std::move(p));
    }
    std::stable_sort(sc.phases.begin(), sc.phases.end(),
                     [](const PhaseStats& a, const PhaseStats& b) { return a.phase < b.phase; });
  }
}

ScenarioSummary scenario_from_json(Reader& r, const nlohmann::json& j, const std::string& path) {
  ScenarioSummary sc;
  sc.name = r.string(j, "name", path);
  sc.repeat = static_cast<int>(r.number(j, "repeat", path).value_or(1));
  sc.vms = static_cast<int>(r.number(j, "vms", path).value_or(0));
  sc.hosts = static_cast<int>(r.number(j, "hosts", path).value_or(0));
  sc.fire_skew_ms = r.number(j, "fireSkewMs", path).value_or(0);
  sc.api_requests = static_cast<std::uint64_t>(r.number(j, "apiRequests", path).value_or(0));
  if (j.contains("stormApiRequests"))
    sc.storm_api_requests = static_cast<std::uint64_t>(r.number(j, "stormApiRequests", path).value_or(0));
  if (auto a = j.find("apiAnswers"); a != j.end() && a->is_object())
    sc.api_answers = api_answers_from_json(*a);
  if (auto t = j.find("telemetry"); t != j.end() && t->is_object()) {
    sc.storage = storage_figures_from_json(*t);
    if (auto why = t->find("unavailable"); why != t->end() && why->is_string())
      sc.storage_unavailable = why->get<std::string>();
  }
  if (auto m = j.find("cloneMethods"); m != j.end() && m->is_object()) {
    for (const auto& [method, n] : m->items())
      if (n.is_number_integer()) sc.clone_methods[method] = n.get<int>();
  }
  sc.time_to_all_ready_s = r.number(j, "timeToAllReadyS", path);
  if (j.contains("startAtUnixS")) sc.start_at_unix_s = r.number(j, "startAtUnixS", path);
  if (j.contains("startAtOffsetMs")) sc.start_at_offset_ms = r.number(j, "startAtOffsetMs", path);
  sc.clone_mean_s = r.number(j, "cloneMeanS", path);
  if (j.contains("provisioningS")) sc.provisioning_s = r.number(j, "provisioningS", path);
  if (j.contains("powerOnSpreadMs")) sc.power_on_spread_ms = r.number(j, "powerOnSpreadMs", path);
  sc.power_on_calls =
      static_cast<int>(j.contains("powerOnCalls") ? r.number(j, "powerOnCalls", path).value_or(0) : 0);
  if (auto n = j.find("notAttempted"); n != j.end() && n->is_array()) {
    for (const auto& e : *n)
      if (e.is_object())
        sc.not_attempted.push_back(NotAttempted{r.string(e, "vm", path), r.string(e, "reason", path)});
  }
  if (auto m = j.find("hostMoves"); m != j.end() && m->is_array()) {
    for (const auto& e : *m)
      if (e.is_object())
        sc.moves.push_back(
            HostMove{r.string(e, "vm", path), r.string(e, "plannedHost", path), r.string(e, "host", path)});
  }
  sc.ready_milestone = r.string(j, "readyMilestone", path);
  distributions_from_json(r, j, path, sc);
  if (auto cp = j.find("controlPlane"); cp != j.end() && cp->is_object()) {
    ControlPlaneShare c;
    c.median_s = r.number(*cp, "medianS", path + ".controlPlane").value_or(0);
    c.median_boot_s = r.number(*cp, "medianBootS", path + ".controlPlane").value_or(0);
    c.largest_other =
        phase_from_key(r.string(*cp, "largestOtherPhase", path + ".controlPlane")).value_or(Phase::guest);
    c.largest_other_median_s = r.number(*cp, "largestOtherMedianS", path + ".controlPlane").value_or(0);
    c.delayed = cp->value("delayed", false);
    sc.control_plane = c;
  }
  if (auto f = j.find("failures"); f != j.end() && f->is_array()) {
    for (const auto& e : *f)
      if (e.is_object()) sc.failures.push_back(Failure{r.string(e, "vm", path), r.string(e, "reason", path)});
  }
  if (auto e = j.find("errors"); e != j.end() && e->is_array()) {
    for (const auto& x : *e)
      if (x.is_string()) sc.errors.push_back(x.get<std::string>());
  }
  return sc;
}

std::vector<SloResult> slo_from_json(Reader& r, const nlohmann::json& doc) {
  std::vector<SloResult> out;
  if (auto slo = doc.find("slo"); slo != doc.end() && slo->is_array()) {
    for (const auto& j : *slo) {
      if (!j.is_object()) continue;
      SloResult res;
      res.scenario = r.string(j, "scenario", "slo");
      res.repeat = static_cast<int>(r.number(j, "repeat", "slo").value_or(1));
      res.milestone = r.string(j, "milestone", "slo");
      res.stat = r.string(j, "stat", "slo");
      res.is_min = j.contains("min");
      res.threshold = r.number(j, res.is_min ? "min" : "max", "slo").value_or(0);
      res.value = r.number(j, "value", "slo");
      res.pass = j.value("pass", false);
      out.push_back(std::move(res));
    }
  }
  return out;
}

}  // namespace

nlohmann::ordered_json summary_to_json(const Summary& summary) {
  nlohmann::ordered_json doc;
  doc["schemaVersion"] = kSummarySchemaVersion;
  auto& run = doc["run"];
  run["id"] = summary.run.id;
  run["plan"] = summary.run.plan;
  run["platform"] = summary.run.platform;
  run["simulated"] = summary.run.simulated;
  run["startedAt"] = summary.run.started_at;
  run["endedAt"] = summary.run.ended_at;
  run["lab"] = summary.run.lab;
  run["outcome"] = summary.run.outcome;
  if (!summary.run.api.empty()) run["api"] = summary.run.api;
  if (!summary.run.clone_kind.empty()) run["cloneKind"] = summary.run.clone_kind;
  if (!summary.run.golden.empty()) run["golden"] = summary.run.golden;
  if (!summary.run.source.empty()) run["source"] = summary.run.source;
  if (summary.run.facts != api::PlatformFacts{} || summary.run.api_budget) {
    auto platform = api::facts_to_json(summary.run.facts);
    if (const auto& b = summary.run.api_budget) {
      nlohmann::ordered_json budget = {{"requestsPerSecond", b->requests_per_second},
                                       {"maxConcurrent", b->max_concurrent},
                                       {"startConcurrency", b->start_concurrency}};
      if (b->starts_per_connection > 0) budget["startsPerConnection"] = b->starts_per_connection;
      platform["apiBudget"] = std::move(budget);
    }
    doc["platform"] = std::move(platform);
  }
  auto scenarios = nlohmann::ordered_json::array();
  for (const auto& s : summary.scenarios) scenarios.push_back(scenario_to_json(s));
  doc["scenarios"] = std::move(scenarios);
  auto slo = nlohmann::ordered_json::array();
  for (const auto& r : summary.slo) {
    nlohmann::ordered_json j;
    j["scenario"] = r.scenario;
    j["repeat"] = r.repeat;
    j["milestone"] = r.milestone;
    j["stat"] = r.stat;
    j[r.is_min ? "min" : "max"] = round_us(r.threshold);
    j["value"] = optional_number(r.value);
    j["pass"] = r.pass;
    slo.push_back(std::move(j));
  }
  doc["slo"] = std::move(slo);
  return doc;
}

std::string summary_to_json_text(const Summary& summary) {
  return summary_to_json(summary).dump(2) + "\n";
}

Expected<Summary> summary_from_json(const nlohmann::json& doc) {
  Reader r{"summary.json", std::nullopt};
  if (!doc.is_object()) {
    r.fail("document", "is not a JSON object");
    return *r.error;
  }
  auto version = doc.find("schemaVersion");
  if (version == doc.end() || !version->is_number_integer() || version->get<int>() != kSummarySchemaVersion) {
    r.fail("schemaVersion", "is missing or not 1");
    return *r.error;
  }
  Summary s;
  run_from_json(r, doc, s.run);
  auto scenarios = doc.find("scenarios");
  if (scenarios == doc.end() || !scenarios->is_array()) {
    r.fail("scenarios", "is missing or not an array");
    return *r.error;
  }
  for (std::size_t i = 0; i < scenarios->size(); ++i) {
    const auto& j = (*scenarios)[i];
    const std::string path = fmt::format("scenarios[{}]", i);
    if (!j.is_object()) {
      r.fail(path, "is not an object");
      break;
    }
    s.scenarios.push_back(scenario_from_json(r, j, path));
  }
  s.slo = slo_from_json(r, doc);
  if (r.error) return *r.error;
  return s;
}

}  // namespace bootstorm::results
