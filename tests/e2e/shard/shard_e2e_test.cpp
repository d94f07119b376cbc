// Sharded runs end to end: three `bootstorm run PLAN --shard I/3 --start-at T` workers (real subprocesses)
// against one `bootstorm lab serve --lab small`, fired at one wall-clock instant, then `bootstorm merge`; the
// merged run is compared with the shards' own outputs (statistics recomputed here from the union of their
// vms.csv, type-7 quantiles as results/ documents) and with an unsharded run of the same plan and
// run id. The lab is checked independently with kubectl (no VM of the run is left).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/lab_fixture.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/run_files.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using Result = bootstorm::test_support::CliRun;

using bootstorm::test_support::Child;
using bootstorm::test_support::parse_utc;
using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_csv;
using bootstorm::test_support::read_file;

const std::string kBinary = bootstorm::test_support::bootstorm_binary();

// Every test starts with the `small` lab serving.
class ShardE2E : public bootstorm::test_support::LabCliTest {
 protected:
  ShardE2E() : LabCliTest("shard-e2e", "small") {}
};

// Hyndman & Fan type 7 (linear interpolation between closest ranks), written independently of the stats
// library.
double type7(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double h = (static_cast<double>(v.size()) - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::string utc_in(std::chrono::seconds ahead) {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + ahead);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

const std::vector<std::string> kMilestones = {"start_requested", "start_acknowledged", "scheduled", "running",
                                              "guest_agent",     "ip_assigned",        "port_open", "beacon"};

// Milestones reached per VM (non-empty <milestone>_s cells).
std::map<std::string, std::set<std::string>> milestones_by_vm(
    const std::vector<std::map<std::string, std::string>>& rows) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& row : rows) {
    auto& set = out[row.at("vm")];
    for (const auto& m : kMilestones)
      if (row.count(m + "_s") && !row.at(m + "_s").empty()) set.insert(m);
  }
  return out;
}

