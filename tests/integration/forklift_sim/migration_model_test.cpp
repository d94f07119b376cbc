// The model pieces the Forklift controller stands on, in virtual time: bulk data flows (disk transfers) share
// the lab's resources by max-min fairness and report their progress; the migrationFailures fault parses from
// POST /_lab/faults JSON and from the lab YAML with the same rules.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "simulator/model/lab.hpp"
#include "tests/unit/simulator/model/lab_test_support.hpp"

namespace bootstorm::sim::model {
namespace {

using testing::kT0;

Lab virtual_lab(double datastore_mbps) {
  LabSpec spec = testing::simple_spec(2, /*link_mbps=*/1000);
  spec.datastores[0].mbps = datastore_mbps;
  LabOptions options;
  options.mode = LabOptions::TimeMode::virtual_time;
  options.virtual_start = kT0;
  return Lab(spec, options);
}

TEST(MigrationModel, DataFlowTakesSizeOverBottleneckAndReportsProgress) {
  Lab lab = virtual_lab(/*datastore_mbps=*/400);
  const std::string h1 = lab.find_host("h1")->id;
  const std::string ds = lab.find_datastore("ds")->id;
  std::optional<double> done_at;
  // Read and written on the same datastore (coefficient 2): 400 MB/s / 2 = 200 MB/s, under the 1,000 MB/s
  // link.
  auto op = lab.start_data_flow({{h1}, {ds, ds}, 800}, [&](Expected<void> r) {
    ASSERT_TRUE(r.has_value());
    done_at = lab.now();
  });
  ASSERT_TRUE(op.has_value());
  lab.advance(2.0);
  EXPECT_NEAR(lab.data_flow_done_mb(*op), 400, 1e-6);
  EXPECT_FALSE(done_at);
  ASSERT_TRUE(lab.run_until_idle(kT0 + 100));
  ASSERT_TRUE(done_at);
  EXPECT_NEAR(*done_at - kT0, 4.0, 1e-6);
  EXPECT_NEAR(lab.data_flow_done_mb(*op), 800, 1e-6);
}

TEST(MigrationModel, ConcurrentFlowsShareTheBottleneckAndCancelFreesIt) {
  Lab lab = virtual_lab(/*datastore_mbps=*/300);
  const std::string h1 = lab.find_host("h1")->id, h2 = lab.find_host("h2")->id;
  const std::string ds = lab.find_datastore("ds")->id;
  std::optional<double> a_done, b_done;
  bool c_called = false;
  auto a = lab.start_data_flow({{h1}, {ds}, 300}, [&](Expected<void>) { a_done = lab.now(); });
  auto b = lab.start_data_flow({{h2}, {ds}, 600}, [&](Expected<void>) { b_done = lab.now(); });
  auto c = lab.start_data_flow({{h2}, {ds}, 600}, [&](Expected<void>) { c_called = true; });
  ASSERT_TRUE(a && b && c);
  lab.advance(1.5);  // 100 MB/s each
  EXPECT_NEAR(lab.data_flow_done_mb(*c), 150, 1e-6);
  EXPECT_TRUE(lab.cancel_data_flow(*c));  // a and b now get 150 MB/s each
  EXPECT_FALSE(lab.cancel_data_flow(*c));
  ASSERT_TRUE(lab.run_until_idle(kT0 + 100));
  ASSERT_TRUE(a_done && b_done);
  EXPECT_NEAR(*a_done - kT0, 1.5 + 150.0 / 150, 1e-6);                // a: 150 left at 150 MB/s
  EXPECT_NEAR(*b_done - kT0, 2.5 + (600 - 150 - 150) / 300.0, 1e-6);  // then b alone at 300 MB/s
  EXPECT_FALSE(c_called);
  EXPECT_FALSE(lab.start_data_flow({{"no-such-host"}, {}, 1}, nullptr).has_value());
}

TEST(MigrationModel, MigrationFailuresParseFromJsonAndYaml) {
  Faults faults;
  ASSERT_TRUE(patch_faults_json(
      faults, R"({"migrationFailures": [{"vm": "desk-01", "step": "DiskTransfer", "reason": "VDDK error"},
                                        {"vm": "vm-1002", "step": "ImageConversion"}]})"));
  ASSERT_EQ(faults.migration_failures.size(), 2u);
  EXPECT_EQ(faults.migration_failures[0].reason, "VDDK error");
  EXPECT_EQ(faults.migration_failures[1].reason, "ImageConversion failed (injected fault).");
  Faults round_trip;
  ASSERT_TRUE(patch_faults_json(round_trip, faults_to_json(faults)));
  EXPECT_EQ(faults_to_json(round_trip), faults_to_json(faults));
  // All or nothing: an unknown step, a missing vm or an unknown key changes nothing.
  for (const char* bad : {R"({"migrationFailures": [{"vm": "a", "step": "Copy"}]})",
                          R"({"migrationFailures": [{"step": "DiskTransfer"}]})",
                          R"({"migrationFailures": [{"vm": "a", "step": "DiskTransfer", "when": 1}]})",
                          R"({"migrationFailures": {"vm": "a"}})"}) {
    EXPECT_FALSE(patch_faults_json(faults, bad).has_value()) << bad;
    EXPECT_EQ(faults.migration_failures.size(), 2u);
  }
  EXPECT_TRUE(patch_faults_json(faults, R"({"migrationFailures": []})"));
  EXPECT_TRUE(faults.migration_failures.empty());

  const std::string base =
      "name: t\nhosts: [{name: h}]\ndatastores: [{name: d}]\n"
      "profiles: [{name: p, phases: [{name: agent_start}, {name: services}]}]\n";
  auto spec = parse_lab_spec(
      base + "faults:\n  migrationFailures:\n    - {vm: desk-01, step: Initialize, reason: no}\n",
      "lab.yaml");
  ASSERT_TRUE(spec.has_value()) << spec.error().what();
  ASSERT_EQ(spec->faults.migration_failures.size(), 1u);
  EXPECT_EQ(spec->faults.migration_failures[0].step, "Initialize");
  auto bad =
      parse_lab_spec(base + "faults:\n  migrationFailures:\n    - {vm: desk-01, step: Nope}\n", "lab.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("lab.yaml:"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace bootstorm::sim::model
