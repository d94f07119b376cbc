// ApiStats: what the answers said, counted and subtracted.
#include "protocol/http/api_stats.hpp"

#include <gtest/gtest.h>

namespace {

using bootstorm::http::ApiStats;

TEST(ApiStats, CountsThrottlingServerErrorsRetryAfterAndPriorityLevels) {
  ApiStats s;
  s.note_answer(200,
                {{"x-kubernetes-pf-flowschema-uid", "fs-1"}, {"X-Kubernetes-PF-PriorityLevel-UID", "pl-1"}});
  s.note_answer(429, {{"Retry-After", " 2 "}, {"X-Kubernetes-PF-PriorityLevel-UID", "pl-1"}});
  s.note_answer(503,
                {{"retry-after", "Fri, 31 Dec 1999 23:59:59 GMT"}});  // asks to wait, for how long unknown
  s.note_answer(500, {});
  s.note_answer(404, {{"X-Kubernetes-PF-PriorityLevel-UID", ""}});
  EXPECT_EQ(s.answers, 5u);
  EXPECT_EQ(s.throttled, 1u);
  EXPECT_EQ(s.server_errors, 2u);
  EXPECT_EQ(s.asked_to_wait, 2u);
  EXPECT_DOUBLE_EQ(s.retry_after_s, 2.0);
  EXPECT_EQ(s.flow_schemas, (std::map<std::string, std::uint64_t>{{"fs-1", 1}}));
  EXPECT_EQ(s.priority_levels, (std::map<std::string, std::uint64_t>{{"pl-1", 2}}));
}

TEST(ApiStats, SinceKeepsOnlyWhatCameAfterTheSnapshotAndAddsUp) {
  ApiStats s;
  s.requests = 10;
  s.note_answer(200, {{"X-Kubernetes-PF-PriorityLevel-UID", "pl-1"}});
  s.tasks = 3;
  const ApiStats before = s;
  s.requests = 15;
  s.note_answer(429, {{"Retry-After", "1"}, {"X-Kubernetes-PF-PriorityLevel-UID", "pl-2"}});
  s.note_answer(200, {{"X-Kubernetes-PF-PriorityLevel-UID", "pl-1"}});
  s.tasks = 5;
  s.tasks_queued = 1;
  s.task_queue_s = 0.5;
  const ApiStats d = s.since(before);
  EXPECT_EQ(d.requests, 5u);
  EXPECT_EQ(d.answers, 2u);
  EXPECT_EQ(d.throttled, 1u);
  EXPECT_EQ(d.priority_levels, (std::map<std::string, std::uint64_t>{{"pl-1", 1}, {"pl-2", 1}}));
  EXPECT_EQ(d.tasks, 2u);
  EXPECT_EQ(d.tasks_queued, 1u);
  EXPECT_DOUBLE_EQ(d.task_queue_s, 0.5);
  const ApiStats nothing = before.since(before);
  EXPECT_EQ(nothing.throttled + nothing.server_errors + nothing.asked_to_wait, 0u);

  ApiStats total = d;
  total += d;
  EXPECT_EQ(total.throttled, 2u);
  EXPECT_EQ(total.priority_levels.at("pl-2"), 2u);
  EXPECT_DOUBLE_EQ(total.retry_after_s, 2.0);
}

// kube-apiserver's Warning headers: each text counted per answer that carried it, whatever the header's case
// and however many values one header holds.
TEST(ApiStats, CountsTheServersWarningsByText) {
  ApiStats s;
  s.note_answer(201, {{"Warning", R"(299 - "unknown field \"spec.bogus\"")"}});
  s.note_answer(201, {{"warning", R"(299 - "unknown field \"spec.bogus\"", 299 - "v1 Foo is deprecated")"}});
  s.note_answer(200, {});
  const ApiStats before = s;
  s.note_answer(201, {{"Warning", R"(299 - "v1 Foo is deprecated")"}});
  EXPECT_EQ(s.warnings, (std::map<std::string, std::uint64_t>{{R"(unknown field "spec.bogus")", 2},
                                                              {"v1 Foo is deprecated", 2}}));
  EXPECT_EQ(s.since(before).warnings, (std::map<std::string, std::uint64_t>{{"v1 Foo is deprecated", 1}}));
}

}  // namespace
