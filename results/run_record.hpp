#pragma once
// The measured content of a run, as rebuilt from journal.jsonl. Pure data: the engine fills it while
// running, the journal reader rebuilds it from the journal alone, stats and reports consume it.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/http/api_stats.hpp"
#include "providers/api/milestone.hpp"
#include "providers/api/platform_facts.hpp"
#include "providers/api/storage_telemetry.hpp"

namespace bootstorm::results {

// One milestone of one VM as recorded: seconds after that VM's start_requested on the monotonic clock,
// the resolution, the source and the wall time (UTC, ms since epoch).
struct MilestoneRecord {
  double offset_s = 0;  // observed_mono - start_requested_mono
  double resolution_s = 0;
  std::string source;      // "watch", "poll", "beacon", ...
  double wall_unix_s = 0;  // observed wall clock, unix seconds with fractions
  std::string detail;
};

// What failed a VM, one word each, as the journal's vm_failed and vm_provision_failed say it and the
// metrics label it: its clone, its wait to be startable, a storm that never fired at it, its start call (an
// error, or no answer in time), or the wait for its ready milestone.
inline constexpr std::string_view kFailureKinds[] = {"clone",        "not_startable", "not_started",
                                                     "start_failed", "start_hung",    "timeout"};

struct VmRecord {
  std::string scenario;
  int repeat = 1;
  std::string name;
  std::string id;
  std::string host;
  double clone_s = -1;                // provisioning time, -1 when unknown
  std::string clone_method;           // how the platform made it (api::Provider::clone_method); "" unknown
  double start_requested_unix_s = 0;  // wall time the start request was written (0: never started)
  std::map<api::Milestone, MilestoneRecord> milestones;
  std::string status = "pending";  // ready | failed | pending | not_started
  std::string reason;              // why it failed
  // What failed, one word of kFailureKinds ("" in runs before it was recorded).
  std::string failure;
  std::optional<double> ready_s;  // boot time = ready milestone offset (when reached)
};

struct SloRecord {
  std::string milestone;  // "ready" or a milestone name
  std::string stat;
  double max = 0;
  bool is_min = false;
};

// A VM the platform ran on another host than the plan placed it on (vCenter's DRS).
struct HostMove {
  std::string vm;
  std::string planned_host;
  std::string host;
  bool operator==(const HostMove&) const = default;
};

// A VM a batched power-on call did not attempt, and vCenter's reason.
struct NotAttempted {
  std::string vm;  // the VM's name where the run knows its id, else the id
  std::string reason;
  bool operator==(const NotAttempted&) const = default;
};

struct ScenarioRecord {
  std::string name;
  int repeat = 1;
  int vms = 0;
  int hosts = 0;
  double fire_skew_ms = 0;    // first to last start request written
  double started_unix_s = 0;  // first start request
  std::uint64_t api_requests = 0;
  std::vector<std::string> errors;  // scenario-level errors (provision failures, ...)
  // Provisioning: from the scenario's start to its last VM created (or failed), on the journal's clock.
  std::optional<double> provision_begin_mono, provision_end_mono;
  std::optional<std::uint64_t> storm_api_requests;  // of api_requests, those after provisioning
  std::optional<http::ApiStats> api_answers;        // what the answers said (runs before it: unset)
  int power_on_calls = 0;                           // batched power-on calls (PowerOnMultiVM_Task)
  std::vector<NotAttempted> not_attempted;
  std::vector<HostMove> moves;
  // Runs fired at an agreed wall-clock instant (--start-at): the instant and how far from it the barrier
  // really opened on this machine's CLOCK_REALTIME (for a merged run: the worst shard).
  std::optional<double> start_at_unix_s;
  std::optional<double> start_at_offset_ms;
  // Storage telemetry read after the storm, or why there is none ("" with none: the plan turned it off, or a
  // run before telemetry).
  std::optional<api::TelemetryReport> telemetry;
  std::string telemetry_unavailable;
};

// The plan's API budget as the run used it (journal: platform_facts.apiBudget).
struct ApiBudgetRecord {
  double requests_per_second = 0;
  int max_concurrent = 0;
  int start_concurrency = 0;      // 0: every start of the burst at once
  int starts_per_connection = 0;  // 0: automatic
  bool operator==(const ApiBudgetRecord&) const = default;
};

// What a prediction (`bootstorm predict`) ran: the lab profile as given, the first repetition's seed and the
// what-if overrides.
struct PredictionRecord {
  std::string lab;
  std::uint64_t seed = 0;
  std::vector<std::string> overrides;  // "KEY=VALUE"
  bool operator==(const PredictionRecord&) const = default;
};

struct RunRecord {
  std::string run_id;
  std::string plan_name;
  std::string platform;  // vsphere | kubevirt
  std::string
      platform_api;  // the API the provider spoke and why, e.g. "vim25 (SOAP, /sdk) — platform.api auto: ..."
  std::string lab;  // lab name when simulated
  // The endpoint was a lab, or the platform said it is a simulator (facts.simulator).
  bool simulated = false;
  // "predicted" for a prediction (run_started.source); "" otherwise: measured, or simulated as `simulated`
  // says (a platform may say it is a simulator after the run began).
  std::string source;
  std::optional<PredictionRecord> prediction;
  api::PlatformFacts facts;  // what the platform is ("" fields: not exposed, or a run before they were kept)
  std::optional<ApiBudgetRecord> api_budget;
  std::string ready_signal;  // milestone that defines "ready"
  std::string started_at;    // RFC 3339 UTC with ms
  std::string ended_at;
  std::string plan_yaml;   // resolved plan as run
  std::string clone_kind;  // golden.clone ("" in runs before it was recorded)
  std::string golden;      // the golden image ("" in runs before it was recorded)
  std::string outcome;     // completed | failed | interrupted
  std::vector<ScenarioRecord> scenarios;
  std::vector<VmRecord> vms;  // all scenarios/repeats
  std::vector<SloRecord> slo;
};

}  // namespace bootstorm::results
