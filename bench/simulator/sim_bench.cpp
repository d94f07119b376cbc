// Simulator benchmark: the model's event loop at scale (a storm of N VMs in virtual time). The vCenter
// front's request rate over HTTPS is measured by VcenterFrontTest.DISABLED_Throughput in
// tests/integration/vcenter_front (run with --gtest_also_run_disabled_tests).
#include <benchmark/benchmark.h>

#include <chrono>

#include "orchestrator/plan/plan.hpp"
#include "orchestrator/sizing/predict.hpp"
#include "providers/vsphere/descriptor.hpp"
#include "providers/vsphere/settings.hpp"
#include "simulator/model/lab.hpp"

namespace {

using namespace bootstorm;

// N VMs created and started at the same instant in the small lab, run to completion in virtual time.
void BM_ModelStorm(benchmark::State& state) {
  auto spec = sim::model::load_lab_spec("small");
  if (!spec) {
    state.SkipWithError(spec.error().what().c_str());
    return;
  }
  const int n = static_cast<int>(state.range(0));
  for (auto _ : state) {
    sim::model::LabOptions options;
    options.mode = sim::model::LabOptions::TimeMode::virtual_time;
    options.virtual_start = 1.8e9;
    sim::model::Lab lab(*spec, options);
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      sim::model::Lab::CreateVmSpec vm;
      vm.name = "b-" + std::to_string(i);
      vm.profile = "tiny";
      vm.host_id = "host-0" + std::to_string(1 + i % 4);
      vm.created_by_front = "vcenter";
      ids.push_back(*lab.create_vm(vm));
    }
    for (const auto& id : ids) (void)lab.power_on(id, nullptr);
    lab.run_until_idle(lab.now() + 3600);
    benchmark::DoNotOptimize(lab.flow_stats().events_processed);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ModelStorm)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

// `bootstorm predict` without its files: a 1,000-VM scenario on tolly-2024 (linked clones of the golden VM
// through vCenter's admission, then the storm) in virtual time.
void BM_PredictThousandVmScenario(benchmark::State& state) {
  // Built in code; the kind's descriptor (pure data, no provider) says which front of the lab plays it.
  vsphere::register_platform_descriptor();
  plan::StormPlan plan;
  plan.name = "bench";
  plan.platform.kind = "vsphere";
  plan.platform.lab = "tolly-2024";
  vsphere::Settings golden;
  golden.vm = "win10-golden";
  golden.clone = "linked";
  plan.platform.settings = api::make_settings(golden);
  plan::Scenario scenario;
  scenario.name = "thousand";
  for (const char* host : {"r740-01", "r740-02", "r740-03", "r740-04"})
    scenario.placement.push_back({host, 190});
  scenario.placement.push_back({"r7625-01", 240});
  plan.scenarios = {scenario};
  plan.storm.timeout = std::chrono::minutes(30);
  plan.ready.signal = "guest_agent";
  sizing::PredictOptions options;
  options.plan_yaml = "bench";
  std::size_t ready = 0;
  for (auto _ : state) {
    auto run = sizing::simulate_plan(plan, options);
    if (!run) {
      state.SkipWithError(run.error().what().c_str());
      return;
    }
    ready = 0;
    for (const auto& [type, payload] : run->events) {
      if (type == "milestone" && payload.value("milestone", "") == "guest_agent") ++ready;
    }
  }
  state.counters["ready"] = static_cast<double>(ready);
}
BENCHMARK(BM_PredictThousandVmScenario)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
