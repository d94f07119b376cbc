#pragma once
// What an API client counts of its own traffic (a provider's, a migration's), for summary.json
// ("apiRequests", "apiAnswers") and the budget tests: requests and retries, and what the server's answers
// said about its load. A virt-controller that paces itself sends no 429, so these are only half of the
// control plane's story; the phases are the other half (results/phases.hpp).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bootstorm::http {

// API Priority and Fairness: the Kubernetes API server names, on each answer, the FlowSchema that classified
// the request and the priority level that queued it (by UID).
inline constexpr std::string_view kFlowSchemaHeader = "X-Kubernetes-PF-FlowSchema-UID";
inline constexpr std::string_view kPriorityLevelHeader = "X-Kubernetes-PF-PriorityLevel-UID";

struct ApiStats {
  std::uint64_t requests = 0;
  std::uint64_t errors = 0;
  std::uint64_t retries = 0;

  // Every answer counts, those the HTTP client retried included.
  std::uint64_t answers = 0;
  std::uint64_t throttled = 0;                           // 429 Too Many Requests
  std::uint64_t server_errors = 0;                       // 5xx
  std::uint64_t asked_to_wait = 0;                       // answers with a Retry-After header
  double retry_after_s = 0;                              // the seconds those asked for, in all
  std::map<std::string, std::uint64_t> flow_schemas;     // answers per FlowSchema UID
  std::map<std::string, std::uint64_t> priority_levels;  // answers per priority level UID
  std::map<std::string, std::uint64_t> statuses;         // answers per HTTP status ("200", "429")
  // Warnings the server sent with its answers (Warning headers: a field it dropped, a deprecated API), by
  // text, each counted once per answer that carried it.
  std::map<std::string, std::uint64_t> warnings;

  // vCenter tasks followed to their end, and those seen waiting in vCenter's queue (info.state "queued")
  // before they ran, with the time they were seen waiting.
  std::uint64_t tasks = 0;
  std::uint64_t tasks_queued = 0;
  double task_queue_s = 0;

  // Counts one answer; `headers` are its (name, value) pairs, names in any case.
  void note_answer(int status, const std::vector<std::pair<std::string, std::string>>& headers);
  // What was counted after `earlier`, a snapshot of the same counters.
  ApiStats since(const ApiStats& earlier) const;
  // Another account added to this one (shards of one run).
  ApiStats& operator+=(const ApiStats& more);
};

}  // namespace bootstorm::http
