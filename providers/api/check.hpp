#pragma once
// What `bootstorm check` reports, and `run` and `migrate` journal before anything is created: one result per
// question asked of the platform, pass / warn / fail with what to do, or "unknown" when the platform cannot
// answer it (never a silent pass). Plain data: no Asio.
#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::api {

enum class CheckStatus { pass, warn, fail, unknown };
std::string_view to_string(CheckStatus status);

struct CheckResult {
  std::string name;  // what was checked: "privileges", "golden VM", "host memory", ...
  CheckStatus status = CheckStatus::pass;
  std::string finding;  // what was found, with the figures ("3 of 3 hosts connected, none in maintenance")
  std::string advice;   // what to do (warn, fail, unknown); empty for a pass
};

// What the plan will ask of the platform, resolved by the engine.
struct CheckRequest {
  // Every placement host / node with the most VMs any one scenario places on it at once.
  std::map<std::string, int> vms_per_host;
  std::size_t largest_storm = 0;  // VMs of the largest scenario
  std::size_t total_vms = 0;      // VMs of the whole run (clones that exist together: one scenario at a time)
  std::chrono::milliseconds storm_timeout{0};
  std::string ready_signal;  // the milestone that counts as ready (guest_agent, ip_assigned, beacon, ...)
};

// A result, each field named in order; and a failed one carrying an error's message and hint.
CheckResult check_result(std::string name, CheckStatus status, std::string finding, std::string advice = {});
CheckResult failed_check(std::string name, const Error& error);

// The worst status of `results` (pass < unknown < warn < fail); pass for none.
CheckStatus worst(const std::vector<CheckResult>& results);

}  // namespace bootstorm::api
