#pragma once
// The run journal: journal.jsonl, append-only, one JSON object per line, written as things happen so that a
// crash loses nothing already seen and `bootstorm report` / `bootstorm cleanup` work from it alone.
//
// Every line has "t" (wall clock, RFC 3339 UTC with ms), "mono" (seconds since the journal's origin on the
// steady clock) and "type". Event types and their payload fields (the contract of RunRecordBuilder):
//   run_started      runId, plan, platform, simulated, lab, readySignal, planYaml,
//   slo[{milestone,stat,max,isMin}] scenario_started scenario, repeat, vms, hosts vm_created       scenario,
//   repeat, vm, id, host, cloneS vm_provision_failed scenario, repeat, vm, host, reason storm_fired scenario,
//   repeat, firstMono, lastMono, fireSkewMs, firstWall (unix s), starts milestone        scenario, repeat,
//   vm, milestone, offsetS, resolutionS, source, wall (unix s), detail vm_failed        vm, reason vm_deleted
//   vm, id vm_delete_failed vm, id, reason scenario_ended   scenario, repeat, apiRequests, apiErrors,
//   errors[] run_ended        outcome (completed | failed | interrupted)
// Strings are passed through log::redact before they are written: the journal never contains a secret.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <istream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/expected.hpp"
#include "orchestrator/stats/run_record.hpp"
#include "providers/api/provider.hpp"

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
  // fflush + fsync: called at every phase boundary.
  void sync();

  double mono_of(std::chrono::steady_clock::time_point t) const;
  std::chrono::steady_clock::time_point origin() const { return origin_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  Journal(std::FILE* file, std::filesystem::path path, std::chrono::steady_clock::time_point origin,
          std::chrono::milliseconds flush_interval);
  void flusher();

  std::FILE* file_;
  std::filesystem::path path_;
  std::chrono::steady_clock::time_point origin_;
  std::chrono::milliseconds flush_interval_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool dirty_ = false;
  bool closing_ = false;
  std::thread thread_;
};

// Replaces every registered secret in every string of `value` (recursively).
void redact_json(nlohmann::json& value);

// Builds a stats::RunRecord from journal events, in order. The engine feeds it the events it writes; the
// reader feeds it the lines of a journal file — both must give the same record.
class RunRecordBuilder {
 public:
  void apply(const nlohmann::json& event);
  // The record with every VM's status resolved (ready / failed / pending / not_started).
  stats::RunRecord record() const;
  // VMs created and not (yet) deleted, in creation order.
  std::vector<api::VmHandle> undeleted() const;
  const std::string& run_id() const { return record_.run_id; }

 private:
  stats::VmRecord* find_vm(const std::string& name);
  stats::ScenarioRecord* find_scenario(const std::string& name, int repeat);

  stats::RunRecord record_;
  std::map<std::string, std::size_t> vm_index_;
  std::vector<api::VmHandle> created_;
  std::map<std::string, bool> deleted_;
};

struct JournalContents {
  stats::RunRecord record;
  std::vector<api::VmHandle> undeleted;
  std::vector<std::string> warnings;  // lines that could not be read (line number and why)
  bool truncated_tail = false;        // the last line was incomplete (crash while writing): ignored
  bool has_run_started = false;
  bool has_run_ended = false;
};

// Reads journal.jsonl. Tolerates a truncated last line; other unreadable lines are skipped with a warning.
// Error when the file cannot be opened or lacks run_started.
Expected<JournalContents> read_journal(const std::filesystem::path& file);
Expected<JournalContents> parse_journal(std::istream& in, const std::string& name_for_messages);

}  // namespace bootstorm::engine
