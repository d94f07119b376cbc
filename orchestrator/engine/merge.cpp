#include "orchestrator/engine/merge.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "common/rfc3339.hpp"
#include "orchestrator/engine/journal_events.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/shard.hpp"
#include "results/api_answers.hpp"

namespace bootstorm::engine {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct ShardJournal {
  int index = 0;
  int count = 1;
  fs::path dir;
  std::vector<json> events;
  json run_started;
  double origin_wall = 0;  // CLOCK_REALTIME of the shard's mono 0
  bool has_run_ended = false;
  std::string outcome;
};

double wall_of(const json& event) {
  auto t = event.find("t");
  if (t == event.end() || !t->is_string()) return std::numeric_limits<double>::quiet_NaN();
  auto parsed = parse_rfc3339(t->get<std::string>());
  return parsed ? unix_seconds(*parsed) : std::numeric_limits<double>::quiet_NaN();
}

double number(const json& e, const char* key, double fallback = 0) {
  auto it = e.find(key);
  return it != e.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string text(const json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Expected<ShardJournal> read_shard(const fs::path& dir, std::vector<std::string>& warnings) {
  const fs::path file = dir / "journal.jsonl";
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return make_error(ErrorKind::not_found, fmt::format("cannot read {}", file.string()),
                      "pass the run directories the shards wrote (each contains journal.jsonl)");
  ShardJournal shard;
  shard.dir = dir;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const bool complete = !in.eof();
    if (line.empty()) continue;
    json event = json::parse(line, nullptr, false);
    if (event.is_discarded() || !event.is_object()) {
      if (complete)
        warnings.push_back(fmt::format("{}:{}: not a JSON object, line skipped", file.string(), line_no));
      continue;
    }
    const std::string type = text(event, "type");
    if (type == events::run_started && shard.run_started.is_null()) shard.run_started = event;
    if (type == events::run_ended) {
      shard.has_run_ended = true;
      shard.outcome = text(event, fields::outcome);
    }
    shard.events.push_back(std::move(event));
  }
  if (shard.run_started.is_null())
    return make_error(ErrorKind::invalid_input, fmt::format("{} has no run_started event", file.string()),
                      "is this the journal.jsonl of a bootstorm run directory?");
  auto s = shard.run_started.find("shard");
  if (s == shard.run_started.end() || !s->is_object())
    return make_error(ErrorKind::invalid_input,
                      fmt::format("{} is not a shard: its run was not started with --shard", dir.string()),
                      "merge combines the run directories of `bootstorm run PLAN --shard I/N --start-at T`");
  shard.index = s->value("index", -1);
  shard.count = s->value("count", 0);
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count)
    return make_error(ErrorKind::invalid_input,
                      fmt::format("{}: run_started has an invalid shard {}", file.string(), s->dump()));
  shard.origin_wall = wall_of(shard.run_started) - number(shard.run_started, "mono");
  if (!std::isfinite(shard.origin_wall))
    return make_error(ErrorKind::invalid_input,
                      fmt::format("{}: run_started has no valid time \"t\"", file.string()));
  return shard;
}

// The run_started fields every shard of one run must agree on.
constexpr const char* kSameFields[] = {"runId",    "planDigest", "startAt",     "stormIntervalS", "plan",
                                       "platform", "endpoint",   "readySignal", "onlyScenario",   "repeat"};

struct ScenarioKey {
  std::string name;
  int repeat = 1;
  auto operator<=>(const ScenarioKey&) const = default;
};

ScenarioKey key_of(const json& e) {
  return {text(e, fields::scenario), static_cast<int>(number(e, fields::repeat, 1))};
}

struct ScenarioMerge {
  int shards_started = 0, shards_fired = 0, shards_ended = 0;
  int vms = 0, hosts = 0, plan_vms = 0;
  // storm_fired
  int fired_total = 0;
  double first_wall = 0, last_wall = 0;
  double first_mono = 0, last_mono = 0;
  bool any_start = false;
  std::uint64_t starts = 0, start_failures = 0, not_released = 0, peak_in_flight = 0;
  std::optional<double> start_at, start_at_offset_ms;
  json fired_shards = json::array();
  // scenario_ended
  int ended_total = 0;
  std::uint64_t api_requests = 0, api_errors = 0;
  std::optional<std::uint64_t> storm_api_requests;  // summed over the shards that recorded it
  std::optional<http::ApiStats> api_answers;        // likewise
  json errors = json::array();
};

using ScenarioTotals = std::map<ScenarioKey, ScenarioMerge>;

// ---- they must be the shards of one run

Expected<void> check_one_run(const std::vector<ShardJournal>& shards, const MergeOptions& options,
                             MergeResult& result) {
  const ShardJournal& first = shards.front();
  for (const auto& s : shards) {
    if (s.count != first.count)
      return make_error(
          ErrorKind::invalid_input,
          fmt::format("{} is shard {}/{} but {} is shard {}/{}: not the same sharded run", s.dir.string(),
                      s.index, s.count, first.dir.string(), first.index, first.count));
    for (const char* field : kSameFields) {
      auto a = first.run_started.find(field);
      auto b = s.run_started.find(field);
      const json va = a == first.run_started.end() ? json() : *a;
      const json vb = b == s.run_started.end() ? json() : *b;
      if (va != vb)
        return make_error(ErrorKind::invalid_input,
                          fmt::format("{} and {} are not shards of one run: their {} differ ({} vs {})",
                                      first.dir.string(), s.dir.string(), field, va.dump(), vb.dump()),
                          "merge only the run directories of one `--start-at` with the same plan and run id");
    }
  }
  if (text(first.run_started, "startAt").empty())
    return make_error(
        ErrorKind::invalid_input,
        fmt::format("{} was run without --start-at: its shards did not fire together", first.dir.string()));
  for (std::size_t i = 1; i < shards.size(); ++i)
    if (shards[i].index == shards[i - 1].index)
      return make_error(ErrorKind::invalid_input,
                        fmt::format("{} and {} are both shard {}/{}", shards[i - 1].dir.string(),
                                    shards[i].dir.string(), shards[i].index, shards[i].count),
                        "pass each shard's run directory once");
  std::set<int> present;
  for (const auto& s : shards) present.insert(s.index);
  for (int i = 0; i < first.count; ++i)
    if (!present.count(i)) result.missing.push_back(i);
  if (!result.missing.empty()) {
    std::string message =
        fmt::format("shard(s) {} of {} missing: the run directories given cover only {} of them",
                    fmt::join(result.missing, ", "), first.count, shards.size());
    if (!options.allow_missing)
      return make_error(ErrorKind::invalid_input, message,
                        "pass every shard's run directory, or --allow-missing to merge a partial run");
    result.warnings.push_back(message + "; the merged statistics cover only the shards given");
  }
  return {};
}

// ---- disjoint VMs, per-scenario totals

void add_storm_fired(ScenarioMerge& m, const json& e, const ShardJournal& s, double merged_origin) {
  ++m.fired_total;
  const double starts = number(e, "starts");
  const double first_wall = number(e, fields::first_wall);
  const double skew_ms = number(e, fields::fire_skew_ms);
  const double shift = s.origin_wall - merged_origin;
  if (starts > 0 && first_wall > 0) {
    const double last_wall = first_wall + skew_ms / 1000.0;
    const double first_mono = number(e, "firstMono") + shift, last_mono = number(e, "lastMono") + shift;
    if (!m.any_start || first_wall < m.first_wall) {
      m.first_wall = first_wall;
      m.first_mono = first_mono;
    }
    if (!m.any_start || last_wall > m.last_wall) {
      m.last_wall = last_wall;
      m.last_mono = last_mono;
    }
    m.any_start = true;
  }
  m.starts += static_cast<std::uint64_t>(starts);
  m.start_failures += static_cast<std::uint64_t>(number(e, "startFailures"));
  m.not_released += static_cast<std::uint64_t>(number(e, "notReleased"));
  m.peak_in_flight += static_cast<std::uint64_t>(number(e, "peakInFlight"));
  if (e.contains(fields::start_at)) m.start_at = number(e, fields::start_at);
  if (e.contains(fields::start_at_offset_ms)) {
    const double offset = number(e, fields::start_at_offset_ms);
    if (!m.start_at_offset_ms || std::abs(offset) > std::abs(*m.start_at_offset_ms))
      m.start_at_offset_ms = offset;
  }
  json per_shard = {
      {"shard", s.index}, {"starts", starts}, {"firstWall", first_wall}, {"fireSkewMs", skew_ms}};
  for (const char* k : {"startAtOffsetMs", "firstStartOffsetMs"})
    if (e.contains(k)) per_shard[k] = e[k];
  m.fired_shards.push_back(std::move(per_shard));
}

void add_scenario_ended(ScenarioMerge& m, const json& e, const ShardJournal& s) {
  ++m.ended_total;
  m.api_requests += static_cast<std::uint64_t>(number(e, fields::api_requests));
  m.api_errors += static_cast<std::uint64_t>(number(e, "apiErrors"));
  if (e.contains(fields::storm_api_requests))
    m.storm_api_requests =
        m.storm_api_requests.value_or(0) + static_cast<std::uint64_t>(number(e, fields::storm_api_requests));
  if (auto a = e.find(fields::api_answers); a != e.end()) {
    if (!m.api_answers) m.api_answers.emplace();
    *m.api_answers += results::api_answers_from_json(*a);
  }
  if (auto errs = e.find(fields::errors); errs != e.end() && errs->is_array())
    for (const auto& err : *errs)
      if (err.is_string()) m.errors.push_back(fmt::format("shard {}: {}", s.index, err.get<std::string>()));
}

// Every shard's VMs (a VM in two shards is an error) and each scenario's totals over the shards.
Expected<ScenarioTotals> total_scenarios(const std::vector<ShardJournal>& shards, double merged_origin,
                                         MergeResult& result) {
  std::map<std::string, int> owner;
  ScenarioTotals scenarios;
  for (const auto& s : shards) {
    MergedShard info{s.index, s.dir, s.outcome, 0};
    if (!s.has_run_ended)
      result.warnings.push_back(fmt::format("{} (shard {}) has no run_ended event: that shard did not finish",
                                            s.dir.string(), s.index));
    for (const auto& e : s.events) {
      const std::string type = text(e, "type");
      if (type == events::vm_created || type == events::vm_provision_failed) {
        const std::string vm = text(e, fields::vm);
        auto [it, inserted] = owner.emplace(vm, s.index);
        if (!inserted && it->second != s.index)
          return make_error(ErrorKind::invalid_input,
                            fmt::format("VM {} appears in shard {} and in shard {}: the shards overlap", vm,
                                        it->second, s.index),
                            "were the shards run with the same --shard COUNT and the same plan?");
        if (inserted) ++info.vms;
      } else if (type == events::scenario_started) {
        auto& m = scenarios[key_of(e)];
        ++m.shards_started;
        m.vms += static_cast<int>(number(e, fields::vms));
        m.hosts = std::max(m.hosts, static_cast<int>(number(e, fields::hosts)));
        m.plan_vms = std::max(m.plan_vms, static_cast<int>(number(e, "planVms")));
      } else if (type == events::storm_fired) {
        add_storm_fired(scenarios[key_of(e)], e, s, merged_origin);
      } else if (type == events::scenario_ended) {
        add_scenario_ended(scenarios[key_of(e)], e, s);
      }
    }
    result.vms += info.vms;
    result.shards.push_back(std::move(info));
  }
  return scenarios;
}

// ---- the output directory

Expected<void> make_out_dir(const fs::path& out_dir, const ShardJournal& first) {
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_empty(out_dir, ec))
    return make_error(ErrorKind::invalid_input,
                      fmt::format("{} already exists and is not empty", out_dir.string()),
                      "choose a new --out directory (merge never overwrites a run directory)");
  if (out_dir.has_parent_path()) fs::create_directories(out_dir.parent_path(), ec);
  if (!fs::exists(out_dir) && ::mkdir(out_dir.c_str(), 0700) != 0)
    return make_error(ErrorKind::io,
                      fmt::format("cannot create {}: {}", out_dir.string(), std::strerror(errno)));
  if (fs::exists(first.dir / "plan.yaml")) {
    fs::copy_file(first.dir / "plan.yaml", out_dir / "plan.yaml", fs::copy_options::overwrite_existing, ec);
    if (ec)
      return make_error(ErrorKind::io,
                        fmt::format("cannot write {}: {}", (out_dir / "plan.yaml").string(), ec.message()));
  }
  return {};
}

