#pragma once
// The run journal's event types and the payload fields that the writers (the run session, `bootstorm
// predict`) write and RunRecordBuilder and `bootstorm merge` read back (journal.hpp describes every event),
// spelled once so that the writers and the readers cannot drift apart. Fields that only a writer spells stay
// literal where they are written.
namespace bootstorm::engine {

namespace events {
inline constexpr const char* run_started = "run_started";
inline constexpr const char* run_error = "run_error";
// After connect(): the platform API the provider speaks and how it was chosen (field `api`).
inline constexpr const char* platform_connected = "platform_connected";
// After check_inventory(): what the platform is (api::facts_to_json, field `facts`) and the plan's API budget
// (field `apiBudget`).
inline constexpr const char* platform_facts = "platform_facts";
// Before anything is created: the answers of the checks (field `results`: [{name, status, finding, advice}]).
inline constexpr const char* checks = "checks";
inline constexpr const char* scenario_started = "scenario_started";
inline constexpr const char* vm_created = "vm_created";
inline constexpr const char* vm_provision_failed = "vm_provision_failed";
inline constexpr const char* vm_startable = "vm_startable";
inline constexpr const char* storm_fired = "storm_fired";
// From the provider (api::kNote*): one batched power-on call with its per-VM results; a VM that runs on
// another host than planned.
inline constexpr const char* power_on_batch = "power_on_batch";
inline constexpr const char* vm_moved = "vm_moved";
inline constexpr const char* milestone = "milestone";
inline constexpr const char* vm_failed = "vm_failed";
inline constexpr const char* vm_deleted = "vm_deleted";
inline constexpr const char* vm_delete_failed = "vm_delete_failed";
// Storage telemetry of a storm: {scenario, repeat, report} (stats/telemetry_json.hpp) or {scenario, repeat,
// unavailable: why}.
inline constexpr const char* telemetry = "telemetry";
inline constexpr const char* scenario_ended = "scenario_ended";
inline constexpr const char* run_ended = "run_ended";
}  // namespace events

namespace fields {
// run_started
inline constexpr const char* run_id = "runId";
inline constexpr const char* plan = "plan";
inline constexpr const char* platform = "platform";
inline constexpr const char* api = "api";
inline constexpr const char* simulated = "simulated";
inline constexpr const char* lab = "lab";
inline constexpr const char* ready_signal = "readySignal";
inline constexpr const char* plan_yaml = "planYaml";
inline constexpr const char* clone_kind = "cloneKind";  // golden.clone
inline constexpr const char* golden = "golden";         // the golden image the clones come from
inline constexpr const char* slo = "slo";               // [{milestone, stat, max, isMin}]
inline constexpr const char* slo_stat = "stat";
inline constexpr const char* slo_max = "max";
inline constexpr const char* slo_is_min = "isMin";
inline constexpr const char* shard = "shard";  // {index, count}
inline constexpr const char* shard_index = "index";
inline constexpr const char* shard_count = "count";
// Where the run's figures come from: "measured", "simulated" or "predicted" (absent in runs before it: then
// `simulated` says which of the first two).
inline constexpr const char* run_source = "source";
// A prediction's model: {lab (as given), seed (the first repetition's), overrides ["KEY=VALUE"]}.
inline constexpr const char* prediction = "prediction";
// checks
inline constexpr const char* results = "results";
inline constexpr const char* status = "status";
inline constexpr const char* finding = "finding";
inline constexpr const char* advice = "advice";
inline constexpr const char* name = "name";
// platform_facts
inline constexpr const char* facts = "facts";
inline constexpr const char* api_budget =
    "apiBudget";  // {requestsPerSecond, maxConcurrent, startConcurrency}
// scenario events
inline constexpr const char* scenario = "scenario";
inline constexpr const char* repeat = "repeat";
inline constexpr const char* vms = "vms";
inline constexpr const char* hosts = "hosts";
inline constexpr const char* api_requests = "apiRequests";
inline constexpr const char* api_answers = "apiAnswers";
inline constexpr const char* storm_api_requests =
    "stormApiRequests";  // after provisioning: start and observe
inline constexpr const char* errors = "errors";
// VM events
inline constexpr const char* vm = "vm";
inline constexpr const char* id = "id";
inline constexpr const char* host = "host";
inline constexpr const char* clone_s = "cloneS";
inline constexpr const char* clone_method = "cloneMethod";
inline constexpr const char* reason = "reason";
// What failed, one word (results::kFailureKinds): clone, not_startable, not_started, start_failed,
// start_hung, timeout.
inline constexpr const char* failure = "failure";
// storm_fired
inline constexpr const char* fire_skew_ms = "fireSkewMs";
inline constexpr const char* first_wall = "firstWall";
inline constexpr const char* start_at = "startAt";
inline constexpr const char* start_at_offset_ms = "startAtOffsetMs";
// power_on_batch
inline constexpr const char* call = "call";
inline constexpr const char* attempted = "attempted";         // [VM id]
inline constexpr const char* not_attempted = "notAttempted";  // [{id, reason}]
// vm_moved
inline constexpr const char* planned_host = "plannedHost";
// milestone (also the milestone of an slo entry)
inline constexpr const char* milestone = "milestone";
inline constexpr const char* offset_s = "offsetS";
inline constexpr const char* resolution_s = "resolutionS";
inline constexpr const char* source = "source";
inline constexpr const char* wall = "wall";
inline constexpr const char* detail = "detail";
// run_ended
inline constexpr const char* outcome = "outcome";
inline constexpr const char* report = "report";            // telemetry
inline constexpr const char* unavailable = "unavailable";  // telemetry
}  // namespace fields

}  // namespace bootstorm::engine
