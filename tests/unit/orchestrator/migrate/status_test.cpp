// Decoding Forklift status documents (shapes of the CRDs / real forklift-controller output): Ready and
// validation conditions, status.migration.vms[].pipeline[], and the tracker's per-step timing.
#include <gtest/gtest.h>

#include "orchestrator/migrate/forklift_objects.hpp"
#include "orchestrator/migrate/migration_record.hpp"

namespace bootstorm::migrate {
namespace {
using nlohmann::json;

// 2026-11-30T10:00:00Z
constexpr double kT0 = 1796032800.0;

std::string ts(int s) {
  int m = s / 60, sec = s % 60;
  char buf[32];
  std::snprintf(buf, sizeof buf, "2026-11-30T10:%02d:%02dZ", m, sec);
  return buf;
}

json step(const std::string& name, const std::string& phase, int started, int completed, long long done,
          long long total, const std::string& error = "") {
  json s = {{"name", name},
            {"description", name},
            {"phase", phase},
            {"progress", {{"completed", done}, {"total", total}}}};
  if (started >= 0) s["started"] = ts(started);
  if (completed >= 0) s["completed"] = ts(completed);
  if (name == "DiskTransfer") s["annotations"] = {{"unit", "MB"}};
  if (!error.empty()) s["error"] = {{"phase", "Running"}, {"reasons", {error}}};
  return s;
}

json plan_with(json vms) {
  return {{"status", {{"migration", {{"started", ts(0)}, {"vms", vms}}}}}};
}

TEST(ForkliftStatus, ReadinessReportsValidationConditionsVerbatim) {
  json provider = json::parse(R"({"status": {"phase": "ConnectionFailed", "conditions": [
    {"type": "ConnectionAuthFailed", "status": "True", "category": "Critical", "reason": "Tested",
     "message": "Connection auth failed, error: ServerFaultCode: Cannot complete login.",
     "lastTransitionTime": "2026-11-30T10:00:00Z"},
    {"type": "ConnectionInsecure", "status": "True", "category": "Warn", "reason": "SkipTLSVerification",
     "message": "TLS is susceptible.", "lastTransitionTime": "2026-11-30T10:00:00Z"}]}})");
  Readiness r = readiness_of(provider);
  EXPECT_FALSE(r.ready);
  EXPECT_TRUE(r.blocked);
  ASSERT_EQ(r.blocking.size(), 1u);
  EXPECT_EQ(
      r.blocking[0].to_string(),
      "ConnectionAuthFailed=True [Critical] Tested: Connection auth failed, error: ServerFaultCode: Cannot "
      "complete login.");
  EXPECT_EQ(r.all.size(), 2u);

  json plan = json::parse(R"({"status": {"conditions": [
    {"type": "VMNotFound", "status": "True", "category": "Critical", "reason": "NotFound",
     "message": "VM not found.", "items": ["id:vm-9 name:'desk-9'"], "lastTransitionTime": "x"},
    {"type": "VMNetworksNotMapped", "status": "True", "category": "Error", "reason": "NotValid",
     "message": "VM has unmapped networks.", "items": ["desk-1"], "lastTransitionTime": "x"}]}})");
  r = readiness_of(plan);
  EXPECT_TRUE(r.blocked);
  ASSERT_EQ(r.blocking.size(), 2u);
  EXPECT_EQ(r.blocking[0].to_string(),
            "VMNotFound=True [Critical] NotFound: VM not found. (id:vm-9 name:'desk-9')");
  EXPECT_EQ(r.blocking[1].category, "Error");

  json ready = json::parse(R"({"status": {"conditions": [
    {"type": "Ready", "status": "True", "category": "Required", "message": "The plan is ready.", "lastTransitionTime": "x"},
    {"type": "ConnectionInsecure", "status": "True", "category": "Warn", "lastTransitionTime": "x"}]}})");
  r = readiness_of(ready);
  EXPECT_TRUE(r.ready);
  EXPECT_FALSE(r.blocked);
  EXPECT_FALSE(readiness_of(json::object()).ready);
}