// ---- the merged journal: one scenario_started, storm_fired and scenario_ended per scenario, the shards'
// totals in them; every other event once, tagged with its shard.

json combined_scenario_started(json e, const ScenarioMerge& m) {
  e.erase("shard");
  e["vms"] = m.vms;
  e["hosts"] = m.hosts;
  if (m.plan_vms > 0) e["planVms"] = m.plan_vms;
  e["shards"] = m.shards_started;
  return e;
}

json combined_storm_fired(json e, const ScenarioMerge& m) {
  e.erase("shard");
  e["firstWall"] = m.any_start ? m.first_wall : 0.0;
  e["firstMono"] = std::round(m.first_mono * 1e6) / 1e6;
  e["lastMono"] = std::round(m.last_mono * 1e6) / 1e6;
  // Across machines: the spread of every shard's first and last start request on their wall clocks.
  e["fireSkewMs"] = m.any_start ? std::round((m.last_wall - m.first_wall) * 1e6) / 1e3 : 0.0;
  e["starts"] = m.starts;
  e["startFailures"] = m.start_failures;
  e["notReleased"] = m.not_released;
  e["peakInFlight"] = m.peak_in_flight;
  e.erase("releasedWall");
  e.erase("firstStartOffsetMs");
  if (m.start_at) e["startAt"] = *m.start_at;
  if (m.start_at_offset_ms) e["startAtOffsetMs"] = *m.start_at_offset_ms;  // the worst shard
  e["shards"] = m.fired_shards;
  return e;
}

