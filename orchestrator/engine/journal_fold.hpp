#pragma once
// The run journal read back (journal.hpp writes it): its events folded, in order, into a results::RunRecord,
// and journal.jsonl read from a file. The engine folds the events it writes through the same builder, so a
// live run and `bootstorm report` of its directory give the same record.
#include <filesystem>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "orchestrator/engine/shard.hpp"
#include "providers/api/provider.hpp"
#include "results/run_record.hpp"

namespace bootstorm::engine {

// Builds a results::RunRecord from journal events, in order. The engine feeds it the events it writes; the
// reader feeds it the lines of a journal file — both must give the same record.
class RunRecordBuilder {
 public:
  void apply(const nlohmann::json& event);
  // The record with every VM's status resolved (ready / failed / pending / not_started).
  results::RunRecord record() const;
  // VMs created and not (yet) deleted, in creation order.
  std::vector<api::VmHandle> undeleted() const;
  const std::string& run_id() const { return record_.run_id; }

 private:
  results::VmRecord* find_vm(const std::string& name);
  results::ScenarioRecord* find_scenario(const std::string& name, int repeat);
  // The scenario an event names (scenario, repeat); nullptr when no scenario_started came before it.
  results::ScenarioRecord* scenario_of(const nlohmann::json& event);
  // One event type each (journal.hpp lists their fields).
  void on_run_started(const nlohmann::json& e);
  void on_platform_facts(const nlohmann::json& e);
  void on_scenario_started(const nlohmann::json& e);
  void on_vm_created(const nlohmann::json& e, bool failed);
  void on_power_on_batch(const nlohmann::json& e);
  void on_milestone(const nlohmann::json& e);
  void on_telemetry(const nlohmann::json& e);
  void on_scenario_ended(const nlohmann::json& e);

  results::RunRecord record_;
  std::map<std::string, std::size_t> vm_index_;
  std::vector<api::VmHandle> created_;
  std::map<std::string, bool> deleted_;
};

struct JournalContents {
  results::RunRecord record;
  std::vector<api::VmHandle> undeleted;
  std::vector<std::string> warnings;  // lines that could not be read (line number and why)
  bool truncated_tail = false;        // the last line was incomplete (crash while writing): ignored
  bool has_run_started = false;
  bool has_run_ended = false;
  nlohmann::json run_started;  // the run_started event as written (shard, startAt, planDigest, ...)
  ShardSpec shard;             // run_started.shard; count 1 for an unsharded (or merged) run
};

// Reads journal.jsonl. Tolerates a truncated last line; other unreadable lines are skipped with a warning.
// Error when the file cannot be opened or lacks run_started.
Expected<JournalContents> read_journal(const std::filesystem::path& file);
Expected<JournalContents> parse_journal(std::istream& in, const std::string& name_for_messages);

}  // namespace bootstorm::engine