TEST(ForkliftStatus, DecodesThePipeline) {
  json doc = plan_with(json::array(
      {{{"id", "vm-17"},
        {"name", "desk-01"},
        {"newName", "desk-01-x"},
        {"phase", "CopyDisks"},
        {"started", ts(1)},
        {"pipeline",
         {step("Initialize", "Completed", 1, 3, 1, 1), step("DiskTransfer", "Running", 3, -1, 512, 2048),
          step("ImageConversion", "Pending", -1, -1, 0, 1),
          step("VirtualMachineCreation", "Pending", -1, -1, 0, 1)}}}}));
  auto vms = vm_statuses(doc);
  ASSERT_EQ(vms.size(), 1u);
  EXPECT_EQ(vms[0].id, "vm-17");
  EXPECT_EQ(vms[0].target_name, "desk-01-x");
  ASSERT_EQ(vms[0].pipeline.size(), 4u);
  EXPECT_EQ(vms[0].pipeline[1].name, "DiskTransfer");
  EXPECT_EQ(vms[0].pipeline[1].progress_completed, 512);
  EXPECT_EQ(vms[0].pipeline[1].progress_total, 2048);
  EXPECT_EQ(vms[0].pipeline[1].unit, "MB");
  EXPECT_FALSE(vms[0].done());
  // A Migration carries the same list at status.vms.
  json migration = {{"status", {{"vms", doc["status"]["migration"]["vms"]}}}};
  EXPECT_EQ(vm_statuses(migration).size(), 1u);
}

TEST(ForkliftStatus, TrackerTimesEveryStepAndTheFailure) {
  MigrationTracker t({"desk-01", "desk-02"});
  // Snapshot 1 (seen at +3.5 s: within no API second -> API times).
  json s1 = plan_with(json::array(
      {{{"id", "vm-1"},
        {"name", "desk-01"},
        {"phase", "CopyDisks"},
        {"started", ts(1)},
        {"pipeline",
         {step("Initialize", "Completed", 1, 3, 1, 1), step("DiskTransfer", "Running", 3, -1, 100, 4000)}}},
       {{"id", "vm-2"},
        {"name", "desk-02"},
        {"phase", "CopyDisks"},
        {"started", ts(1)},
        {"pipeline",
         {step("Initialize", "Completed", 1, 2, 1, 1), step("DiskTransfer", "Running", 2, -1, 50, 4000)}}}}));
  auto changed = t.update(vm_statuses(s1), kT0 + 5.5);
  EXPECT_EQ(changed.size(), 2u);
  EXPECT_FALSE(t.all_done());
  // Snapshot 2: desk-01 done; desk-02's DiskTransfer failed.
  json vm1 = {
      {"id", "vm-1"},
      {"name", "desk-01"},
      {"phase", "Completed"},
      {"started", ts(1)},
      {"completed", ts(45)},
      {"conditions",
       {{{"type", "Succeeded"},
         {"status", "True"},
         {"category", "Advisory"},
         {"lastTransitionTime", ts(45)}}}},
      {"pipeline",
       {step("Initialize", "Completed", 1, 3, 1, 1), step("DiskTransfer", "Completed", 3, 43, 4000, 4000),
        step("ImageConversion", "Completed", 43, 44, 1, 1),
        step("VirtualMachineCreation", "Completed", 44, 45, 1, 1)}}};
  json vm2 = {
      {"id", "vm-2"},
      {"name", "desk-02"},
      {"phase", "Completed"},
      {"started", ts(1)},
      {"completed", ts(20)},
      {"error", {{"phase", "CopyDisks"}, {"reasons", {"injected fault: datastore unreachable"}}}},
      {"conditions",
       {{{"type", "Failed"}, {"status", "True"}, {"category", "Advisory"}, {"lastTransitionTime", ts(20)}}}},
      {"pipeline",
       {step("Initialize", "Completed", 1, 2, 1, 1),
        step("DiskTransfer", "Running", 2, 20, 900, 4000, "injected fault: datastore unreachable"),
        step("ImageConversion", "Pending", -1, -1, 0, 1)}}};
  changed = t.update(vm_statuses(plan_with(json::array({vm1, vm2}))), kT0 + 60);
  EXPECT_EQ(changed.size(), 2u);
  EXPECT_TRUE(t.all_done());
  const VmMigrationRecord* a = t.find("desk-01");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->status, "succeeded");
  EXPECT_DOUBLE_EQ(*a->total_s(), 44.0);
  ASSERT_NE(a->step("DiskTransfer"), nullptr);
  EXPECT_DOUBLE_EQ(*a->step("DiskTransfer")->duration_s(), 40.0);
  EXPECT_DOUBLE_EQ(a->disk_mb(), 4000.0);
  EXPECT_DOUBLE_EQ(*a->transfer_mbps(), 100.0);
  EXPECT_DOUBLE_EQ(*a->step("VirtualMachineCreation")->duration_s(), 1.0);
  const VmMigrationRecord* b = t.find("desk-02");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->status, "failed");
  EXPECT_EQ(b->failed_step, "DiskTransfer");
  EXPECT_EQ(b->reason, "injected fault: datastore unreachable");
  EXPECT_FALSE(b->transfer_mbps());
  // Unchanged snapshots change nothing.
  EXPECT_TRUE(t.update(vm_statuses(plan_with(json::array({vm1, vm2}))), kT0 + 61).empty());
  // The journal form round-trips.
  EXPECT_EQ(to_json(vm_record_from_json(to_json(*b))), to_json(*b));
}

