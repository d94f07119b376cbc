#pragma once
// A plan followed across runs (`bootstorm history`): the runs' summaries grouped like with like, one series
// per milestone, where the platform changed between runs, and where the boot times changed (change points,
// results/changepoint.hpp) with the size of each change (results/inference.hpp, mean_shift). Pure: it reads
// Summary values, never a file.
//
// Like with like: the same plan name, scenario name, platform kind and source (measured, simulated and
// predicted runs are never put together). A run's repeats of a scenario are pooled into one point: the mean
// over every VM that reached the milestone (weighted by count), the repeats' P50 and P95 averaged, the
// ready fraction over all their VMs. Runs whose outcome is not `completed` are charted and listed but left
// out of change-point detection: a run that failed as a whole says nothing about boot times.
//
// Change points are looked for in each milestone's series of run means, "ready" and every other milestone
// except the one ready is (the same numbers twice) and start_acknowledged (the API's answer, not the boot).
// The group's significance is shared among those series (Bonferroni), so a group with no change shows a
// false change point with probability at most `significance`. Change points that several series find at the
// same run are one change point of the group. Each change point's size is measured for every series between
// its neighbours: the runs from the previous change point to it, against the runs from it to the next.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "providers/api/platform_facts.hpp"
#include "results/changepoint.hpp"
#include "results/inference.hpp"
#include "results/summary.hpp"

namespace bootstorm::results {

struct HistoryKey {
  std::string plan, scenario, platform, source;
  auto operator<=>(const HistoryKey&) const = default;
};

// One milestone of one run (repeats pooled).
struct HistoryFigures {
  std::size_t count = 0, total = 0;
  double ready_fraction = 0;
  std::optional<double> mean, p50, p95;  // seconds; unset when no VM reached it
};

struct HistoryPoint {
  std::string run_id;
  std::string where;       // the run directory (or the index document) it was read from
  std::string started_at;  // RFC 3339
  double started_unix_s = 0;
  std::string outcome;
  int vms = 0;  // per storm
  int repeats = 1;
  api::PlatformFacts facts;
  std::string clone_kind, golden;
  std::map<std::string, HistoryFigures> milestones;
  bool in_detection = true;  // outcome completed (or not recorded)
};

// What differs between a point and the one before it.
struct FactChange {
  std::size_t index = 0;  // the point after the change
  std::vector<std::string> differences;
};

struct SeriesShift {
  std::string milestone;
  std::optional<MeanShift> shift;  // unset when a side has fewer than two runs with the milestone
  bool detected = false;           // this milestone's own series has the change point
  double p_value = 1;              // its permutation test's (1 when not detected)
};

struct HistoryChangePoint {
  std::size_t index = 0;  // the first point of the new segment
  std::string run_id;
  std::vector<SeriesShift> shifts;  // one per series looked at, in series order
  // The detected shift that grew most (relative mean), or the largest in size when none grew.
  const SeriesShift* headline() const;
};

struct HistoryGroup {
  HistoryKey key;
  std::vector<HistoryPoint> points;  // by start time
  std::string ready_milestone;       // what "ready" is in these runs (the newest run's)
  std::vector<std::string> series;   // the milestones looked at for change points
  double series_significance = 0;    // the significance of each series' test
  std::vector<FactChange> fact_changes;
  std::vector<HistoryChangePoint> change_points;  // ascending index
  std::size_t detection_points() const;           // points in detection
};

struct HistoryOptions {
  ChangePointOptions change_points;  // its significance is the group's, shared among the series
  double level = 0.95;               // of the shift intervals
};

struct HistoryInput {
  std::string where;  // run directory or index document
  Summary summary;
};

// The groups of `runs`, ordered by key; within a group, the points in start order (run id breaks ties).
std::vector<HistoryGroup> build_history(const std::vector<HistoryInput>& runs,
                                        const HistoryOptions& options = {});

// A slower newest segment: the group's last change point, when the newest run in detection is after it and
// a detected series' mean grew by more than `threshold` (0.10 = 10 %).
struct Regression {
  const HistoryGroup* group = nullptr;
  const HistoryChangePoint* change_point = nullptr;
  const SeriesShift* shift = nullptr;
};
std::vector<Regression> regressions(const std::vector<HistoryGroup>& groups, double threshold);

// "kubevirt-density / 24 on worker-0 (kubevirt, simulated lab)": the group in the words of every report.
std::string group_label(const HistoryKey& key);

}  // namespace bootstorm::results
