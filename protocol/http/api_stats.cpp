#include "protocol/http/api_stats.hpp"

#include "common/header_text.hpp"

namespace bootstorm::http {

namespace {

std::optional<std::string_view> header_of(const std::vector<std::pair<std::string, std::string>>& headers,
                                          std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (equals_ignoring_ascii_case(n, name)) return std::string_view(v);
  }
  return std::nullopt;
}

std::map<std::string, std::uint64_t> minus(const std::map<std::string, std::uint64_t>& later,
                                           const std::map<std::string, std::uint64_t>& earlier) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [key, count] : later) {
    auto it = earlier.find(key);
    const std::uint64_t before = it == earlier.end() ? 0 : it->second;
    if (count > before) out[key] = count - before;
  }
  return out;
}

}  // namespace

void ApiStats::note_answer(int status, const std::vector<std::pair<std::string, std::string>>& headers) {
  ++answers;
  ++statuses[std::to_string(status)];
  if (status == 429) ++throttled;
  if (status >= 500 && status <= 599) ++server_errors;
  if (auto wait = header_of(headers, "Retry-After")) {
    ++asked_to_wait;
    retry_after_s +=
        static_cast<double>(retry_after_delta_seconds(*wait).value_or(0));  // an HTTP-date: unknown
  }
  for (const auto& [name, value] : headers)
    if (equals_ignoring_ascii_case(name, "Warning"))
      for (auto& text : warning_texts(value)) ++warnings[std::move(text)];
  if (auto uid = header_of(headers, kFlowSchemaHeader); uid && !uid->empty())
    ++flow_schemas[std::string(*uid)];
  if (auto uid = header_of(headers, kPriorityLevelHeader); uid && !uid->empty())
    ++priority_levels[std::string(*uid)];
}

ApiStats ApiStats::since(const ApiStats& earlier) const {
  ApiStats d;
  d.requests = requests - earlier.requests;
  d.errors = errors - earlier.errors;
  d.retries = retries - earlier.retries;
  d.answers = answers - earlier.answers;
  d.throttled = throttled - earlier.throttled;
  d.server_errors = server_errors - earlier.server_errors;
  d.asked_to_wait = asked_to_wait - earlier.asked_to_wait;
  d.retry_after_s = retry_after_s - earlier.retry_after_s;
  d.flow_schemas = minus(flow_schemas, earlier.flow_schemas);
  d.priority_levels = minus(priority_levels, earlier.priority_levels);
  d.statuses = minus(statuses, earlier.statuses);
  d.warnings = minus(warnings, earlier.warnings);
  d.tasks = tasks - earlier.tasks;
  d.tasks_queued = tasks_queued - earlier.tasks_queued;
  d.task_queue_s = task_queue_s - earlier.task_queue_s;
  return d;
}

ApiStats& ApiStats::operator+=(const ApiStats& more) {
  requests += more.requests;
  errors += more.errors;
  retries += more.retries;
  answers += more.answers;
  throttled += more.throttled;
  server_errors += more.server_errors;
  asked_to_wait += more.asked_to_wait;
  retry_after_s += more.retry_after_s;
  for (const auto& [uid, n] : more.flow_schemas) flow_schemas[uid] += n;
  for (const auto& [uid, n] : more.priority_levels) priority_levels[uid] += n;
  for (const auto& [status, n] : more.statuses) statuses[status] += n;
  for (const auto& [text, n] : more.warnings) warnings[text] += n;
  tasks += more.tasks;
  tasks_queued += more.tasks_queued;
  task_queue_s += more.task_queue_s;
  return *this;
}

}  // namespace bootstorm::http
