#include "results/summary.hpp"

#include <gtest/gtest.h>

#include "results/summary_json.hpp"

namespace bootstorm::results {
namespace {

using api::Milestone;

VmRecord vm(const std::string& scenario, const std::string& name, const std::string& host, double start,
            std::optional<double> ready, double running, double clone = -1) {
  VmRecord v;
  v.scenario = scenario;
  v.name = name;
  v.host = host;
  v.start_requested_unix_s = start;
  v.clone_s = clone;
  v.milestones[Milestone::start_requested] = MilestoneRecord{0, 0, "client", start, ""};
  v.milestones[Milestone::running] = MilestoneRecord{running, 0.5, "poll", start + running, ""};
  if (ready) {
    v.milestones[Milestone::guest_agent] = MilestoneRecord{*ready, 1.0, "poll", start + *ready, ""};
    v.ready_s = ready;
    v.status = "ready";
  } else {
    v.status = "failed";
    v.reason = "timeout waiting for guest_agent after 600 s";
  }
  return v;
}

RunRecord record() {
  RunRecord r;
  r.run_id = "abc123";
  r.plan_name = "p";
  r.platform = "vsphere";
  r.simulated = true;
  r.lab = "tolly-2024";
  r.ready_signal = "guest_agent";
  r.started_at = "2026-11-30T10:00:00.000Z";
  r.ended_at = "2026-11-30T10:05:00.000Z";
  r.outcome = "completed";
  ScenarioRecord a{"A", 1, 3, 0, 1.5, 1000, 12, {}};
  ScenarioRecord b{"B", 1, 2, 1, 0.5, 2000, 7, {"one clone failed"}};
  r.scenarios = {a, b};
  // A: all ready; first start at 1000.0, last ready at 1000.2 + 12 = 1012.2 => 12.2 s.
  r.vms.push_back(vm("A", "a1", "h1", 1000.0, 10.0, 2.0, 30));
  r.vms.push_back(vm("A", "a2", "h2", 1000.1, 11.0, 2.5, 40));
  r.vms.push_back(vm("A", "a3", "h2", 1000.2, 12.0, 3.0));
  // B: one of two ready.
  r.vms.push_back(vm("B", "b1", "h3", 2000.0, 5.0, 1.0));
  r.vms.push_back(vm("B", "b2", "h3", 2000.0, std::nullopt, 1.5));
  r.slo = {SloRecord{"ready", "p95", 11.85, false}, SloRecord{"ready", "ready_fraction", 1.0, true},
           SloRecord{"beacon", "mean", 100, false}, SloRecord{"ready", "time_to_all_ready", 20, false}};
  return r;
}

TEST(Summarize, ScenarioFigures) {
  const Summary s = summarize(record());
  ASSERT_EQ(s.scenarios.size(), 2u);
  const auto& a = s.scenarios[0];
  EXPECT_EQ(a.name, "A");
  EXPECT_EQ(a.vms, 3);
  EXPECT_EQ(a.hosts, 2);  // counted from the VMs when the record has 0
  EXPECT_EQ(a.ready_milestone, "guest_agent");
  ASSERT_TRUE(a.time_to_all_ready_s.has_value());
  EXPECT_NEAR(*a.time_to_all_ready_s, 12.2, 1e-9);
  EXPECT_NEAR(*a.clone_mean_s, 35.0, 1e-12);
  EXPECT_DOUBLE_EQ(*a.ready().mean, 11.0);
  EXPECT_DOUBLE_EQ(*a.ready().p95, 11.9);  // h = 1.9
  EXPECT_DOUBLE_EQ(a.ready().resolution_s, 1.0);
  ASSERT_EQ(a.milestones.size(), 3u);  // ready, running, guest_agent (boot order)
  EXPECT_EQ(a.milestones[0].name, "ready");
  EXPECT_EQ(a.milestones[1].name, "running");
  EXPECT_EQ(a.milestones[2].name, "guest_agent");
  EXPECT_DOUBLE_EQ(*a.find("running")->mean, 2.5);
  EXPECT_DOUBLE_EQ(a.find("running")->resolution_s, 0.5);
  EXPECT_TRUE(a.failures.empty());

  const auto& b = s.scenarios[1];
  EXPECT_FALSE(b.time_to_all_ready_s.has_value());  // not all ready
  EXPECT_FALSE(b.clone_mean_s.has_value());
  EXPECT_DOUBLE_EQ(b.ready().ready_fraction, 0.5);
  EXPECT_EQ(b.find("running")->count, 2u);
  ASSERT_EQ(b.failures.size(), 1u);
  EXPECT_EQ(b.failures[0].vm, "b2");
  EXPECT_EQ(b.failures[0].reason, "timeout waiting for guest_agent after 600 s");
  EXPECT_EQ(b.errors, std::vector<std::string>{"one clone failed"});
  EXPECT_EQ(b.boot_times_s, std::vector<double>{5.0});
}

TEST(Summarize, SloEvaluation) {
  const Summary s = summarize(record());
  ASSERT_EQ(s.slo.size(), 8u);  // 4 SLOs x 2 scenarios
  auto find = [&](const std::string& sc, const std::string& stat, const std::string& ms = "ready") {
    for (const auto& r : s.slo)
      if (r.scenario == sc && r.stat == stat && r.milestone == ms) return r;
    ADD_FAILURE() << sc << " " << stat;
    return SloResult{};
  };
  EXPECT_FALSE(find("A", "p95").pass);  // 11.9 > 11.85
  EXPECT_DOUBLE_EQ(*find("A", "p95").value, 11.9);
  EXPECT_TRUE(find("B", "p95").pass);  // 5.0
  EXPECT_TRUE(find("A", "ready_fraction").pass);
  EXPECT_FALSE(find("B", "ready_fraction").pass);
  EXPECT_DOUBLE_EQ(*find("B", "ready_fraction").value, 0.5);
  EXPECT_FALSE(find("A", "mean", "beacon").value.has_value());  // nobody reached beacon
  EXPECT_FALSE(find("A", "mean", "beacon").pass);
  EXPECT_TRUE(find("A", "time_to_all_ready").pass);
  EXPECT_FALSE(find("B", "time_to_all_ready").pass);
  EXPECT_FALSE(s.slo_passed());
}

TEST(SummaryJson, SchemaVersionOneFieldsAndRoundTrip) {
  const Summary s = summarize(record());
  const auto j = summary_to_json(s);
  EXPECT_EQ(j["schemaVersion"], 1);
  for (const char* k : {"id", "plan", "platform", "simulated", "startedAt", "endedAt"})
    EXPECT_TRUE(j["run"].contains(k)) << k;
  const auto& a = j["scenarios"][0];
  for (const char* k : {"name", "repeat", "vms", "hosts", "fireSkewMs", "apiRequests", "timeToAllReadyS",
                        "cloneMeanS", "readyMilestone", "milestones", "failures"})
    EXPECT_TRUE(a.contains(k)) << k;
  for (const char* k : {"count", "readyFraction", "meanS", "stdevS", "minS", "p50S", "p90S", "p95S", "p99S",
                        "maxS", "resolutionS"})
    EXPECT_TRUE(a["milestones"]["ready"].contains(k)) << k;
  EXPECT_EQ(j["scenarios"][0]["milestones"].begin().key(), "ready");
  EXPECT_TRUE(j["scenarios"][1]["timeToAllReadyS"].is_null());
  EXPECT_EQ(j["scenarios"][1]["failures"][0]["vm"], "b2");
  EXPECT_DOUBLE_EQ(j["scenarios"][0]["timeToAllReadyS"].get<double>(), 12.2);
  EXPECT_TRUE(j["slo"][1].contains("min"));  // ready_fraction is a minimum
  EXPECT_TRUE(j["slo"][0].contains("max"));

  auto back = summary_from_json(nlohmann::json::parse(summary_to_json_text(s)));
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_EQ(summary_to_json(*back).dump(), j.dump());
}

// What the platform did around the boots: provisioning time, the batched power-on with what it did not
// attempt, the spread of the per-VM power-on confirmations, and the VMs DRS placed elsewhere.
TEST(Summarize, PlatformFactsAndTheirRoundTrip) {
  RunRecord r = record();
  r.clone_kind = "linked";
  ScenarioRecord& a = r.scenarios[0];
  a.provision_begin_mono = 1.25;
  a.provision_end_mono = 4.75;
  a.power_on_calls = 1;
  a.storm_api_requests = 5;
  a.not_attempted = {NotAttempted{"a4", "InvalidPowerState: the VM is powered on"}};
  a.moves = {HostMove{"a2", "h1", "h2"}};
  // Confirmed at 1000.1, 1000.4 and 1000.25: spread 300 ms, whatever the order of the requests.
  const double acks[] = {0.1, 0.3, 0.05};
  for (int i = 0; i < 3; ++i)
    r.vms[i].milestones[Milestone::start_acknowledged] =
        MilestoneRecord{acks[i], 0, "client", r.vms[i].start_requested_unix_s + acks[i], ""};
  const Summary s = summarize(r);
  EXPECT_EQ(s.run.clone_kind, "linked");
  const auto& sa = s.scenarios[0];
  ASSERT_TRUE(sa.provisioning_s);
  EXPECT_DOUBLE_EQ(*sa.provisioning_s, 3.5);
  ASSERT_TRUE(sa.power_on_spread_ms);
  EXPECT_NEAR(*sa.power_on_spread_ms, 300.0, 1e-6);
  EXPECT_EQ(sa.power_on_calls, 1);
  EXPECT_EQ(sa.storm_api_requests, std::optional<std::uint64_t>(5));
  EXPECT_EQ(sa.not_attempted, a.not_attempted);
  EXPECT_EQ(sa.moves, a.moves);
  // A scenario without any of it has none of them (and summary.json no such fields).
  const auto& sb = s.scenarios[1];
  EXPECT_FALSE(sb.provisioning_s);
  EXPECT_FALSE(sb.power_on_spread_ms);
  const auto j = summary_to_json(s);
  EXPECT_EQ(j["run"]["cloneKind"], "linked");
  EXPECT_DOUBLE_EQ(j["scenarios"][0]["provisioningS"].get<double>(), 3.5);
  EXPECT_EQ(j["scenarios"][0]["hostMoves"][0]["plannedHost"], "h1");
  EXPECT_EQ(j["scenarios"][0]["notAttempted"][0]["vm"], "a4");
  EXPECT_EQ(j["scenarios"][0]["stormApiRequests"], 5);
  for (const char* k :
       {"provisioningS", "powerOnSpreadMs", "powerOnCalls", "notAttempted", "hostMoves", "stormApiRequests"})
    EXPECT_FALSE(j["scenarios"][1].contains(k)) << k;
  auto back = summary_from_json(nlohmann::json::parse(summary_to_json_text(s)));
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_EQ(summary_to_json(*back).dump(), j.dump());
}

TEST(Summarize, WhatThePlatformIsAndWhereTheFiguresCameFrom) {
  RunRecord r = record();
  r.simulated = false;
  // A real endpoint, before the platform says anything: measured, and no "platform" section.
  Summary plain = summarize(r);
  EXPECT_EQ(plain.run.source, "measured");
  EXPECT_FALSE(summary_to_json(plain).contains("platform"));

  r.simulated = true;  // a lab, whatever told (the endpoint or the platform itself)
  r.facts.product = "Kubernetes";
  r.facts.version = "v1.27.6";
  r.facts.simulator = "bootstorm lab small";
  r.facts.components = {{"KubeVirt", "v1.1.1"}};
  r.facts.hosts = {{"worker-0", "Skylake-Server", "v1.27.6"}};
  r.api_budget = ApiBudgetRecord{50, 64, 0, 0};
  const Summary s = summarize(r);
  EXPECT_EQ(s.run.source, "simulated");
  const auto j = summary_to_json(s);
  EXPECT_EQ(j["run"]["source"], "simulated");
  EXPECT_EQ(j["run"]["simulated"], true);  // kept for readers from before "source"
  EXPECT_EQ(j["platform"]["simulator"], "bootstorm lab small");
  EXPECT_EQ(j["platform"]["components"]["KubeVirt"], "v1.1.1");
  EXPECT_EQ(j["platform"]["hosts"][0]["cpuModel"], "Skylake-Server");
  EXPECT_EQ(j["platform"]["apiBudget"]["startConcurrency"], 0);
  EXPECT_FALSE(j["platform"]["apiBudget"].contains("startsPerConnection"));
  auto back = summary_from_json(nlohmann::json::parse(summary_to_json_text(s)));
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_EQ(back->run.facts, r.facts);
  EXPECT_EQ(back->run.api_budget, r.api_budget);
  EXPECT_EQ(summary_to_json(*back).dump(), j.dump());

  // A summary from before "source" reads it from "simulated".
  auto old = nlohmann::json::parse(summary_to_json_text(s));
  old["run"].erase("source");
  auto old_back = summary_from_json(old);
  ASSERT_TRUE(old_back.has_value());
  EXPECT_EQ(old_back->run.source, "simulated");
}

// What the answers said travels from the journal's record to summary.json and back unchanged; a run that
// recorded none of it has no "apiAnswers".
TEST(SummaryJson, ApiAnswersRoundTrip) {
  RunRecord r = record();
  http::ApiStats answers;
  answers.note_answer(429, {{"Retry-After", "1"}, {"X-Kubernetes-PF-PriorityLevel-UID", "pl-1"}});
  answers.note_answer(200, {{"X-Kubernetes-PF-FlowSchema-UID", "fs-1"}, {"Warning", R"(299 - "w1")"}});
  answers.tasks = 4;
  answers.tasks_queued = 2;
  answers.task_queue_s = 1.25;
  r.scenarios[0].api_answers = answers;
  const auto j = summary_to_json(summarize(r));
  const auto& a = j["scenarios"][0]["apiAnswers"];
  EXPECT_EQ(a["answers"], 2);
  EXPECT_EQ(a["throttled"], 1);
  EXPECT_EQ(a["retryAfterAnswers"], 1);
  EXPECT_EQ(a["priorityLevels"]["pl-1"], 1);
  EXPECT_EQ(a["flowSchemas"]["fs-1"], 1);
  EXPECT_EQ(a["tasksQueued"], 2);
  EXPECT_EQ(a["warnings"]["w1"], 1);
  EXPECT_FALSE(j["scenarios"][1].contains("apiAnswers"));
  auto back = summary_from_json(j);
  ASSERT_TRUE(back.has_value()) << back.error().what();
  EXPECT_EQ(summary_to_json(*back).dump(), j.dump());
}

TEST(SummaryJson, RejectsOtherSchemas) {
  auto r = summary_from_json(nlohmann::json{{"schemaVersion", 2}, {"scenarios", nlohmann::json::array()}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
  auto bad = summary_from_json(nlohmann::json::parse(
      R"({"schemaVersion":1,"run":{},"scenarios":[{"name":"x","vms":"three","milestones":{}}]})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("scenarios[0].vms"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace bootstorm::results
