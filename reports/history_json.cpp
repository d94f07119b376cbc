// `bootstorm history`, history.json: the groups, their runs, what changed and where, for other tools.

#include "providers/api/platform_facts.hpp"
#include "reports/detail/format.hpp"
#include "reports/history.hpp"

namespace bootstorm::reports {
namespace {

using detail::number_or_null;
using nlohmann::ordered_json;

ordered_json interval(const results::ConfidenceInterval& ci, bool bounded = true) {
  return {{"estimate", number_or_null(ci.estimate)},
          {"lower", bounded ? number_or_null(ci.lower) : ordered_json(nullptr)},
          {"upper", bounded ? number_or_null(ci.upper) : ordered_json(nullptr)},
          {"level", ci.level}};
}

ordered_json point_json(const results::HistoryPoint& p) {
  ordered_json milestones = ordered_json::object();
  for (const auto& [name, f] : p.milestones)
    milestones[name] = {{"count", f.count},
                        {"total", f.total},
                        {"readyFraction", f.ready_fraction},
                        {"meanS", number_or_null(f.mean)},
                        {"p50S", number_or_null(f.p50)},
                        {"p95S", number_or_null(f.p95)}};
  ordered_json j = {{"id", p.run_id},
                    {"where", p.where},
                    {"startedAt", p.started_at},
                    {"outcome", p.outcome},
                    {"inDetection", p.in_detection},
                    {"vms", p.vms},
                    {"repeats", p.repeats},
                    {"golden", p.golden},
                    {"cloneKind", p.clone_kind}};
  if (p.facts != api::PlatformFacts{}) j["platform"] = api::facts_to_json(p.facts);
  j["milestones"] = std::move(milestones);
  return j;
}

ordered_json shift_json(const results::SeriesShift& s) {
  ordered_json j = {{"milestone", s.milestone},
                    {"detected", s.detected},
                    {"pValue", s.detected ? ordered_json(s.p_value) : ordered_json(nullptr)}};
  if (s.shift) {
    j["nBefore"] = s.shift->n_before;
    j["nAfter"] = s.shift->n_after;
    j["beforeMeanS"] = s.shift->before_mean;
    j["afterMeanS"] = s.shift->after_mean;
    j["differenceS"] = interval(s.shift->difference);
    j["relative"] = interval(s.shift->relative, s.shift->relative_bounded);
  }
  return j;
}

}  // namespace

nlohmann::ordered_json history_to_json(const HistoryReportInput& in) {
  const auto& cp = in.options.change_points;
  ordered_json doc = {{"schemaVersion", 1}, {"generatedAt", in.generated_at}};
  doc["method"] = {{"changePoints", "e-divisive (Matteson & James 2014), exponent 1, permutation test"},
                   {"significance", cp.significance},
                   {"permutations", cp.permutations},
                   {"minSegment", cp.min_segment},
                   {"seed", cp.seed},
                   {"intervals", "Welch (difference of means), Fieller (ratio of means)"},
                   {"level", in.options.level}};
  if (in.fail_on_regression) doc["failOnRegression"] = *in.fail_on_regression;
  ordered_json groups = ordered_json::array();
  for (const results::HistoryGroup& g : in.groups) {
    ordered_json j = {{"plan", g.key.plan},
                      {"scenario", g.key.scenario},
                      {"platform", g.key.platform},
                      {"source", g.key.source},
                      {"readyMilestone", g.ready_milestone},
                      {"series", g.series},
                      {"seriesSignificance", g.series_significance}};
    ordered_json runs = ordered_json::array();
    for (const auto& p : g.points) runs.push_back(point_json(p));
    j["runs"] = std::move(runs);
    ordered_json changes = ordered_json::array();
    for (const auto& fc : g.fact_changes)
      changes.push_back(
          {{"index", fc.index}, {"run", g.points[fc.index].run_id}, {"differences", fc.differences}});
    j["platformChanges"] = std::move(changes);
    ordered_json points = ordered_json::array();
    for (const auto& c : g.change_points) {
      ordered_json shifts = ordered_json::array();
      for (const auto& s : c.shifts) shifts.push_back(shift_json(s));
      points.push_back({{"index", c.index},
                        {"run", c.run_id},
                        {"startedAt", g.points[c.index].started_at},
                        {"shifts", std::move(shifts)}});
    }
    j["changePoints"] = std::move(points);
    groups.push_back(std::move(j));
  }
  doc["groups"] = std::move(groups);
  if (in.fail_on_regression) {
    ordered_json found = ordered_json::array();
    for (const auto& r : results::regressions(in.groups, *in.fail_on_regression))
      found.push_back({{"plan", r.group->key.plan},
                       {"scenario", r.group->key.scenario},
                       {"run", r.change_point->run_id},
                       {"milestone", r.shift->milestone},
                       {"relative", r.shift->shift->relative.estimate}});
    doc["regressions"] = std::move(found);
  }
  ordered_json skipped = ordered_json::array();
  for (const auto& s : in.skipped) skipped.push_back({{"where", s.where}, {"why", s.why}});
  doc["skipped"] = std::move(skipped);
  return doc;
}

}  // namespace bootstorm::reports