json combined_scenario_ended(json e, const ScenarioMerge& m) {
  e.erase("shard");
  e["apiRequests"] = m.api_requests;
  e["apiErrors"] = m.api_errors;
  if (m.storm_api_requests) e[fields::storm_api_requests] = *m.storm_api_requests;
  if (m.api_answers) e[fields::api_answers] = results::api_answers_json(*m.api_answers);
  e["errors"] = m.errors;
  return e;
}

// run_started: the lowest shard's, with the shard list instead of one shard.
json merged_run_started(const ShardJournal& first, double merged_origin, const MergeResult& result) {
  json started = first.run_started;
  started.erase("shard");
  started["mono"] =
      std::round((first.origin_wall - merged_origin + number(first.run_started, "mono")) * 1e6) / 1e6;
  json shard_list = json::array();
  for (const auto& s : result.shards)
    shard_list.push_back(
        {{"index", s.index}, {"dir", s.dir.filename().string()}, {"outcome", s.outcome}, {"vms", s.vms}});
  started["merged"] = {{"shardCount", first.count}, {"shards", shard_list}, {"missing", result.missing}};
  return started;
}

// run_ended: completed when every shard completed, interrupted when one was, else failed; at the last
// shard's end.
json merged_run_ended(const std::vector<ShardJournal>& shards, const std::vector<std::string>& outcomes,
                      const MergeResult& result, double merged_origin) {
  const bool any_interrupted = std::count(outcomes.begin(), outcomes.end(), "interrupted") > 0;
  const bool all_completed =
      outcomes.size() == shards.size() && result.missing.empty() &&
      std::all_of(outcomes.begin(), outcomes.end(), [](auto& o) { return o == "completed"; });
  const std::string outcome = any_interrupted ? "interrupted" : all_completed ? "completed" : "failed";
  double ended_wall = merged_origin;
  std::string ended_t;
  for (const auto& s : shards)
    for (const auto& e : s.events)
      if (text(e, "type") == events::run_ended && wall_of(e) >= ended_wall) {
        ended_wall = wall_of(e);
        ended_t = text(e, "t");
      }
  if (ended_t.empty()) ended_t = format_rfc3339(std::chrono::system_clock::now());
  return {{"t", ended_t},
          {"mono", std::round((ended_wall - merged_origin) * 1e6) / 1e6},
          {"type", events::run_ended},
          {"outcome", outcome}};
}