TEST_F(ShardE2E, ThreeShardsFiredAtOneInstantMergeIntoTheUnshardedRun) {
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it checks the lab independently");
  const fs::path plan = dir_ / "plan.yaml";
  const fs::path shards_out = dir_ / "shards";
  PlanYaml{.name = "shard-e2e",
           .platform = {.kind = "kubevirt",
                        .endpoint = "lab:" + state_.string(),
                        .extra = {"apiBudget: {requestsPerSecond: 100000, maxConcurrent: 256}"}},
           .golden = "{dataSource: {name: fedora-golden, namespace: golden}, clone: auto}",
           .ns = "bootstorm-shard",
           .scenarios = {{"storm", {{"worker-0", 100}, {"worker-1", 100}, {"worker-2", 100}}}},
           .storm = "{mode: simultaneous, timeout: 5m}",
           .ready = "{signal: guest_agent}",
           .cleanup = "always",
           .output = (dir_ / "unused").string(),
           .extra = {"repeat: 1"}}
      .write(plan);

  // Usage errors first: they touch nothing.
  Result bad_shard =
      bootstorm({"run", plan.string(), "--shard", "3/3", "--start-at", utc_in(std::chrono::seconds(60))});
  EXPECT_EQ(bad_shard.exit_code, 2);
  EXPECT_NE(bad_shard.err.find("INDEX must be below COUNT"), std::string::npos) << bad_shard.err;
  Result past = bootstorm({"run", plan.string(), "--shard", "0/3", "--start-at", "2020-01-01T00:00:00Z"});
  EXPECT_EQ(past.exit_code, 2);
  EXPECT_NE(past.err.find("in the past"), std::string::npos) << past.err;
  Result no_beacon =
      bootstorm({"run", plan.string(), "--shard", "0/3", "--start-at", utc_in(std::chrono::seconds(60)),
                 "--beacon-advertise", "http://10.0.0.1:8080"});
  EXPECT_EQ(no_beacon.exit_code, 2);
  EXPECT_NE(no_beacon.err.find("--beacon-advertise needs a beacon"), std::string::npos) << no_beacon.err;
  Result no_instant = bootstorm({"run", plan.string(), "--shard", "0/3"});
  EXPECT_EQ(no_instant.exit_code, 2);
  EXPECT_NE(no_instant.err.find("needs --start-at"), std::string::npos) << no_instant.err;

  // ---- three workers, one instant (provisioning 100 VMs per shard takes a few seconds here)
  const std::string start_at = utc_in(std::chrono::seconds(25));
  std::vector<std::unique_ptr<Child>> workers;
  for (int i = 0; i < 3; ++i) {
    workers.push_back(std::make_unique<Child>(
        std::vector<std::string>{kBinary, "run", plan.string(), "--yes", "--shard", std::to_string(i) + "/3",
                                 "--start-at", start_at, "--out", shards_out.string()},
        dir_ / ("shard" + std::to_string(i) + ".out"), dir_ / ("shard" + std::to_string(i) + ".err")));
  }
  for (int i = 0; i < 3; ++i) {
    auto rc = workers[static_cast<std::size_t>(i)]->wait_for(std::chrono::seconds(240));
    ASSERT_TRUE(rc.has_value()) << "shard " << i << " did not finish";
    ASSERT_EQ(*rc, 0) << "shard " << i << ": " << workers[static_cast<std::size_t>(i)]->out()
                      << workers[static_cast<std::size_t>(i)]->err();
  }
  std::vector<fs::path> shard_dirs;
  for (const auto& e : fs::directory_iterator(shards_out)) shard_dirs.push_back(e.path());
  // In shard order: by the "-shardIofN" the names end with, not by the whole name, whose timestamp differs
  // when the shards started on either side of a second.
  auto shard_part = [](const fs::path& p) {
    const std::string name = p.filename().string();
    const auto at = name.rfind("-shard");
    return at == std::string::npos ? name : name.substr(at);
  };
  std::sort(shard_dirs.begin(), shard_dirs.end(),
            [&](const fs::path& a, const fs::path& b) { return shard_part(a) < shard_part(b); });
  ASSERT_EQ(shard_dirs.size(), 3u);

  // Every shard: its slice, the shared run id, fired at (not before) the instant, the offset recorded.
  std::string run_id;
  std::vector<std::map<std::string, std::string>> union_rows;
  std::set<std::string> shard_names;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NE(shard_dirs[i].filename().string().find("-shard" + std::to_string(i) + "of3"),
              std::string::npos);
    const json summary = json::parse(read_file(shard_dirs[i] / "summary.json"));
    if (run_id.empty()) run_id = summary["run"]["id"].get<std::string>();
    EXPECT_EQ(summary["run"]["id"], run_id) << "shards derive one run id from the plan and --start-at";
    const json& sc = summary["scenarios"][0];
    EXPECT_EQ(sc["vms"], 100);
    ASSERT_TRUE(sc.contains("startAtOffsetMs")) << sc.dump();
    const double offset_ms = sc["startAtOffsetMs"].get<double>();
    EXPECT_GE(offset_ms, 0.0) << "the barrier opened before --start-at";
    EXPECT_NEAR(sc["startAtUnixS"].get<double>(), parse_utc(start_at.substr(0, 19) + ".000Z"), 0.001);
    std::cout << "shard " << i << ": barrier opened " << offset_ms << " ms after --start-at, fire skew "
              << sc["fireSkewMs"] << " ms, ready mean " << sc["milestones"]["ready"]["meanS"] << " s\n";
    RecordProperty("shard" + std::to_string(i) + "StartAtOffsetMs", std::to_string(offset_ms));
    for (auto& row : read_csv(shard_dirs[i] / "vms.csv")) {
      EXPECT_TRUE(shard_names.insert(row["vm"]).second) << row["vm"] << " is in two shards";
      const int number = std::stoi(row["vm"].substr(row["vm"].rfind('-') + 1));
      EXPECT_EQ((number - 1) % 3, static_cast<int>(i)) << row["vm"];
      union_rows.push_back(std::move(row));
    }
  }
  ASSERT_EQ(union_rows.size(), 300u);

  // ---- merge: outputs rendered from the union of the journals
  const fs::path merged = dir_ / "merged";
  std::vector<std::string> merge_args = {"merge"};
  for (const auto& d : shard_dirs) merge_args.push_back(d.string());
  merge_args.insert(merge_args.end(), {"--out", merged.string()});
  Result missing = bootstorm(
      {"merge", shard_dirs[0].string(), shard_dirs[2].string(), "--out", (dir_ / "partial").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("shard(s) 1 of 3 missing"), std::string::npos) << missing.err;
  Result m = bootstorm(merge_args);
  ASSERT_EQ(m.exit_code, 0) << m.out << m.err;
  for (const char* file : {"journal.jsonl", "plan.yaml", "summary.json", "vms.csv", "report.md",
                           "report.html", "junit.xml", "metrics.prom"})
    EXPECT_TRUE(fs::exists(merged / file)) << file;

  const json summary = json::parse(read_file(merged / "summary.json"));
  EXPECT_EQ(summary["run"]["id"], run_id);
  EXPECT_EQ(summary["run"]["outcome"], "completed");
  ASSERT_EQ(summary["scenarios"].size(), 1u);
  const json& sc = summary["scenarios"][0];
  EXPECT_EQ(sc["vms"], 300);
  EXPECT_TRUE(sc["failures"].empty()) << sc["failures"].dump();
  ASSERT_TRUE(sc.contains("startAtOffsetMs"));
  std::cout << "merged: fire skew across shards " << sc["fireSkewMs"] << " ms, worst start-at offset "
            << sc["startAtOffsetMs"] << " ms, time to all ready " << sc["timeToAllReadyS"] << " s\n";

  // Statistics of the merged summary = statistics recomputed here from the union of the shards' rows.
  std::vector<double> boot;
  for (const auto& row : union_rows) {
    ASSERT_EQ(row.at("status"), "ready") << row.at("vm");
    boot.push_back(std::stod(row.at("guest_agent_s")));
  }
  const json& ready = sc["milestones"]["ready"];
  EXPECT_EQ(ready["count"], 300);
  double sum = 0;
  for (double b : boot) sum += b;
  const double mean = sum / 300.0;
  double sq = 0;
  for (double b : boot) sq += (b - mean) * (b - mean);
  const double tol = 5e-6;  // vms.csv and summary.json both carry microseconds
  EXPECT_NEAR(ready["meanS"].get<double>(), mean, tol);
  EXPECT_NEAR(ready["stdevS"].get<double>(), std::sqrt(sq / 299.0), 1e-5);
  EXPECT_NEAR(ready["minS"].get<double>(), *std::min_element(boot.begin(), boot.end()), tol);
  EXPECT_NEAR(ready["maxS"].get<double>(), *std::max_element(boot.begin(), boot.end()), tol);
  for (auto [key, p] :
       {std::pair{"p50S", 0.50}, std::pair{"p90S", 0.90}, std::pair{"p95S", 0.95}, std::pair{"p99S", 0.99}})
    EXPECT_NEAR(ready[key].get<double>(), type7(boot, p), tol) << key;

  // vms.csv of the merged run: the same VMs, every row identical to its shard's row.
  const auto merged_rows = read_csv(merged / "vms.csv");
  ASSERT_EQ(merged_rows.size(), 300u);
  std::map<std::string, std::map<std::string, std::string>> union_by_vm;
  for (const auto& row : union_rows) union_by_vm[row.at("vm")] = row;
  for (const auto& row : merged_rows) {
    ASSERT_TRUE(union_by_vm.count(row.at("vm"))) << row.at("vm");
    EXPECT_EQ(row, union_by_vm[row.at("vm")]) << row.at("vm");
  }

  // `bootstorm report` on the merged directory re-renders the same summary.
  Result rep = bootstorm({"report", merged.string()});
  ASSERT_EQ(rep.exit_code, 0) << rep.out << rep.err;
  EXPECT_EQ(json::parse(read_file(merged / "summary.json")), summary);

  // Cleanup: each shard deleted its own VMs (cleanup: always); nothing of the run is left, and cleaning up
  // a shard or the whole merged run again finds nothing to delete.
  EXPECT_TRUE(run_vms("bootstorm-shard", run_id).empty());
  Result clean_shard = bootstorm({"cleanup", shard_dirs[1].string()});
  EXPECT_EQ(clean_shard.exit_code, 0) << clean_shard.out << clean_shard.err;
  EXPECT_NE(clean_shard.out.find("deleted 0 VMs"), std::string::npos) << clean_shard.out;
  Result clean_all = bootstorm({"cleanup", merged.string()});
  EXPECT_EQ(clean_all.exit_code, 0) << clean_all.out << clean_all.err;

  // ---- the unsharded run of the same plan and run id: the same VMs, the same milestones
  const fs::path whole_out = dir_ / "whole";
  Result whole = bootstorm({"run", plan.string(), "--yes", "--run-id", run_id, "--out", whole_out.string()},
                           std::chrono::seconds(240));
  ASSERT_EQ(whole.exit_code, 0) << whole.out << whole.err;
  const fs::path whole_dir = run_dir_in(whole_out);
  ASSERT_FALSE(whole_dir.empty());
  const auto whole_rows = read_csv(whole_dir / "vms.csv");
  const auto whole_milestones = milestones_by_vm(whole_rows);
  const auto merged_milestones = milestones_by_vm(merged_rows);
  ASSERT_EQ(whole_milestones.size(), 300u);
  std::set<std::string> whole_names, merged_names;
  for (const auto& [vm, _] : whole_milestones) whole_names.insert(vm);
  for (const auto& [vm, _] : merged_milestones) merged_names.insert(vm);
  EXPECT_EQ(merged_names, whole_names);
  // Every milestone up to ready (guest_agent) for every VM in both runs. Later ones (ip_assigned) are
  // recorded when they arrive before the storm ends, which is a race in either run.
  const std::set<std::string> up_to_ready = {"start_requested", "start_acknowledged", "scheduled", "running",
                                             "guest_agent"};
  for (const auto& [vm, reached] : whole_milestones) {
    ASSERT_TRUE(merged_milestones.count(vm)) << vm;
    for (const auto& m : up_to_ready) {
      EXPECT_TRUE(reached.count(m)) << vm << " (unsharded) lacks " << m;
      EXPECT_TRUE(merged_milestones.at(vm).count(m)) << vm << " (merged) lacks " << m;
    }
  }
  const json whole_summary = json::parse(read_file(whole_dir / "summary.json"));
  const json& wr = whole_summary["scenarios"][0]["milestones"]["ready"];
  EXPECT_EQ(wr["count"], ready["count"]);
  std::cout << "unsharded: ready mean " << wr["meanS"] << " s, P95 " << wr["p95S"] << " s, fire skew "
            << whole_summary["scenarios"][0]["fireSkewMs"] << " ms; merged: ready mean " << ready["meanS"]
            << " s, P95 " << ready["p95S"] << " s\n";
  EXPECT_TRUE(run_vms("bootstorm-shard", run_id).empty());
}

}  // namespace
