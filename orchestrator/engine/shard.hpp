#pragma once
// Sharded runs (`bootstorm run PLAN --shard INDEX/COUNT --start-at RFC3339`): several workers each run a
// deterministic, disjoint part of one plan and fire at one agreed wall-clock instant; `bootstorm merge`
// combines their run directories.
//
// Partition: the engine numbers every scenario's VMs 1..N per repeat exactly as an unsharded run does (the
// number is the VM name's suffix, see naming.hpp); VM number k belongs to shard (k - 1) mod COUNT. So every
// shard takes a round-robin slice of every scenario (and of every host of its placement), the union over
// INDEX = 0..COUNT-1 is exactly the unsharded run's VMs, and their names are the unsharded names as long as
// the run id is shared.
//
// Run id: all shards of a run must share it (it is in every VM name and label, and `merge` checks it). It is
// either given (--run-id) or derived from the resolved plan and the start instant, so workers started with
// the same plan and --start-at agree on it without talking to each other.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace bootstorm::engine {

struct ShardSpec {
  int index = 0;  // 0-based
  int count = 1;  // 1: the whole plan
  bool sharded() const { return count > 1; }
  // True when VM number `vm_number` (1-based, as in its name) belongs to this shard.
  bool owns(int vm_number) const { return count <= 1 || (vm_number - 1) % count == index; }
  // How many of VM numbers 1..vms this shard owns.
  int owned_of(int vms) const {
    if (count <= 1) return vms;
    return vms > index ? (vms - 1 - index) / count + 1 : 0;
  }
  std::string to_string() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "INDEX/COUNT", 0 <= INDEX < COUNT, 1 <= COUNT <= 10000. The message says which part is wrong.
Expected<ShardSpec> parse_shard(std::string_view text);

// The VM number of a bootstorm VM name ("bs-<run>-<slug>-017" -> 17); nullopt when the name has no numeric
// suffix.
std::optional<int> vm_number_from_name(std::string_view name);

// Lowercase hex SHA-256 of the resolved plan (plan::to_yaml): shards must have run the same plan.
std::string plan_digest(std::string_view plan_yaml);

// 6 lowercase hex digits from the plan digest and the start instant (ms): the same for every worker of one
// sharded run, different for another start instant.
std::string derive_run_id(std::string_view plan_digest_hex, std::chrono::system_clock::time_point start_at);

// A run id usable in VM names and Kubernetes label values: 1..16 characters of [a-z0-9].
Expected<void> validate_run_id(std::string_view run_id);

}  // namespace bootstorm::engine
