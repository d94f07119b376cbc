// Sharded runs: the INDEX/COUNT and RFC 3339 parsers, the partition, the start instant, and
// engine::merge_shard_runs over real shard journals written by the engine (fake provider, threads).
#include "orchestrator/engine/shard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <thread>

#include "common/rfc3339.hpp"
#include "orchestrator/engine/cleanup.hpp"
#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/engine/merge.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "results/summary.hpp"
#include "tests/unit/orchestrator/engine/fake_provider.hpp"
#include "tests/unit/orchestrator/engine/test_support.hpp"

namespace bootstorm::engine {
namespace {

using std::chrono::milliseconds;
namespace fs = std::filesystem;

TEST(Shard, ParsesIndexAndCount) {
  auto s = parse_shard("2/5");
  ASSERT_TRUE(s) << s.error().what();
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 5);
  EXPECT_TRUE(s->sharded());
  auto whole = parse_shard("0/1");
  ASSERT_TRUE(whole);
  EXPECT_FALSE(whole->sharded());
}

TEST(Shard, RejectsMalformedShardsWithAMessageNamingThePart) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {Case{"3", "not INDEX/COUNT"}, Case{"a/3", "INDEX 'a'"}, Case{"-1/3", "INDEX '-1'"},
                        Case{"1/x", "COUNT 'x'"}, Case{"3/3", "INDEX must be below COUNT"},
                        Case{"0/0", "COUNT must be between"}, Case{"1/", "COUNT ''"}}) {
    auto s = parse_shard(c.text);
    ASSERT_FALSE(s) << c.text;
    EXPECT_NE(s.error().what().find(c.says), std::string::npos) << c.text << ": " << s.error().what();
    EXPECT_EQ(s.error().kind, ErrorKind::invalid_input);
  }
}

TEST(Shard, PartitionIsDisjointAndCoversEveryVmNumber) {
  for (int count : {1, 2, 3, 7}) {
    std::vector<int> owners(301, 0);
    for (int index = 0; index < count; ++index) {
      ShardSpec s{index, count};
      int mine = 0;
      for (int k = 1; k <= 300; ++k)
        if (s.owns(k)) {
          ++owners[static_cast<std::size_t>(k)];
          ++mine;
        }
      EXPECT_EQ(s.owned_of(300), mine);
      for (int vms : {0, 1, 2, 6, 7, 8})  // fewer VMs than shards, and around a multiple
        EXPECT_EQ(s.owned_of(vms),
                  [&] {
                    int n = 0;
                    for (int k = 1; k <= vms; ++k) n += s.owns(k) ? 1 : 0;
                    return n;
                  }())
            << index << "/" << count << " of " << vms;
      // Round robin: every shard gets floor or ceil of 300 / count.
      EXPECT_GE(mine, 300 / count);
      EXPECT_LE(mine, (300 + count - 1) / count);
    }
    for (int k = 1; k <= 300; ++k) EXPECT_EQ(owners[static_cast<std::size_t>(k)], 1) << k;
  }
}

TEST(Shard, VmNumberComesFromTheNameSuffix) {
  EXPECT_EQ(vm_number_from_name(vm_name("abc123", "storm", 17)), 17);
  EXPECT_EQ(vm_number_from_name(vm_name("abc123", "storm-2", 1234)), 1234);
  EXPECT_FALSE(vm_number_from_name("bs-abc123-storm"));
  EXPECT_FALSE(vm_number_from_name("golden"));
}

