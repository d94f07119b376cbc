#pragma once
// `bootstorm merge RUN... --out DIR`: combines the run directories of the shards of one sharded run
// (shard.hpp) into one run directory. It checks that they belong together (same run id, plan digest,
// start-at, storm spacing, selection and shard count; distinct shard indices; disjoint VMs), then writes
// DIR/plan.yaml and one merged DIR/journal.jsonl: every shard's events in wall-clock order (each tagged with
// "shard" and its "mono" moved onto one common origin), with run_started / scenario_started / storm_fired /
// scenario_ended / run_ended combined across shards (VM counts and API requests summed; the fire skew taken
// from the wall clocks of all shards' first and last start requests). The outputs are then rendered from that
// journal exactly as `bootstorm report` renders them, so every statistic is recomputed from the union of the
// VMs — never averaged from the shards' summaries.
#include <filesystem>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::engine {

struct MergeOptions {
  bool allow_missing = false;  // merge even when some shards' directories are not given (warned)
};

struct MergedShard {
  int index = 0;
  std::filesystem::path dir;
  std::string outcome;  // the shard's run_ended outcome ("" when it has none)
  std::size_t vms = 0;  // VMs the shard created or failed to create
};

struct MergeResult {
  std::filesystem::path out_dir;
  std::string run_id;
  std::string plan;
  int shard_count = 0;
  std::vector<MergedShard> shards;  // by index
  std::vector<int> missing;         // indices not given (only with allow_missing)
  std::vector<std::string> warnings;
  std::size_t events = 0;  // lines of the merged journal
  std::size_t vms = 0;
};

// Writes out_dir (created; it must not exist or be empty) with plan.yaml and journal.jsonl. Error, naming the
// directory and the field, when the runs do not belong to one sharded run.
Expected<MergeResult> merge_shard_runs(const std::vector<std::filesystem::path>& run_dirs,
                                       const std::filesystem::path& out_dir,
                                       const MergeOptions& options = {});

}  // namespace bootstorm::engine
