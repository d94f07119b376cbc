// The capacity search over a plan with a stand-in step runner: the step plans, the bounds, and what the
// result says when a step misses first, is interrupted or cannot run.
#include "orchestrator/sizing/capacity.hpp"

#include <gtest/gtest.h>

#include "orchestrator/sizing/capacity_report.hpp"
#include "results/slo_text.hpp"

namespace bootstorm::sizing {
namespace {

plan::StormPlan two_layouts() {
  plan::StormPlan p;
  p.name = "consolidation";
  p.platform.kind = "vsphere";
  p.repeat = 2;
  p.cleanup = "never";
  p.scenarios = {{"4x", {{"a", 6}, {"b", 6}, {"c", 6}, {"d", 6}}}, {"1x", {{"big", 24}}}};
  return p;
}

// A layout whose boots take 0.1 s per desktop on each host, with `capacity` per host fitting in memory.
StepRunner layout(int capacity, std::vector<int>* seen = nullptr) {
  return [capacity, seen](const plan::StormPlan& step, int per_host) {
    if (seen) seen->push_back(per_host);
    StepRun run;
    for (int r = 0; r < step.repeat; ++r) {
      results::ScenarioSummary s;
      s.vms = step.scenarios.front().total_vms();
      s.ready_milestone = "guest_agent";
      const int hosts = static_cast<int>(step.scenarios.front().placement.size());
      for (int i = 0; i < std::min(per_host, capacity) * hosts; ++i)
        s.boot_times_s.push_back(per_host * 0.1 + i * 0.001);
      run.storms.push_back(s);
    }
    run.binding.resource = per_host > capacity ? "memory" : "link";
    run.outcome = "completed";
    return run;
  };
}

TEST(Capacity, AStepPlanHasTheScaledScenarioAloneTheSloAndCleanupAlways) {
  const results::SloRecord slo = *results::parse_slo_text("p95 <= 60s");
  auto step = step_plan(two_layouts(), "4x", 50, slo, 3);
  ASSERT_TRUE(step);
  ASSERT_EQ(step->scenarios.size(), 1u);
  EXPECT_EQ(step->scenarios[0].name, "4x");
  EXPECT_EQ(step->scenarios[0].total_vms(), 200);
  EXPECT_EQ(step->repeat, 3);
  EXPECT_EQ(step->cleanup, "always");
  ASSERT_EQ(step->slo.size(), 1u);
  EXPECT_EQ(step->slo[0], (plan::Slo{"ready", "p95", 60, false}));
}

TEST(Capacity, TheSearchFindsTheCapacityAndWhatBoundItWhereItBroke) {
  CapacityOptions options;
  options.scenario = "1x";
  options.slo = *results::parse_slo_text("p95 <= 60s");
  auto planned = plan_search(two_layouts(), options);
  ASSERT_TRUE(planned);
  EXPECT_EQ(planned->start, 24);
  EXPECT_EQ(planned->repeat, 2);
  std::vector<int> shown;
  const CapacityResult r =
      search_capacity(*planned, two_layouts(), layout(384), nullptr,
                      [&shown](const CapacityStep& s) { shown.push_back(s.figures.per_host); });
  EXPECT_EQ(r.capacity, 384);
  ASSERT_EQ(shown.size(), r.steps.size());
  for (std::size_t i = 0; i < shown.size(); ++i) EXPECT_EQ(shown[i], r.steps[i].figures.per_host);
  EXPECT_EQ(r.first_miss, 385);
  EXPECT_EQ(r.binding_at, 385);
  EXPECT_EQ(r.binding.resource, "memory");
  EXPECT_EQ(r.knee, 24);  // 2.4 s at 24, 4.8 s at 48: the median doubles at once
  const auto lines =
      capacity_verdict({"consolidation", "vsphere", "embedded", "predicted", "tolly-2024", {}, "", ""}, r);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("capacity (predicted): 384 desktops per host"), std::string::npos) << lines[0];
  const auto j =
      capacity_json({"consolidation", "vsphere", "embedded", "predicted", "tolly-2024", {}, "", ""}, r);
  EXPECT_EQ(j["capacityPerHost"], 384);
  EXPECT_EQ(j["binding"]["resource"], "memory");
  EXPECT_EQ(j["steps"].size(), r.steps.size());
}

TEST(Capacity, BoundsComeFromMaxVmsOverTheHostsAndAFirstStepBeyondThemIsRefused) {
  CapacityOptions options;
  options.scenario = "4x";
  options.slo = *results::parse_slo_text("p95 <= 60s");
  options.max_vms = 100;
  auto planned = plan_search(two_layouts(), options);
  ASSERT_TRUE(planned);
  EXPECT_EQ(planned->max_per_host, 25);
  EXPECT_NE(planned->bound_note.find("--max-vms 100"), std::string::npos);
  std::vector<int> seen;
  const CapacityResult r = search_capacity(*planned, two_layouts(), layout(1000, &seen), nullptr);
  EXPECT_EQ(seen, (std::vector<int>{6, 12, 24, 25}));
  EXPECT_TRUE(r.reached_max);
  EXPECT_EQ(r.capacity, 25);

  options.start = 30;
  auto refused = plan_search(two_layouts(), options);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().what().find("beyond the search's bound"), std::string::npos)
      << refused.error().what();

  options.scenario = "";
  EXPECT_NE(plan_search(two_layouts(), options).error().what().find("--scenario"), std::string::npos);
  options.scenario = "2x";
  EXPECT_NE(plan_search(two_layouts(), options).error().what().find("no scenario named '2x'"),
            std::string::npos);
}

TEST(Capacity, AFirstStepThatMissesAnInterruptionAndAStepThatCannotRun) {
  CapacityOptions options;
  options.scenario = "1x";
  options.slo = *results::parse_slo_text("p95 <= 1s");  // 24 desktops take 2.4 s
  auto planned = plan_search(two_layouts(), options);
  ASSERT_TRUE(planned);
  const CapacityResult missed = search_capacity(*planned, two_layouts(), layout(384), nullptr);
  EXPECT_TRUE(missed.first_step_missed);
  EXPECT_FALSE(missed.capacity);
  EXPECT_EQ(missed.steps.size(), 1u);
  EXPECT_NE(capacity_verdict({}, missed)[0].find("already misses"), std::string::npos);

  options.slo = *results::parse_slo_text("p95 <= 60s");
  planned = plan_search(two_layouts(), options);
  int steps = 0;
  const CapacityResult stopped =
      search_capacity(*planned, two_layouts(), layout(384), [&steps] { return ++steps > 3; });
  EXPECT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.steps.size(), 3u);
  EXPECT_EQ(stopped.capacity, 96);

  const CapacityResult failed = search_capacity(
      *planned, two_layouts(),
      [](const plan::StormPlan&, int) {
        StepRun run;
        run.outcome = "error";
        run.error = make_error(ErrorKind::connect, "vCenter at https://vc did not answer");
        return run;
      },
      nullptr);
  ASSERT_TRUE(failed.error);
  EXPECT_TRUE(failed.steps.empty());
  EXPECT_FALSE(failed.capacity);
}

}  // namespace
}  // namespace bootstorm::sizing
