#include "results/history.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/rfc3339.hpp"
#include "providers/api/milestone.hpp"

namespace bootstorm::results {
namespace {

// ---- one run's point for one scenario ----

HistoryFigures pool(const std::vector<const Distribution*>& repeats) {
  HistoryFigures f;
  double weighted = 0, p50 = 0, p95 = 0;
  std::size_t reached = 0;
  for (const Distribution* d : repeats) {
    f.count += d->count;
    f.total += d->total;
    if (d->count == 0 || !d->mean) continue;
    weighted += *d->mean * static_cast<double>(d->count);
    p50 += d->p50.value_or(*d->mean);
    p95 += d->p95.value_or(*d->mean);
    ++reached;
  }
  f.ready_fraction = f.total > 0 ? static_cast<double>(f.count) / static_cast<double>(f.total) : 0;
  if (reached > 0 && f.count > 0) {
    f.mean = weighted / static_cast<double>(f.count);
    f.p50 = p50 / static_cast<double>(reached);
    f.p95 = p95 / static_cast<double>(reached);
  }
  return f;
}

struct PointWithReady {
  HistoryPoint point;
  std::string ready_milestone;
};

PointWithReady make_point(const HistoryInput& input, const std::vector<const ScenarioSummary*>& repeats) {
  const RunInfo& run = input.summary.run;
  PointWithReady out;
  HistoryPoint& p = out.point;
  p.run_id = run.id;
  p.where = input.where;
  p.started_at = run.started_at;
  if (auto t = parse_rfc3339(run.started_at)) p.started_unix_s = unix_seconds(*t);
  p.outcome = run.outcome;
  p.in_detection = run.outcome.empty() || run.outcome == "completed";
  p.vms = repeats.front()->vms;
  p.repeats = static_cast<int>(repeats.size());
  p.facts = run.facts;
  p.clone_kind = run.clone_kind;
  p.golden = run.golden;
  out.ready_milestone = repeats.front()->ready_milestone;
  std::vector<std::string> names;
  for (const ScenarioSummary* s : repeats)
    for (const MilestoneStats& m : s->milestones)
      if (std::find(names.begin(), names.end(), m.name) == names.end()) names.push_back(m.name);
  for (const std::string& name : names) {
    std::vector<const Distribution*> dists;
    for (const ScenarioSummary* s : repeats)
      if (const Distribution* d = s->find(name)) dists.push_back(d);
    p.milestones[name] = pool(dists);
  }
  return out;
}

// ---- what changed between consecutive runs ----

std::vector<std::string> point_differences(const PointWithReady& a, const PointWithReady& b) {
  std::vector<std::string> out = api::differences(a.point.facts, b.point.facts);
  const auto differ = [&out](const char* what, const std::string& x, const std::string& y) {
    if (!x.empty() && !y.empty() && x != y) out.push_back(fmt::format("{}: {} vs {}", what, x, y));
  };
  differ("golden image", a.point.golden, b.point.golden);
  differ("clone", a.point.clone_kind, b.point.clone_kind);
  differ("ready is", a.ready_milestone, b.ready_milestone);
  if (a.point.vms != b.point.vms) out.push_back(fmt::format("VMs: {} vs {}", a.point.vms, b.point.vms));
  return out;
}

// ---- change points ----

// The milestones looked at, in order: "ready", then the others as api::kAllMilestones lists them.
std::vector<std::string> series_of(const HistoryGroup& group) {
  std::set<std::string> present;
  for (const HistoryPoint& p : group.points)
    if (p.in_detection)
      for (const auto& [name, f] : p.milestones)
        if (f.mean) present.insert(name);
  std::vector<std::string> out;
  if (present.contains("ready")) out.push_back("ready");
  for (api::Milestone m : api::kAllMilestones) {
    const std::string name(api::to_string(m));
    if (name == group.ready_milestone || m == api::Milestone::start_acknowledged ||
        m == api::Milestone::start_requested)
      continue;
    if (present.contains(name)) out.push_back(name);
  }
  return out;
}

struct SeriesValues {
  std::vector<std::size_t> at;  // point index of each value
  std::vector<double> values;
};

SeriesValues values_of(const HistoryGroup& group, const std::string& milestone, std::size_t from,
                       std::size_t to) {
  SeriesValues out;
  for (std::size_t i = from; i < to && i < group.points.size(); ++i) {
    const HistoryPoint& p = group.points[i];
    if (!p.in_detection) continue;
    auto it = p.milestones.find(milestone);
    if (it == p.milestones.end() || !it->second.mean || !std::isfinite(*it->second.mean)) continue;
    out.at.push_back(i);
    out.values.push_back(*it->second.mean);
  }
  return out;
}

void find_change_points(HistoryGroup& group, const HistoryOptions& options) {
  group.series = series_of(group);
  if (group.series.empty()) return;
  group.series_significance = options.change_points.significance / static_cast<double>(group.series.size());
  // Per point index: the series that found a change point there, with its p-value.
  std::map<std::size_t, std::map<std::string, double>> found;
  for (std::size_t s = 0; s < group.series.size(); ++s) {
    const SeriesValues series = values_of(group, group.series[s], 0, group.points.size());
    ChangePointOptions cp = options.change_points;
    cp.significance = group.series_significance;
    cp.seed = options.change_points.seed + s;
    for (const ChangePoint& c : e_divisive(series.values, cp))
      found[series.at[c.index]][group.series[s]] = c.p_value;
  }
  std::vector<std::size_t> bounds{0};
  for (const auto& [index, series] : found) bounds.push_back(index);
  bounds.push_back(group.points.size());
  for (std::size_t b = 1; b + 1 < bounds.size(); ++b) {
    HistoryChangePoint cp;
    cp.index = bounds[b];
    cp.run_id = group.points[cp.index].run_id;
    const auto& detected = found[cp.index];
    for (const std::string& milestone : group.series) {
      SeriesShift shift;
      shift.milestone = milestone;
      if (auto it = detected.find(milestone); it != detected.end()) {
        shift.detected = true;
        shift.p_value = it->second;
      }
      const SeriesValues before = values_of(group, milestone, bounds[b - 1], bounds[b]);
      const SeriesValues after = values_of(group, milestone, bounds[b], bounds[b + 1]);
      if (auto m = mean_shift(before.values, after.values, options.level)) shift.shift = *m;
      cp.shifts.push_back(std::move(shift));
    }
    group.change_points.push_back(std::move(cp));
  }
}

}  // namespace

const SeriesShift* HistoryChangePoint::headline() const {
  const SeriesShift* best = nullptr;
  for (const SeriesShift& s : shifts) {
    if (!s.detected || !s.shift) continue;
    if (!best || s.shift->relative.estimate > best->shift->relative.estimate) best = &s;
  }
  if (best && best->shift->relative.estimate < 0) {
    for (const SeriesShift& s : shifts)
      if (s.detected && s.shift &&
          std::abs(s.shift->relative.estimate) > std::abs(best->shift->relative.estimate))
        best = &s;
  }
  return best;
}

std::size_t HistoryGroup::detection_points() const {
  return static_cast<std::size_t>(
      std::count_if(points.begin(), points.end(), [](const HistoryPoint& p) { return p.in_detection; }));
}

std::vector<HistoryGroup> build_history(const std::vector<HistoryInput>& runs,
                                        const HistoryOptions& options) {
  std::map<HistoryKey, std::vector<PointWithReady>> grouped;
  for (const HistoryInput& input : runs) {
    std::vector<std::string> scenario_names;
    for (const ScenarioSummary& s : input.summary.scenarios)
      if (std::find(scenario_names.begin(), scenario_names.end(), s.name) == scenario_names.end())
        scenario_names.push_back(s.name);
    for (const std::string& name : scenario_names) {
      std::vector<const ScenarioSummary*> repeats;
      for (const ScenarioSummary& s : input.summary.scenarios)
        if (s.name == name) repeats.push_back(&s);
      const RunInfo& run = input.summary.run;
      grouped[HistoryKey{run.plan, name, run.platform, run.source}].push_back(make_point(input, repeats));
    }
  }
  std::vector<HistoryGroup> groups;
  for (auto& [key, points] : grouped) {
    std::stable_sort(points.begin(), points.end(), [](const PointWithReady& a, const PointWithReady& b) {
      if (a.point.started_unix_s != b.point.started_unix_s)
        return a.point.started_unix_s < b.point.started_unix_s;
      if (a.point.started_at != b.point.started_at) return a.point.started_at < b.point.started_at;
      return a.point.run_id < b.point.run_id;
    });
    HistoryGroup group;
    group.key = key;
    group.ready_milestone = points.back().ready_milestone;
    for (std::size_t i = 1; i < points.size(); ++i)
      if (auto d = point_differences(points[i - 1], points[i]); !d.empty())
        group.fact_changes.push_back(FactChange{i, std::move(d)});
    for (PointWithReady& p : points) group.points.push_back(std::move(p.point));
    find_change_points(group, options);
    groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<Regression> regressions(const std::vector<HistoryGroup>& groups, double threshold) {
  std::vector<Regression> out;
  for (const HistoryGroup& group : groups) {
    if (group.change_points.empty()) continue;
    const HistoryChangePoint& last = group.change_points.back();
    // The newest run in detection must be after the change point, which is so by construction: a change
    // point always has runs on both sides.
    for (const SeriesShift& s : last.shifts)
      if (s.detected && s.shift && s.shift->relative.estimate > threshold)
        out.push_back(Regression{&group, &last, &s});
  }
  return out;
}

std::string group_label(const HistoryKey& key) {
  // The source in the words every report uses: simulated numbers say "simulated lab".
  const std::string source = key.source == "simulated" ? "simulated lab"
                             : key.source.empty()      ? "measured"
                                                       : key.source;
  return fmt::format("{} / {} ({}, {})", key.plan, key.scenario, key.platform, source);
}

}  // namespace bootstorm::results
