#include "orchestrator/engine/journal.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "common/log.hpp"
#include "orchestrator/engine/journal_fold.hpp"
#include "tests/unit/orchestrator/engine/test_support.hpp"

namespace bootstorm::engine {
namespace {

using nlohmann::json;

void write_sample_run(Journal& j) {
  j.write("run_started", {{"runId", "abc123"},
                          {"plan", "p"},
                          {"platform", "vsphere"},
                          {"simulated", true},
                          {"lab", "tolly-2024"},
                          {"readySignal", "guest_agent"},
                          {"planYaml", "name: p\n"},
                          {"cloneKind", "linked"},
                          {"slo", json::array({{{"milestone", "ready"}, {"stat", "p95"}, {"max", 60.0}}})}});
  j.write("scenario_started", {{"scenario", "S"}, {"repeat", 1}, {"vms", 3}, {"hosts", 1}});
  j.write("vm_created", {{"scenario", "S"},
                         {"repeat", 1},
                         {"vm", "bs-abc123-s-001"},
                         {"id", "vm-1"},
                         {"host", "h1"},
                         {"cloneS", 1.5}});
  j.write("vm_created", {{"scenario", "S"},
                         {"repeat", 1},
                         {"vm", "bs-abc123-s-002"},
                         {"id", "vm-2"},
                         {"host", "h1"},
                         {"cloneS", 1.25}});
  j.write("vm_startable",
          {{"scenario", "S"}, {"repeat", 1}, {"vm", "bs-abc123-s-001"}, {"cloneMethod", "linked"}});
  j.write("vm_provision_failed", {{"scenario", "S"},
                                  {"repeat", 1},
                                  {"vm", "bs-abc123-s-003"},
                                  {"host", "h1"},
                                  {"reason", "datastore full"}});
  j.write("storm_fired",
          {{"scenario", "S"}, {"repeat", 1}, {"fireSkewMs", 2.5}, {"firstWall", 1796032800.0}});
  // From the provider: the batched power-on (one VM not attempted, named by id) and a DRS move, twice.
  j.write("power_on_batch", {{"scenario", "S"},
                             {"repeat", 1},
                             {"call", "PowerOnMultiVM_Task"},
                             {"vms", 2},
                             {"attempted", json::array({"vm-1"})},
                             {"notAttempted", json::array({{{"id", "vm-2"}, {"reason", "NoPermission"}}})}});
  for (int i = 0; i < 2; ++i)
    j.write(
        "vm_moved",
        {{"scenario", "S"}, {"repeat", 1}, {"vm", "bs-abc123-s-001"}, {"plannedHost", "h1"}, {"host", "h2"}});
  for (auto [vm, m, off] : std::vector<std::tuple<std::string, std::string, double>>{
           {"bs-abc123-s-001", "start_requested", 0.0},
           {"bs-abc123-s-001", "running", 3.0},
           {"bs-abc123-s-001", "guest_agent", 7.5},
           {"bs-abc123-s-001", "guest_agent", 9.0},  // duplicate: ignored
           {"bs-abc123-s-002", "start_requested", 0.0},
           {"bs-abc123-s-002", "running", 4.0}}) {
    j.write("milestone", {{"scenario", "S"},
                          {"repeat", 1},
                          {"vm", vm},
                          {"milestone", m},
                          {"offsetS", off},
                          {"resolutionS", 0.5},
                          {"source", "poll"},
                          {"wall", 1796032800.0 + off},
                          {"detail", ""}});
  }
  j.write("vm_failed",
          {{"vm", "bs-abc123-s-002"}, {"reason", "timeout waiting for guest_agent after 600 s"}});
  j.write("scenario_ended",
          {{"scenario", "S"},
           {"repeat", 1},
           {"apiRequests", 42},
           {"stormApiRequests", 5},
           {"apiAnswers", {{"answers", 40}, {"throttled", 3}, {"priorityLevels", {{"pl", 40}}}}},
           {"errors", json::array({"bs-abc123-s-003: datastore full"})}});
  j.write("vm_deleted", {{"vm", "bs-abc123-s-001"}, {"id", "vm-1"}});
}

TEST(Journal, ReplayRebuildsTheRunRecord) {
  test::ScratchDir dir;
  auto path = dir.path() / "journal.jsonl";
  {
    auto j = Journal::open(path);
    ASSERT_TRUE(j) << j.error().what();
    write_sample_run(**j);
    (*j)->write("run_ended", {{"outcome", "failed"}});
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto c = read_journal(path);
  ASSERT_TRUE(c) << c.error().what();
  const auto& r = c->record;
  EXPECT_TRUE(c->has_run_ended);
  EXPECT_FALSE(c->truncated_tail);
  EXPECT_EQ(r.run_id, "abc123");
  EXPECT_EQ(r.platform, "vsphere");
  EXPECT_TRUE(r.simulated);
  EXPECT_EQ(r.lab, "tolly-2024");
  EXPECT_EQ(r.outcome, "failed");
  EXPECT_EQ(r.plan_yaml, "name: p\n");
  ASSERT_EQ(r.slo.size(), 1u);
  EXPECT_EQ(r.slo[0].stat, "p95");
  EXPECT_DOUBLE_EQ(r.slo[0].max, 60.0);
  ASSERT_EQ(r.scenarios.size(), 1u);
  EXPECT_EQ(r.scenarios[0].vms, 3);
  EXPECT_DOUBLE_EQ(r.scenarios[0].fire_skew_ms, 2.5);
  EXPECT_EQ(r.scenarios[0].api_requests, 42u);
  EXPECT_EQ(r.scenarios[0].storm_api_requests, std::optional<std::uint64_t>(5));
  EXPECT_EQ(r.clone_kind, "linked");
  // Provisioning: from scenario_started to the last VM created or failed, on the journal's clock.
  ASSERT_TRUE(r.scenarios[0].provision_begin_mono && r.scenarios[0].provision_end_mono);
  EXPECT_GE(*r.scenarios[0].provision_end_mono, *r.scenarios[0].provision_begin_mono);
  EXPECT_EQ(r.scenarios[0].power_on_calls, 1);
  ASSERT_EQ(r.scenarios[0].not_attempted.size(), 1u);
  EXPECT_EQ(r.scenarios[0].not_attempted[0].vm, "bs-abc123-s-002");  // the VM's name, from its id
  EXPECT_EQ(r.scenarios[0].not_attempted[0].reason, "NoPermission");
  ASSERT_EQ(r.scenarios[0].moves.size(), 1u);  // reported twice, kept once
  EXPECT_EQ(r.scenarios[0].moves[0].host, "h2");
  ASSERT_EQ(r.scenarios[0].errors.size(), 1u);
  ASSERT_EQ(r.vms.size(), 3u);
  EXPECT_EQ(r.vms[0].status, "ready");
  ASSERT_TRUE(r.vms[0].ready_s);
  EXPECT_DOUBLE_EQ(*r.vms[0].ready_s, 7.5);  // first observation wins
  EXPECT_DOUBLE_EQ(r.vms[0].clone_s, 1.5);
  EXPECT_EQ(r.vms[0].clone_method, "linked");
  EXPECT_EQ(r.vms[1].clone_method, "");  // the platform did not say
  ASSERT_TRUE(r.scenarios[0].api_answers);
  EXPECT_EQ(r.scenarios[0].api_answers->throttled, 3u);
  EXPECT_EQ(r.scenarios[0].api_answers->priority_levels.at("pl"), 40u);
  EXPECT_DOUBLE_EQ(r.vms[0].start_requested_unix_s, 1796032800.0);
  EXPECT_EQ(r.vms[1].status, "failed");
  EXPECT_EQ(r.vms[1].reason, "timeout waiting for guest_agent after 600 s");
  EXPECT_FALSE(r.vms[1].ready_s);
  EXPECT_EQ(r.vms[2].status, "failed");
  EXPECT_EQ(r.vms[2].reason, "datastore full");
  // Created and not deleted: only vm 2 (vm 1 deleted, vm 3 never created).
  ASSERT_EQ(c->undeleted.size(), 1u);
  EXPECT_EQ(c->undeleted[0].name, "bs-abc123-s-002");
  EXPECT_EQ(c->undeleted[0].id, "vm-2");
}

TEST(Journal, EveryLineHasTimeMonoAndType) {
  test::ScratchDir dir;
  auto path = dir.path() / "journal.jsonl";
  {
    auto j = Journal::open(path);
    ASSERT_TRUE(j);
    write_sample_run(**j);
  }
  std::istringstream in(test::read_file(path));
  std::string line;
  double last_mono = -1;
  int n = 0;
  while (std::getline(in, line)) {
    auto e = json::parse(line);
    ASSERT_TRUE(e.contains("t") && e.contains("mono") && e.contains("type")) << line;
    EXPECT_EQ(e["t"].get<std::string>().size(), 24u);  // 2026-11-30T10:00:00.000Z
    EXPECT_GE(e["mono"].get<double>(), last_mono);
    last_mono = e["mono"].get<double>();
    ++n;
  }
  EXPECT_EQ(n, 19);  // every event write_sample_run wrote
}

TEST(Journal, TruncatedLastLineIsTolerated) {
  test::ScratchDir dir;
  auto path = dir.path() / "journal.jsonl";
  {
    auto j = Journal::open(path);
    ASSERT_TRUE(j);
    write_sample_run(**j);
  }
  // A crash while writing: half a line at the end, without its newline.
  {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << R"({"t":"2026-11-30T10:00:00.000Z","mono":1.0,"type":"milestone","vm":"bs-abc123-s-002","milest)";
  }
  auto c = read_journal(path);
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_TRUE(c->truncated_tail);
  EXPECT_TRUE(c->warnings.empty());
  EXPECT_FALSE(c->has_run_ended);
  EXPECT_EQ(c->record.vms.size(), 3u);
  EXPECT_EQ(c->record.outcome, "");
}

TEST(Journal, CorruptMiddleLineIsSkippedWithAWarning) {
  std::string text =
      R"({"t":"x","mono":0,"type":"run_started","runId":"abc123","readySignal":"running"})"
      "\n"
      "garbage\n"
      R"({"t":"x","mono":1,"type":"scenario_started","scenario":"S","repeat":1,"vms":1,"hosts":1})"
      "\n";
  std::istringstream in(text);
  auto c = parse_journal(in, "j.jsonl");
  ASSERT_TRUE(c);
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_NE(c->warnings[0].find("j.jsonl:2"), std::string::npos);
  EXPECT_EQ(c->record.scenarios.size(), 1u);
}

TEST(Journal, WithoutRunStartedIsAnError) {
  std::istringstream in(R"({"type":"scenario_started"})"
                        "\n");
  auto c = parse_journal(in, "j.jsonl");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("run_started"), std::string::npos);
}

TEST(Journal, SecretsNeverReachTheFile) {
  log::register_secret("hunter2-very-secret");
  test::ScratchDir dir;
  auto path = dir.path() / "journal.jsonl";
  {
    auto j = Journal::open(path);
    ASSERT_TRUE(j);
    (*j)->write("run_error", {{"message", "login failed for password hunter2-very-secret"},
                              {"nested", {{"list", json::array({"x hunter2-very-secret y"})}}}});
  }
  auto text = test::read_file(path);
  EXPECT_EQ(text.find("hunter2-very-secret"), std::string::npos);
  EXPECT_NE(text.find("***"), std::string::npos);
}

TEST(Journal, FlushesWithinTheFlushIntervalWithoutSync) {
  test::ScratchDir dir;
  auto path = dir.path() / "journal.jsonl";
  auto j = Journal::open(path, std::chrono::steady_clock::now(), std::chrono::milliseconds(20));
  ASSERT_TRUE(j);
  (*j)->write("run_started", {{"runId", "abc123"}});
  // The background flusher must make the line visible to other readers without sync() or close.
  std::string text;
  for (int i = 0; i < 200 && text.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    text = test::read_file(path);
  }
  EXPECT_NE(text.find("run_started"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm::engine
