#include "orchestrator/engine/cleanup.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "tests/unit/orchestrator/engine/fake_provider.hpp"
#include "tests/unit/orchestrator/engine/test_support.hpp"

namespace bootstorm::engine {
namespace {

struct KeptRun {
  test::ScratchDir dir;
  std::shared_ptr<test::FakeRecord> rec = std::make_shared<test::FakeRecord>();
  test::FakeBehaviour behaviour;
  plan::StormPlan plan = test::small_plan(2, 2);
  RunResult result;

  KeptRun() {
    plan.cleanup = "never";
    RunOptions o;
    o.output_dir = dir.path();
    o.plan_yaml = "name: unit-plan\n";
    o.progress = Progress::Mode::none;
    o.handle_signals = false;
    o.observe_tick = std::chrono::milliseconds(10);
    o.run_id = "0badc0";
    EngineHooks h;
    h.make_provider = test::fake_factory(behaviour, rec);
    result = RunEngine(plan, o, h).run();
  }

  EngineHooks hooks(test::FakeBehaviour b) {
    EngineHooks h;
    h.make_provider = test::fake_factory(std::move(b), rec);  // same fake platform state (rec->live)
    return h;
  }
};

TEST(Cleanup, DeletesExactlyWhatTheJournalListsAndIsIdempotent) {
  KeptRun run;
  ASSERT_EQ(run.result.exit_code, 0);
  ASSERT_EQ(run.rec->live.size(), 4u);
  run.rec->live.insert("someone-elses-vm");  // exists on the platform, not ours: never touched

  auto first = cleanup_run(run.result.run_dir, run.plan, run.hooks(run.behaviour));
  ASSERT_TRUE(first) << first.error().what();
  EXPECT_TRUE(first->ok());
  EXPECT_EQ(first->run_id, "0badc0");
  EXPECT_EQ(first->from_journal, 4u);
  EXPECT_EQ(first->deleted.size(), 4u);
  EXPECT_EQ(run.rec->live, std::set<std::string>{"someone-elses-vm"});
  auto after = read_journal(run.result.run_dir / "journal.jsonl");
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->undeleted.empty());

  // Re-running finds nothing to do and deletes nothing.
  const auto destroyed_before = run.rec->destroyed.size();
  auto second = cleanup_run(run.result.run_dir, run.plan, run.hooks(run.behaviour));
  ASSERT_TRUE(second) << second.error().what();
  EXPECT_TRUE(second->deleted.empty());
  EXPECT_EQ(second->from_journal, 0u);
  EXPECT_EQ(run.rec->destroyed.size(), destroyed_before);
  EXPECT_FALSE(second->note.empty());
}

TEST(Cleanup, AlsoRemovesWhatThePlatformStillListsUnderTheRunId) {
  KeptRun run;
  // A clone the journal never heard of (crash between the clone call and its journal line).
  run.rec->live.insert("bs-0badc0-fake-scenario-1-099");
  auto report = cleanup_run(run.result.run_dir, run.plan, run.hooks(run.behaviour));
  ASSERT_TRUE(report);
  EXPECT_EQ(report->from_platform, 1u);
  EXPECT_EQ(report->deleted.size(), 5u);
  EXPECT_TRUE(run.rec->live.empty());
}

TEST(Cleanup, RefusesObjectsWithoutTheRunId) {
  KeptRun run;
  auto b = run.behaviour;
  // A misbehaving platform listing: the golden image and another run's VM.
  b.extra_run_vms = {{"win10-golden", "vm-1", "", ""}, {"bs-ffffff-other-001", "vm-2", "", ""}};
  // A tampered journal naming a foreign VM as created by this run.
  {
    std::ofstream out(run.result.run_dir / "journal.jsonl", std::ios::app);
    out << R"({"t":"x","mono":9,"type":"vm_created","scenario":"Fake Scenario #1","repeat":1,"vm":"prod-db-01","id":"vm-7","host":"h"})"
        << "\n";
  }
  auto report = cleanup_run(run.result.run_dir, run.plan, run.hooks(b));
  ASSERT_TRUE(report) << report.error().what();
  EXPECT_FALSE(report->ok());
  ASSERT_EQ(report->refused.size(), 3u);
  bool golden = false, prod = false;
  for (auto& msg : report->refused) {
    EXPECT_NE(msg.find("does not carry run id 0badc0"), std::string::npos) << msg;
    golden |= msg.find("win10-golden") != std::string::npos;
    prod |= msg.find("prod-db-01") != std::string::npos;
  }
  EXPECT_TRUE(golden && prod);
  for (auto& name : run.rec->destroyed) EXPECT_EQ(name.rfind("bs-0badc0-", 0), 0u) << name;
  EXPECT_EQ(report->deleted.size(), 4u);
}

TEST(Cleanup, DryRunDeletesNothing) {
  KeptRun run;
  CleanupOptions o;
  o.dry_run = true;
  auto report = cleanup_run(run.result.run_dir, run.plan, run.hooks(run.behaviour), o);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->deleted.size(), 4u);  // would be deleted
  EXPECT_EQ(run.rec->live.size(), 4u);
  EXPECT_TRUE(run.rec->destroyed.empty());
  auto j = read_journal(run.result.run_dir / "journal.jsonl");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->undeleted.size(), 4u);
}

TEST(Cleanup, MissingJournalIsAClearError) {
  test::ScratchDir dir;
  auto report = cleanup_run(dir.path(), test::small_plan(), EngineHooks{});
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().what().find("journal.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm::engine