TEST(Shard, DerivedRunIdIsSharedByTheShardsOfOneInstantOnly) {
  const auto at = *parse_rfc3339("2026-11-30T10:00:00Z");
  const std::string digest = plan_digest("name: p\n");
  EXPECT_EQ(derive_run_id(digest, at), derive_run_id(digest, at));
  EXPECT_EQ(derive_run_id(digest, at).size(), 6u);
  EXPECT_TRUE(validate_run_id(derive_run_id(digest, at)));
  EXPECT_NE(derive_run_id(digest, at), derive_run_id(digest, at + std::chrono::seconds(1)));
  EXPECT_NE(derive_run_id(digest, at), derive_run_id(plan_digest("name: q\n"), at));
  EXPECT_NE(plan_digest("a"), plan_digest("b"));
  EXPECT_EQ(plan_digest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_FALSE(validate_run_id("ABC"));
  EXPECT_FALSE(validate_run_id(""));
  EXPECT_FALSE(validate_run_id("a-b"));
  EXPECT_FALSE(validate_run_id("0123456789abcdef0"));
}

// ------------------------------------------------------------------------------------------------------------
// The engine and merge: shards run concurrently on threads against their own fake platforms.

struct ShardRun {
  test::FakeBehaviour behaviour;
  std::shared_ptr<test::FakeRecord> rec = std::make_shared<test::FakeRecord>();
  RunResult result;
};

RunOptions shard_options(const fs::path& out, ShardSpec shard,
                         std::optional<std::chrono::system_clock::time_point> start_at,
                         const std::string& run_id) {
  RunOptions o;
  o.output_dir = out;
  o.plan_yaml = "name: unit-plan\nscenarios: 10 VMs\n";
  o.progress = Progress::Mode::none;
  o.handle_signals = false;
  o.observe_tick = milliseconds(10);
  o.stop_grace = milliseconds(500);
  o.shard = shard;
  o.start_at = start_at;
  o.run_id = run_id;
  return o;
}

EngineHooks fake_hooks(ShardRun& run) {
  EngineHooks h;
  h.make_provider = test::fake_factory(run.behaviour, run.rec);
  h.write_outputs = [](const fs::path&, const results::RunRecord&) -> Expected<bool> { return true; };
  return h;
}

std::vector<std::string> sorted_names(const results::RunRecord& r) {
  std::vector<std::string> names;
  for (const auto& vm : r.vms) names.push_back(vm.name);
  std::sort(names.begin(), names.end());
  return names;
}

// Time every shard has to provision its (few, fake) VMs before the instant: generous, because a loaded CI
// machine must not turn these tests into tests of the "instant passed" error.
constexpr milliseconds kLead{1500};

class ShardedEngine : public ::testing::Test {
 protected:
  // Runs `count` shards of small_plan(5, 2) concurrently, all at one start instant.
  void run_shards(int count, milliseconds lead = kLead) {
    start_at_ = std::chrono::system_clock::now() + lead;
    runs_.clear();
    runs_.resize(static_cast<std::size_t>(count));
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i) {
      threads.emplace_back([this, i, count] {
        auto& run = runs_[static_cast<std::size_t>(i)];
        RunEngine engine(test::small_plan(5, 2),
                         shard_options(dir_.path() / "shards", {i, count}, start_at_, "shrd01"),
                         fake_hooks(run));
        run.result = engine.run();
      });
    }
    for (auto& t : threads) t.join();
  }

  test::ScratchDir dir_;
  std::chrono::system_clock::time_point start_at_;
  std::vector<ShardRun> runs_;
};