TEST(ForkliftStatus, ObservationsRefineWholeSecondTimestamps) {
  MigrationTracker t({"desk-01"});
  json running = plan_with(json::array({{{"name", "desk-01"},
                                         {"started", ts(10)},
                                         {"pipeline", {step("DiskTransfer", "Running", 10, -1, 0, 100)}}}}));
  t.update(vm_statuses(running), kT0 + 10.25);  // pushed 250 ms into the second the API names
  json done = plan_with(json::array({{{"name", "desk-01"},
                                      {"started", ts(10)},
                                      {"pipeline", {step("DiskTransfer", "Completed", 10, 12, 100, 100)}}}}));
  t.update(vm_statuses(done), kT0 + 12.75);
  const StepRecord* s = t.find("desk-01")->step("DiskTransfer");
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(*s->started_s, kT0 + 10.25);
  EXPECT_DOUBLE_EQ(*s->completed_s, kT0 + 12.75);
  // Seen late (a relist after a dropped watch): the API's second stands.
  MigrationTracker late({"desk-01"});
  late.update(vm_statuses(done), kT0 + 30);
  EXPECT_DOUBLE_EQ(*late.find("desk-01")->step("DiskTransfer")->started_s, kT0 + 10);
  EXPECT_DOUBLE_EQ(*late.find("desk-01")->step("DiskTransfer")->completed_s, kT0 + 12);
}

TEST(ForkliftStatus, GiveUpFailsOnlyUnfinishedVms) {
  MigrationTracker t({"a", "b"});
  json doc = plan_with(json::array(
      {{{"name", "a"},
        {"started", ts(1)},
        {"completed", ts(5)},
        {"conditions",
         {{{"type", "Succeeded"},
           {"status", "True"},
           {"category", "Advisory"},
           {"lastTransitionTime", ts(5)}}}},
        {"pipeline", {step("Initialize", "Completed", 1, 5, 1, 1)}}},
       {{"name", "b"},
        {"started", ts(1)},
        {"pipeline",
         {step("Initialize", "Completed", 1, 2, 1, 1), step("DiskTransfer", "Running", 2, -1, 5, 10)}}}}));
  t.update(vm_statuses(doc), kT0 + 6);
  auto changed = t.give_up("the migration did not finish within 60 s", kT0 + 61);
  EXPECT_EQ(changed, std::vector<std::string>{"b"});
  EXPECT_EQ(t.find("a")->status, "succeeded");
  EXPECT_EQ(t.find("b")->status, "failed");
  EXPECT_EQ(t.find("b")->failed_step, "DiskTransfer");
  EXPECT_EQ(t.find("b")->reason, "the migration did not finish within 60 s");
}

}  // namespace
}  // namespace bootstorm::migrate
