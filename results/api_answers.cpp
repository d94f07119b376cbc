#include "results/api_answers.hpp"

#include <nlohmann/json.hpp>

namespace bootstorm::results {

namespace {

using nlohmann::json;

std::uint64_t count_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

double seconds_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::map<std::string, std::uint64_t> counts_at(const json& j, const char* key) {
  std::map<std::string, std::uint64_t> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return out;
  for (const auto& [uid, n] : it->items())
    if (n.is_number_unsigned()) out[uid] = n.get<std::uint64_t>();
  return out;
}

}  // namespace

json api_answers_json(const http::ApiStats& a) {
  json j = {{"answers", a.answers},
            {"throttled", a.throttled},
            {"serverErrors", a.server_errors},
            {"retryAfterAnswers", a.asked_to_wait},
            {"retryAfterS", a.retry_after_s}};
  if (!a.flow_schemas.empty()) j["flowSchemas"] = a.flow_schemas;
  if (!a.priority_levels.empty()) j["priorityLevels"] = a.priority_levels;
  if (!a.statuses.empty()) j["statuses"] = a.statuses;
  if (!a.warnings.empty()) j["warnings"] = a.warnings;
  if (a.tasks > 0) {
    j["tasks"] = a.tasks;
    j["tasksQueued"] = a.tasks_queued;
    j["taskQueueS"] = a.task_queue_s;
  }
  return j;
}

http::ApiStats api_answers_from_json(const json& j) {
  http::ApiStats a;
  if (!j.is_object()) return a;
  a.answers = count_at(j, "answers");
  a.throttled = count_at(j, "throttled");
  a.server_errors = count_at(j, "serverErrors");
  a.asked_to_wait = count_at(j, "retryAfterAnswers");
  a.retry_after_s = seconds_at(j, "retryAfterS");
  a.flow_schemas = counts_at(j, "flowSchemas");
  a.priority_levels = counts_at(j, "priorityLevels");
  a.statuses = counts_at(j, "statuses");
  a.warnings = counts_at(j, "warnings");
  a.tasks = count_at(j, "tasks");
  a.tasks_queued = count_at(j, "tasksQueued");
  a.task_queue_s = seconds_at(j, "taskQueueS");
  return a;
}

}  // namespace bootstorm::results