TEST_F(ShardedEngine, ShardsTakeDisjointSlicesWithTheUnshardedNamesAndFireNotBeforeTheInstant) {
  ShardRun whole;
  RunEngine unsharded(test::small_plan(5, 2),
                      shard_options(dir_.path() / "whole", {}, std::nullopt, "shrd01"), fake_hooks(whole));
  whole.result = unsharded.run();
  ASSERT_EQ(whole.result.exit_code, 0) << (whole.result.error ? whole.result.error->what() : "");
  const auto expected = sorted_names(whole.result.record);
  ASSERT_EQ(expected.size(), 10u);

  run_shards(3);
  std::vector<std::string> union_names;
  std::set<std::string> dirs;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    const auto& r = runs_[i].result;
    ASSERT_EQ(r.exit_code, 0) << "shard " << i << ": " << (r.error ? r.error->what() : r.outcome);
    EXPECT_EQ(r.record.run_id, "shrd01");
    EXPECT_NE(r.run_dir.filename().string().find("-shard" + std::to_string(i) + "of3"), std::string::npos)
        << r.run_dir;
    dirs.insert(r.run_dir.string());
    for (const auto& vm : r.record.vms) {
      union_names.push_back(vm.name);
      EXPECT_TRUE((ShardSpec{static_cast<int>(i), 3}.owns(*vm_number_from_name(vm.name)))) << vm.name;
      EXPECT_EQ(vm.status, "ready") << vm.name;
    }
    ASSERT_EQ(r.record.scenarios.size(), 1u);
    // The barrier never opens before the agreed instant (CLOCK_REALTIME), and the offset is recorded.
    const auto& sc = r.record.scenarios[0];
    ASSERT_TRUE(sc.start_at_unix_s.has_value());
    ASSERT_TRUE(sc.start_at_offset_ms.has_value());
    EXPECT_NEAR(*sc.start_at_unix_s, unix_seconds(start_at_), 0.002);
    EXPECT_GE(*sc.start_at_offset_ms, 0.0);
    EXPECT_GE(sc.started_unix_s, unix_seconds(start_at_) - 0.0005);
    auto contents = read_journal(r.run_dir / "journal.jsonl");
    ASSERT_TRUE(contents);
    EXPECT_EQ(contents->shard.index, static_cast<int>(i));
    EXPECT_EQ(contents->shard.count, 3);
    EXPECT_EQ(contents->run_started["startAt"], format_rfc3339(start_at_));
  }
  EXPECT_EQ(dirs.size(), 3u);
  std::sort(union_names.begin(), union_names.end());
  EXPECT_EQ(union_names, expected);
}

TEST_F(ShardedEngine, MergeRecomputesStatisticsFromTheUnionOfTheShards) {
  run_shards(3);
  std::vector<fs::path> dirs;
  std::vector<double> boot_times;
  std::uint64_t starts = 0;
  for (auto& run : runs_) {
    ASSERT_EQ(run.result.exit_code, 0);
    dirs.push_back(run.result.run_dir);
    for (const auto& vm : run.result.record.vms)
      if (vm.ready_s) boot_times.push_back(*vm.ready_s);
    starts += run.rec->written.size();
  }
  std::reverse(dirs.begin(), dirs.end());  // the order given does not matter
  auto merged = merge_shard_runs(dirs, dir_.path() / "merged");
  ASSERT_TRUE(merged) << merged.error().what();
  EXPECT_EQ(merged->shard_count, 3);
  EXPECT_EQ(merged->run_id, "shrd01");
  EXPECT_TRUE(merged->missing.empty());
  EXPECT_EQ(merged->vms, 10u);

  auto contents = read_journal(dir_.path() / "merged" / "journal.jsonl");
  ASSERT_TRUE(contents) << contents.error().what();
  EXPECT_TRUE(contents->has_run_ended);
  EXPECT_FALSE(contents->shard.sharded());
  const auto& record = contents->record;
  EXPECT_EQ(record.outcome, "completed");
  ASSERT_EQ(record.scenarios.size(), 1u);
  EXPECT_EQ(record.scenarios[0].vms, 10);
  ASSERT_EQ(record.vms.size(), 10u);
  for (const auto& vm : record.vms) {
    EXPECT_EQ(vm.status, "ready") << vm.name;
    EXPECT_TRUE(vm.milestones.count(api::Milestone::start_requested)) << vm.name;
    EXPECT_TRUE(vm.milestones.count(api::Milestone::guest_agent)) << vm.name;
  }
  // The merged fire skew spans every shard's first and last start on the wall clock.
  double first = 1e300, last = 0;
  for (auto& run : runs_) {
    const auto& sc = run.result.record.scenarios[0];
    first = std::min(first, sc.started_unix_s);
    last = std::max(last, sc.started_unix_s + sc.fire_skew_ms / 1000);
  }
  EXPECT_NEAR(record.scenarios[0].fire_skew_ms, (last - first) * 1000, 0.01);
  EXPECT_NEAR(record.scenarios[0].started_unix_s, first, 1e-6);

  // Statistics from the union, not from averaging the shards.
  results::Summary summary = results::summarize(record);
  const auto& ready = summary.scenarios.at(0).ready();
  ASSERT_EQ(ready.count, boot_times.size());
  double sum = 0;
  for (double b : boot_times) sum += b;
  EXPECT_NEAR(*ready.mean, sum / static_cast<double>(boot_times.size()), 1e-9);
  EXPECT_NEAR(*ready.max, *std::max_element(boot_times.begin(), boot_times.end()), 1e-9);
  EXPECT_NEAR(*ready.min, *std::min_element(boot_times.begin(), boot_times.end()), 1e-9);
  EXPECT_EQ(starts, 10u);

  // Merging again into the same directory is refused.
  auto again = merge_shard_runs(dirs, dir_.path() / "merged");
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().what().find("not empty"), std::string::npos);
}