// Every shard's events in wall-clock order; each shard's own order is kept (k-way merge on "t").
Expected<void> write_merged_journal(const std::vector<ShardJournal>& shards, ScenarioTotals& scenarios,
                                    double merged_origin, const fs::path& out_dir, MergeResult& result) {
  const fs::path journal_file = out_dir / "journal.jsonl";
  std::ofstream out(journal_file, std::ios::binary | std::ios::trunc);
  if (!out) return make_error(ErrorKind::io, fmt::format("cannot write {}", journal_file.string()));
  ::chmod(journal_file.c_str(), 0600);
  auto write = [&](json event) {
    out << event.dump() << '\n';
    ++result.events;
  };
  json started = merged_run_started(shards.front(), merged_origin, result);
  result.run_id = text(started, "runId");
  result.plan = text(started, "plan");
  write(std::move(started));

  std::vector<std::size_t> next(shards.size(), 0);
  std::map<ScenarioKey, int> seen_started, seen_fired, seen_ended;
  std::vector<std::string> outcomes;
  while (true) {
    std::size_t pick = shards.size();
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < shards.size(); ++i) {
      if (next[i] >= shards[i].events.size()) continue;
      double w = wall_of(shards[i].events[next[i]]);
      if (!std::isfinite(w)) w = shards[i].origin_wall + number(shards[i].events[next[i]], "mono");
      if (pick == shards.size() || w < best) {
        best = w;
        pick = i;
      }
    }
    if (pick == shards.size()) break;
    const ShardJournal& s = shards[pick];
    json e = s.events[next[pick]++];
    const std::string type = text(e, "type");
    e["shard"] = s.index;
    e["mono"] = std::round((number(e, "mono") + s.origin_wall - merged_origin) * 1e6) / 1e6;
    if (type == events::run_started) continue;
    if (type == events::run_ended) {
      outcomes.push_back(text(e, fields::outcome));
      continue;
    }
    if (type == events::scenario_started || type == events::storm_fired || type == events::scenario_ended) {
      const auto k = key_of(e);
      const auto& m = scenarios[k];
      // Combined once: the first shard's scenario_started, the last shard's storm_fired and scenario_ended.
      if (type == events::scenario_started && seen_started[k]++ == 0) write(combined_scenario_started(e, m));
      if (type == events::storm_fired && ++seen_fired[k] >= m.fired_total) write(combined_storm_fired(e, m));
      if (type == events::scenario_ended && ++seen_ended[k] >= m.ended_total)
        write(combined_scenario_ended(e, m));
      continue;
    }
    write(std::move(e));
  }
  write(merged_run_ended(shards, outcomes, result, merged_origin));
  out.flush();
  if (!out) return make_error(ErrorKind::io, fmt::format("writing {} failed", journal_file.string()));
  return {};
}

}  // namespace

