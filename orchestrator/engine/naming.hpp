#pragma once
// Names of what a run creates: the run id, the run directory and the VM names (which carry the run id — the
// safety interlock of cleanup, see api::name_carries_run_id).
#include <chrono>
#include <string>
#include <string_view>

namespace bootstorm::engine {

// 6 lowercase hex digits from a non-deterministic source.
std::string new_run_id();

// Lowercase, every run of non-alphanumerics replaced by one '-', no leading/trailing '-', at most `max_len`
// characters (cut at a character boundary, trailing '-' dropped). "4x R740 16GFC" -> "4x-r740-16gfc".
// An empty result becomes "s".
std::string scenario_slug(std::string_view scenario_name, std::size_t max_len = 20);

// "bs-<run_id>-<slug>-<nnn>" with nnn zero-padded to at least 3 digits.
std::string vm_name(const std::string& run_id, const std::string& slug, int index);

// "<plan name>-<UTC yyyymmddThhmmss>-<run id>" (the plan name is made path-safe).
std::string run_directory_name(const std::string& plan_name, std::chrono::system_clock::time_point started,
                               const std::string& run_id);

}  // namespace bootstorm::engine