TEST_F(ShardedEngine, MergeRefusesMissingDuplicateAndForeignShards) {
  run_shards(3);
  for (auto& run : runs_) ASSERT_EQ(run.result.exit_code, 0);
  const fs::path a = runs_[0].result.run_dir, b = runs_[1].result.run_dir, c = runs_[2].result.run_dir;

  auto missing = merge_shard_runs({a, c}, dir_.path() / "m1");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().what().find("shard(s) 1 of 3 missing"), std::string::npos)
      << missing.error().what();

  MergeOptions partial;
  partial.allow_missing = true;
  auto allowed = merge_shard_runs({a, c}, dir_.path() / "m2", partial);
  ASSERT_TRUE(allowed) << allowed.error().what();
  EXPECT_EQ(allowed->missing, std::vector<int>{1});
  ASSERT_FALSE(allowed->warnings.empty());
  auto partial_contents = read_journal(dir_.path() / "m2" / "journal.jsonl");
  ASSERT_TRUE(partial_contents);
  EXPECT_EQ(partial_contents->record.outcome, "failed");
  EXPECT_EQ(partial_contents->record.vms.size(),
            runs_[0].result.record.vms.size() + runs_[2].result.record.vms.size());

  auto duplicate = merge_shard_runs({a, a, b, c}, dir_.path() / "m3");
  ASSERT_FALSE(duplicate);
  EXPECT_NE(duplicate.error().what().find("are both shard 0/3"), std::string::npos)
      << duplicate.error().what();

  // A shard of another run (other run id) does not belong.
  ShardRun other;
  RunEngine foreign(
      test::small_plan(5, 2),
      shard_options(dir_.path() / "other", {1, 3}, std::chrono::system_clock::now() + kLead, "other1"),
      fake_hooks(other));
  other.result = foreign.run();
  ASSERT_EQ(other.result.exit_code, 0);
  auto mixed = merge_shard_runs({a, other.result.run_dir, c}, dir_.path() / "m4");
  ASSERT_FALSE(mixed);
  EXPECT_NE(mixed.error().what().find("runId differ"), std::string::npos) << mixed.error().what();

  // An unsharded run is not a shard.
  ShardRun whole;
  RunEngine unsharded(test::small_plan(5, 2),
                      shard_options(dir_.path() / "whole", {}, std::nullopt, "shrd01"), fake_hooks(whole));
  whole.result = unsharded.run();
  auto not_shard = merge_shard_runs({a, b, whole.result.run_dir}, dir_.path() / "m5");
  ASSERT_FALSE(not_shard);
  EXPECT_NE(not_shard.error().what().find("is not a shard"), std::string::npos) << not_shard.error().what();
}

