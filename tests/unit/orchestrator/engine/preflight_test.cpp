#include "orchestrator/engine/preflight.hpp"

#include <gtest/gtest.h>

#include "tests/unit/orchestrator/engine/test_support.hpp"

namespace bootstorm::engine {
namespace {

TEST(CheckRequest, EachHostGetsTheMostVmsOneScenarioPutsThere) {
  plan::StormPlan p = test::small_plan(3, 2);  // one scenario: 3 VMs on host-01 and host-02
  plan::Scenario dense = p.scenarios.front();
  dense.name = "dense";
  dense.placement = {{"host-01", 10}};
  p.scenarios.push_back(dense);
  std::vector<const plan::Scenario*> all;
  for (const auto& s : p.scenarios) all.push_back(&s);
  const api::CheckRequest r = check_request(p, all);
  EXPECT_EQ(r.vms_per_host.at("host-01"), 10);
  EXPECT_EQ(r.vms_per_host.at("host-02"), 3);
  EXPECT_EQ(r.largest_storm, 10u);
  EXPECT_EQ(r.total_vms, 16u);
  EXPECT_EQ(r.storm_timeout, p.storm.timeout);
}

TEST(StartBurstCheck, SaysHowManyStartsGoOutAtOnceAndWarnsOnlyWhenThePlanHoldsThemBack) {
  plan::StormPlan p = test::small_plan();
  api::Capabilities kubevirt;
  auto all = start_burst_check(p, kubevirt, 1000);
  EXPECT_EQ(all.status, api::CheckStatus::pass);
  EXPECT_EQ(all.finding, "the 1,000 starts of the largest storm go out at once");

  api::Capabilities rest;
  rest.start_burst_limit = 640;
  auto limited = start_burst_check(p, rest, 1000);
  EXPECT_EQ(limited.status, api::CheckStatus::pass);  // the platform's own limit: nothing to change
  EXPECT_NE(limited.finding.find("640 of the 1,000 starts"), std::string::npos) << limited.finding;

  p.storm.start_concurrency = 64;
  auto held = start_burst_check(p, kubevirt, 1000);
  EXPECT_EQ(held.status, api::CheckStatus::warn);
  EXPECT_NE(held.finding.find("about 16 waves"), std::string::npos) << held.finding;
  EXPECT_FALSE(held.advice.empty());

  p.storm.mode = "ramp";
  p.storm.ramp_per_second = 10;
  auto ramp = start_burst_check(p, kubevirt, 100);
  EXPECT_EQ(ramp.status, api::CheckStatus::pass);
  EXPECT_NE(ramp.finding.find("over 10.0 s"), std::string::npos) << ramp.finding;
}

TEST(CheckTable, OneLinePerCheckAndTheAdviceUnderWhatDidNotPass) {
  std::vector<api::CheckResult> results = {
      {"API", api::CheckStatus::pass, "answered", "ignored for a pass"},
      {"golden image", api::CheckStatus::fail, "DataSource golden/x does not exist", "DataSources: y"},
      {"quota", api::CheckStatus::unknown, "not readable", ""}};
  EXPECT_EQ(check_table(results),
            "PASS    API           answered\n"
            "FAIL    golden image  DataSource golden/x does not exist\n"
            "                      \u2192 DataSources: y\n"
            "UNKNOWN quota         not readable\n");
  EXPECT_EQ(api::worst(results), api::CheckStatus::fail);
}

TEST(FirstFailure, NamesTheFirstFailedCheckAndTheOthers) {
  std::vector<api::CheckResult> results = {{"API", api::CheckStatus::pass, "answered", ""},
                                           {"nodes", api::CheckStatus::warn, "busy", "spread"}};
  EXPECT_FALSE(first_failure(results));
  results.push_back({"golden image", api::CheckStatus::fail, "missing", "create it"});
  results.push_back({"permissions", api::CheckStatus::fail, "denied", "grant"});
  auto e = first_failure(results);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message, "check golden image failed: missing (also failed: permissions)");
  EXPECT_EQ(e->hint, "create it");
}

}  // namespace
}  // namespace bootstorm::engine
