// Migration report rendering: summary statistics (checked against values computed here), per-VM and per-step
// times, throughput, the failed VM's step and reason, "simulated lab", and the journal round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "orchestrator/engine/journal.hpp"
#include "orchestrator/migrate/migrate.hpp"
#include "orchestrator/migrate/migration_record.hpp"
#include "tests/support/scratch_dir.hpp"

namespace bootstorm::migrate {
namespace {
using nlohmann::json;

VmMigrationRecord vm(const std::string& name, double start, double transfer_s, double mb,
                     double conversion_s) {
  VmMigrationRecord v;
  v.name = name;
  v.id = "vm-" + name;
  v.target_name = name;
  v.status = "succeeded";
  double t = start;
  StepRecord init{"Initialize", "Completed", t, t + 1, 1, 1, "", ""};
  t += 1;
  StepRecord disk{
      "DiskTransfer", "Completed", t, t + transfer_s, static_cast<long long>(mb), static_cast<long long>(mb),
      "MB",           ""};
  t += transfer_s;
  StepRecord conv{"ImageConversion", "Completed", t, t + conversion_s, 1, 1, "", ""};
  t += conversion_s;
  StepRecord create{"VirtualMachineCreation", "Completed", t, t + 1, 1, 1, "", ""};
  t += 1;
  v.steps = {init, disk, conv, create};
  v.started_s = start;
  v.completed_s = t;
  return v;
}

MigrationRecord sample() {
  MigrationRecord r;
  r.run_id = "abc123";
  r.plan_name = "migrate-test";
  r.simulated = true;
  r.lab = "tolly-2024";
  r.source_url = "https://127.0.0.1:1/";
  r.destination = "https://127.0.0.1:2";
  r.forklift_namespace = "openshift-mtv";
  r.target_namespace = "migrated";
  r.outcome = "failed";
  r.started_at = "2026-11-30T10:00:00.000Z";
  r.migration_started_s = 1000;
  r.vms.push_back(vm("desk-01", 1000, 40, 4000, 5));
  r.vms.push_back(vm("desk-02", 1000, 20, 4000, 5));
  r.vms.push_back(vm("desk-03", 1002, 80, 4000, 6));
  VmMigrationRecord bad;
  bad.name = "desk-04";
  bad.status = "failed";
  bad.started_s = 1000;
  bad.completed_s = 1010;
  bad.steps = {StepRecord{"Initialize", "Completed", 1000, 1001, 1, 1, "", ""},
               StepRecord{"DiskTransfer", "Running", 1001, 1010, 300, 4000, "MB", "injected: link down"}};
  bad.failed_step = "DiskTransfer";
  bad.reason = "injected: link down";
  r.vms.push_back(bad);
  r.migration_ended_s = 1090;
  return r;
}

TEST(MigrationReport, SummaryMatchesIndependentFigures) {
  MigrationRecord r = sample();
  MigrationSummary s = summarize(r);
  EXPECT_EQ(s.vms, 4u);
  EXPECT_EQ(s.succeeded, 3u);
  EXPECT_EQ(s.failed, 1u);
  // Totals: 1+40+5+1 = 47, 1+20+5+1 = 27, 1+80+6+1 = 88.
  std::vector<double> totals = {47, 27, 88};
  double mean = (47 + 27 + 88) / 3.0;
  std::sort(totals.begin(), totals.end());
  double h = (3 - 1) * 0.95;  // type-7 P95
  double p95 = totals[1] + (h - 1) * (totals[2] - totals[1]);
  EXPECT_NEAR(*s.mean_s, mean, 1e-9);
  EXPECT_NEAR(*s.p95_s, p95, 1e-9);
  EXPECT_DOUBLE_EQ(*s.max_s, 88);
  EXPECT_DOUBLE_EQ(*s.wall_s, 90);      // Migration created -> every VM done
  EXPECT_DOUBLE_EQ(s.total_mb, 12000);  // failed VM's partial transfer is not counted
  EXPECT_NEAR(*s.aggregate_mbps, 12000.0 / 90, 1e-9);
  EXPECT_NEAR(*s.mean_vm_mbps, (100.0 + 200.0 + 50.0) / 3, 1e-9);
  ASSERT_EQ(s.step_names, (std::vector<std::string>{"Initialize", "DiskTransfer", "ImageConversion",
                                                    "VirtualMachineCreation"}));
  // DiskTransfer mean/max over the VMs that completed it (the failed one excluded).
  EXPECT_NEAR(*s.step_mean_max[1].first, (40 + 20 + 80) / 3.0, 1e-9);
  EXPECT_DOUBLE_EQ(*s.step_mean_max[1].second, 80);
}

TEST(MigrationReport, MarkdownShowsStepsThroughputAndTheFailure) {
  std::string md = render_migration_md(sample());
  EXPECT_NE(md.find("# Migration migrate-test \u2014 simulated lab"), std::string::npos) << md;
  EXPECT_NE(md.find("simulated lab **tolly-2024**"), std::string::npos);
  EXPECT_NE(
      md.find("| desk-03 | succeeded | 88.00 s | 1.00 s | 80.00 s | 6.00 s | 1.00 s | 4000 MB | 50.0 MB/s |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| desk-04 | failed | 10.00 s | 1.00 s | failed | \u2014 | \u2014 |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("- **desk-04** failed in step **DiskTransfer**: injected: link down"), std::string::npos)
      << md;
  EXPECT_NE(md.find("3 of 4 VMs migrated, 1 failed"), std::string::npos);
  MigrationRecord real = sample();
  real.simulated = false;
  EXPECT_EQ(render_migration_md(real).find("simulated lab"), std::string::npos);
}

TEST(MigrationReport, JsonAndCsv) {
  json j = json::parse(render_migration_json(sample()));
  EXPECT_EQ(j["schemaVersion"], 1);
  EXPECT_EQ(j["run"]["simulated"], true);
  EXPECT_EQ(j["summary"]["succeeded"], 3);
  EXPECT_DOUBLE_EQ(j["summary"]["maxS"].get<double>(), 88);
  EXPECT_EQ(j["vms"][3]["failedStep"], "DiskTransfer");
  EXPECT_EQ(j["vms"][3]["reason"], "injected: link down");
  std::string csv = render_migration_csv(sample());
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "vm,id,target,status,started_utc,total_s,Initialize_s,DiskTransfer_s,ImageConversion_s,"
            "VirtualMachineCreation_s,disk_mb,transfer_mbps,failed_step,reason");
  EXPECT_NE(csv.find("desk-02,vm-desk-02,desk-02,succeeded,"), std::string::npos);
  EXPECT_NE(csv.find(",27,1,20,5,1,4000,200,,\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("DiskTransfer,injected: link down\n"), std::string::npos) << csv;
}

TEST(MigrationReport, RebuildsFromTheJournal) {
  const test_support::ScratchDir dir("migrate-report");
  MigrationRecord r = sample();
  {
    auto journal = engine::Journal::open(dir / "journal.jsonl");
    ASSERT_TRUE(journal);
    (*journal)->write("run_started", {{"runId", r.run_id},
                                      {"plan", r.plan_name},
                                      {"kind", "MigrationPlan"},
                                      {"simulated", true},
                                      {"lab", r.lab},
                                      {"source", r.source_url},
                                      {"destination", r.destination},
                                      {"forkliftNamespace", r.forklift_namespace},
                                      {"targetNamespace", r.target_namespace},
                                      {"warm", false}});
    json names = json::array();
    for (const auto& v : r.vms) names.push_back(v.name);
    (*journal)->write("vms_selected", {{"vms", names}});
    for (const auto& v : r.vms) (*journal)->write("migration_vm", to_json(v));
    (*journal)->write("migration_window", {{"startedS", 1000}, {"endedS", 1090}});
    (*journal)->write("run_ended", {{"outcome", "failed"}});
    (*journal)->sync();
  }
  auto back = read_migration_journal(dir / "journal.jsonl");
  ASSERT_TRUE(back) << back.error().what();
  back->started_at = r.started_at;
  EXPECT_EQ(render_migration_md(*back), render_migration_md(r));
  EXPECT_EQ(render_migration_csv(*back), render_migration_csv(r));
}

}  // namespace
}  // namespace bootstorm::migrate