TEST(ShardedEngineLate, AStartInstantThatPassesDuringProvisioningIsNotFiredAndSaysHowLate) {
  test::ScratchDir dir;
  ShardRun run;
  run.behaviour.provision_delay = milliseconds(150);
  RunEngine engine(
      test::small_plan(2, 1),
      shard_options(dir.path(), {0, 2}, std::chrono::system_clock::now() + milliseconds(20), "late01"),
      fake_hooks(run));
  run.result = engine.run();
  EXPECT_EQ(run.result.exit_code, 1);
  ASSERT_TRUE(run.result.error.has_value());
  EXPECT_NE(run.result.error->what().find("storm not fired"), std::string::npos) << run.result.error->what();
  EXPECT_NE(run.result.error->what().find("--start-at further ahead"), std::string::npos);
  EXPECT_TRUE(run.rec->written.empty()) << "no start request may be sent after the instant passed";
  ASSERT_EQ(run.result.record.vms.size(), 1u);  // VM 1 of 2 (shard 0/2)
  EXPECT_EQ(run.result.record.vms[0].status, "failed");
  EXPECT_NE(run.result.record.vms[0].reason.find("not started"), std::string::npos);
  EXPECT_TRUE(run.rec->live.empty()) << "cleanup: always still deletes the clones";
}

}  // namespace
}  // namespace bootstorm::engine

namespace bootstorm::engine {
namespace {

TEST(ShardCleanup, AShardsCleanupTakesOnlyItsOwnSliceOfWhatThePlatformLists) {
  test::ScratchDir dir;
  ShardRun run;
  plan::StormPlan plan = test::small_plan(3, 2);  // VMs 1..6
  plan.cleanup = "never";
  RunEngine engine(plan,
                   shard_options(dir.path(), {1, 3}, std::chrono::system_clock::now() + kLead, "cl0001"),
                   fake_hooks(run));
  run.result = engine.run();
  ASSERT_EQ(run.result.exit_code, 0) << (run.result.error ? run.result.error->what() : "");
  ASSERT_EQ(run.rec->live,
            (std::set<std::string>{"bs-cl0001-fake-scenario-1-002", "bs-cl0001-fake-scenario-1-005"}));
  // The other shards' VMs of the same run are still on the platform (their workers may still be running), and
  // a clone of this shard the journal never heard of.
  for (const char* other :
       {"bs-cl0001-fake-scenario-1-001", "bs-cl0001-fake-scenario-1-003", "bs-cl0001-fake-scenario-1-004",
        "bs-cl0001-fake-scenario-1-006", "bs-cl0001-fake-scenario-1-008"})
    run.rec->live.insert(other);
  auto report = cleanup_run(run.result.run_dir, plan, fake_hooks(run));
  ASSERT_TRUE(report) << report.error().what();
  EXPECT_EQ(report->from_journal, 2u);
  EXPECT_EQ(report->from_platform, 1u) << "VM 8 belongs to shard (8-1) mod 3 = 1";
  EXPECT_EQ(run.rec->live,
            (std::set<std::string>{"bs-cl0001-fake-scenario-1-001", "bs-cl0001-fake-scenario-1-003",
                                   "bs-cl0001-fake-scenario-1-004", "bs-cl0001-fake-scenario-1-006"}));
}

}  // namespace
}  // namespace bootstorm::engine

namespace bootstorm::engine {
namespace {

TEST(ShardEmpty, AShardWithoutVmsOfAScenarioCompletesWithoutAStorm) {
  test::ScratchDir dir;
  ShardRun run;
  RunEngine engine(
      test::small_plan(1, 2),  // VMs 1 and 2: shard 2/3 owns none
      shard_options(dir.path(), {2, 3}, std::chrono::system_clock::now() + milliseconds(30), "empty1"),
      fake_hooks(run));
  run.result = engine.run();
  EXPECT_EQ(run.result.exit_code, 0) << (run.result.error ? run.result.error->what() : run.result.outcome);
  EXPECT_EQ(run.result.outcome, "completed");
  EXPECT_TRUE(run.result.record.vms.empty());
  ASSERT_EQ(run.result.record.scenarios.size(), 1u);
  EXPECT_EQ(run.result.record.scenarios[0].vms, 0);
  EXPECT_TRUE(run.result.record.scenarios[0].errors.empty());
  EXPECT_TRUE(run.rec->written.empty());
}

}  // namespace
}  // namespace bootstorm::engine
