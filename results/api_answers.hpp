#pragma once
// What the platform's answers said during a scenario (http::ApiStats counted after its start): 429 and 5xx,
// Retry-After, API Priority and Fairness, the server's warnings, vCenter's task queue. One JSON form for the
// journal's scenario_ended ("apiAnswers"), summary.json's scenarios and the merge of shards.
#include <nlohmann/json_fwd.hpp>

#include "protocol/http/api_stats.hpp"

namespace bootstorm::results {

nlohmann::json api_answers_json(const http::ApiStats& answers);
// Reads what api_answers_json wrote; fields it does not find stay zero (a malformed value reads as zero: the
// counters are an account, not an input).
http::ApiStats api_answers_from_json(const nlohmann::json& j);

}  // namespace bootstorm::results