Expected<MergeResult> merge_shard_runs(const std::vector<fs::path>& run_dirs, const fs::path& out_dir,
                                       const MergeOptions& options) {
  MergeResult result;
  result.out_dir = out_dir;
  if (run_dirs.empty())
    return make_error(ErrorKind::invalid_input, "no run directories to merge",
                      "pass every shard's run directory: bootstorm merge RUN... --out DIR");
  std::vector<ShardJournal> shards;
  for (const auto& dir : run_dirs) {
    auto shard = read_shard(dir, result.warnings);
    if (!shard) return shard.error();
    shards.push_back(std::move(*shard));
  }
  std::sort(shards.begin(), shards.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  if (auto one = check_one_run(shards, options, result); !one) return one.error();
  // Every shard's mono is re-based on the earliest shard's origin.
  double merged_origin = std::numeric_limits<double>::infinity();
  for (const auto& s : shards) merged_origin = std::min(merged_origin, s.origin_wall);
  auto scenarios = total_scenarios(shards, merged_origin, result);
  if (!scenarios) return scenarios.error();
  if (auto made = make_out_dir(out_dir, shards.front()); !made) return made.error();
  if (auto written = write_merged_journal(shards, *scenarios, merged_origin, out_dir, result); !written)
    return written.error();
  result.shard_count = shards.front().count;
  return result;
}

}  // namespace bootstorm::engine
