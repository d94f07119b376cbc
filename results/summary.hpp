#pragma once
// The statistics of a run (summary.json, schema version 1 — DESIGN.md "The run directory"; its JSON is
// summary_json.hpp) and SLO evaluation. summarize() is a pure function of the RunRecord, so re-rendering a
// run from its journal gives byte-identical summaries.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "results/descriptive.hpp"
#include "results/phases.hpp"
#include "results/run_record.hpp"
#include "results/storage_figures.hpp"

namespace bootstorm::results {

inline constexpr int kSummarySchemaVersion = 1;

struct RunInfo {
  std::string id;
  std::string plan;
  std::string platform;
  std::string lab;  // lab profile when simulated (additive field "lab")
  std::string api;  // the platform API spoken (additive field "api"; "" in runs before it was recorded)
  bool simulated = false;
  std::string started_at;
  std::string ended_at;
  std::string outcome;     // completed | failed | interrupted (additive field "outcome")
  std::string clone_kind;  // golden.clone (additive field "cloneKind"; "" in runs before it was recorded)
  // measured | simulated | predicted (additive field "source"; `simulated` stays for compatibility).
  std::string source;
  // What the platform is and the budget the run used (additive top-level "platform"; empty / unset in runs
  // before they were recorded).
  api::PlatformFacts facts;
  std::optional<ApiBudgetRecord> api_budget;
  std::string golden;  // the golden image the clones came from (additive field "golden")
};

struct Failure {
  std::string vm;
  std::string reason;
};

struct MilestoneStats {
  std::string name;  // "ready" or an api::Milestone name
  Distribution dist;
};

struct ScenarioSummary {
  std::string name;
  int repeat = 1;
  int vms = 0;
  int hosts = 0;
  double fire_skew_ms = 0;
  std::uint64_t api_requests = 0;
  std::optional<double> time_to_all_ready_s;  // first start request to last VM ready; unset unless all ready
  std::optional<double> clone_mean_s;         // mean provisioning time of the VMs whose clone time is known
  // The scenario's provisioning, first clone request to last VM created (additive "provisioningS").
  std::optional<double> provisioning_s;
  // The spread of the per-VM power-on confirmations (start_acknowledged), first to last: with one batched
  // call (PowerOnMultiVM) the platform's own fan-out, beside the fire skew of the calls
  // (additive "powerOnSpreadMs").
  std::optional<double> power_on_spread_ms;
  // Of api_requests, those after provisioning: the starts and the observation (additive "stormApiRequests").
  std::optional<std::uint64_t> storm_api_requests;
  // What the platform's answers said: 429s, 5xx, Retry-After, APF levels, vCenter's task queue (additive
  // "apiAnswers", results/api_answers.hpp).
  std::optional<http::ApiStats> api_answers;
  // Storage during the storm, from the platform's monitoring (additive "telemetry"), or why there is none
  // ("telemetry": {"unavailable": ...}).
  std::optional<StorageFigures> storage;
  std::string storage_unavailable;
  // How the platform made the scenario's VMs, VMs per method (additive "cloneMethods": {"csi-clone": 24});
  // empty where it did not say.
  std::map<std::string, int> clone_methods;
  int power_on_calls = 0;                   // batched power-on calls (additive "powerOnCalls")
  std::vector<NotAttempted> not_attempted;  // (additive "notAttempted": [{vm, reason}])
  std::vector<HostMove> moves;              // (additive "hostMoves": [{vm, plannedHost, host}])
  std::string ready_milestone;              // which milestone "ready" is (summary.json "readyMilestone")
  // "ready" first, then every milestone (api::kAllMilestones order, start_requested excluded: it is the
  // origin) that at least one VM of the scenario reached.
  std::vector<MilestoneStats> milestones;
  // Where the boot time went (additive "phases": {phase key: distribution with "meanPartS"}), in boot order,
  // the phases some ready VM reported (results/phases.hpp).
  std::vector<PhaseStats> phases;
  // The median VM's wait before it was scheduled against its other phases (additive "controlPlane"); unset
  // where the platform reports no scheduling (vSphere).
  std::optional<ControlPlaneShare> control_plane;
  std::vector<Failure> failures;    // every VM that did not become ready, with the reason
  std::vector<std::string> errors;  // scenario-level errors (additive field "errors")
  // Boot times (seconds) of the VMs that became ready, in VM order. Not part of summary.json: filled by
  // summarize() and by readers of vms.csv, used for plots and comparisons.
  std::vector<double> boot_times_s;
  std::optional<double> start_at_unix_s;     // --start-at (summary.json "startAtUnixS", only when set)
  std::optional<double> start_at_offset_ms;  // barrier opening minus start-at ("startAtOffsetMs")

  const Distribution* find(std::string_view milestone) const;  // nullptr when absent
  const Distribution& ready() const;                           // always present after summarize()
};

struct SloResult {
  std::string scenario;
  int repeat = 1;
  std::string milestone;
  std::string stat;
  double threshold = 0;
  bool is_min = false;          // threshold is a minimum (ready_fraction), JSON key "min" instead of "max"
  std::optional<double> value;  // unset when the statistic does not exist (nothing reached the milestone)
  bool pass = false;
};

struct Summary {
  RunInfo run;
  std::vector<ScenarioSummary> scenarios;
  std::vector<SloResult> slo;
  bool slo_passed() const;  // true when every SLO passed (or there are none)
};

// The SLO statistic names, in documentation order.
inline constexpr std::string_view kSloStats[] = {
    "mean", "p50", "p90", "p95", "p99", "max", "min", "stdev", "time_to_all_ready", "ready_fraction"};
bool is_slo_stat(std::string_view stat);

Summary summarize(const RunRecord& record);

// The value of `stat` for `milestone` ("ready" or a milestone name) in a scenario; nullopt when undefined.
std::optional<double> stat_value(const ScenarioSummary& scenario, std::string_view milestone,
                                 std::string_view stat);
std::vector<SloResult> evaluate_slos(const std::vector<SloRecord>& slos,
                                     const std::vector<ScenarioSummary>& scenarios);

}  // namespace bootstorm::results
