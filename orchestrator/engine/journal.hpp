#pragma once
// The run journal: journal.jsonl, append-only, one JSON object per line, written as things happen so that a
// crash loses nothing already seen and `bootstorm report` / `bootstorm cleanup` work from it alone.
//
// Every line has "t" (wall clock, RFC 3339 UTC with ms), "mono" (seconds since the journal's origin on the
// steady clock) and "type". Event types and their payload fields (the contract of RunRecordBuilder):
// - run_started: runId, plan, platform, simulated, source (measured | simulated | predicted), lab,
// readySignal,
//   planYaml, cloneKind, slo[{milestone,stat,max,isMin}]; a prediction adds prediction{lab, seed, overrides};
// - platform_connected: api;
// - checks: results[{name, status (pass|warn|fail|unknown), finding, advice}] (before anything is created);
// - platform_facts: facts (api::facts_to_json; a `simulator` in it makes the run simulated),
//   apiBudget{requestsPerSecond,maxConcurrent,startConcurrency,startsPerConnection};
// - scenario_started: scenario, repeat, vms, hosts;
// - vm_created: scenario, repeat, vm, id, host, cloneS;
// - vm_provision_failed: scenario, repeat, vm, host, reason, failure (clone);
// - vm_startable: scenario, repeat, vm, cloneMethod (how the platform made it: api::Provider::clone_method;
//   only when the platform said);
// - storm_fired: scenario, repeat, firstMono, lastMono, fireSkewMs, firstWall (unix s), starts;
// - power_on_batch (from the provider): scenario, repeat, call, task, vms, attempted[id],
//   notAttempted[{id,reason}];
// - vm_moved (from the provider): scenario, repeat, vm, plannedHost, host;
// - milestone: scenario, repeat, vm, milestone, offsetS, resolutionS, source, wall (unix s), detail;
// - vm_failed: vm, reason, failure (not_startable, not_started, start_failed, start_hung, timeout);
// - vm_deleted: vm, id;
// - vm_delete_failed: vm, id, reason;
// - telemetry: scenario, repeat, and either report (the storage telemetry read after the storm:
//   results/telemetry_json.hpp) or unavailable (why there is none);
// - scenario_ended: scenario, repeat, apiRequests, stormApiRequests (those after provisioning), apiErrors,
//   apiAnswers (what the answers said: results/api_answers.hpp),
//   errors[];
// - run_ended: outcome (completed | failed | interrupted).
// Sharded runs (shard.hpp) add to run_started: shard{index,count}, startAt (RFC 3339), stormIntervalS,
// planDigest (always written), onlyScenario, repeat; scenario_started: planVms; storm_fired: startAt (unix
// s), releasedWall, startAtOffsetMs, firstStartOffsetMs. A merged journal (merge.hpp) tags shard events with
// "shard" and its run_started carries merged{shardCount, shards[], missing[]}.
// Strings are passed through log::redact before they are written: the journal never contains a secret.
// journal_events.hpp spells the event types and the fields RunRecordBuilder reads, for both sides;
// journal_fold.hpp folds the events back into a results::RunRecord and reads a journal file.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::engine {

class Journal {
 public:
  // Opens (creating, mode 0600) or appends to `file`. A background thread flushes buffered lines at least
  // every `flush_interval`.
  static Expected<std::unique_ptr<Journal>> open(
      const std::filesystem::path& file,
      std::chrono::steady_clock::time_point mono_origin = std::chrono::steady_clock::now(),
      std::chrono::milliseconds flush_interval = std::chrono::milliseconds(100));
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends one event; returns the complete object as written (with t, mono, type). Thread-safe.
  nlohmann::json write(std::string_view type, nlohmann::json payload);
  // The same, stamped with the given instants instead of the clocks' now (`bootstorm predict` writes the lab
  // model's virtual time): `mono_s` in seconds since the journal's origin.
  nlohmann::json write_at(std::string_view type, nlohmann::json payload,
                          std::chrono::system_clock::time_point wall, double mono_s);
  // fflush + fsync: called at every phase boundary.
  void sync();

  // Empty while every line reached the file; else the first write failure (e.g. "No space left on device").
  // Reported once on the log as it happens; the engine fails the run with it.
  std::string write_error() const;

  double mono_of(std::chrono::steady_clock::time_point t) const;
  std::chrono::steady_clock::time_point origin() const { return origin_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  Journal(std::FILE* file, std::filesystem::path path, std::chrono::steady_clock::time_point origin,
          std::chrono::milliseconds flush_interval);
  void flusher();
  // With mutex_ held: records and logs the first failed write/flush (errno).
  void check_written_locked(bool ok);

  std::FILE* file_;
  std::filesystem::path path_;
  std::chrono::steady_clock::time_point origin_;
  std::chrono::milliseconds flush_interval_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool dirty_ = false;
  bool closing_ = false;
  std::string write_error_;
  std::thread thread_;
};

// Replaces every registered secret in every string of `value` (recursively).
void redact_json(nlohmann::json& value);

}  // namespace bootstorm::engine
