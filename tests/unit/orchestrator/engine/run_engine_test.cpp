#include "orchestrator/engine/run_engine.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <regex>

#include "orchestrator/engine/journal_fold.hpp"
#include "tests/unit/orchestrator/engine/fake_provider.hpp"
#include "tests/unit/orchestrator/engine/test_support.hpp"

namespace bootstorm::engine {
namespace {

using std::chrono::milliseconds;

struct Harness {
  test::ScratchDir dir;
  test::FakeBehaviour behaviour;
  std::shared_ptr<test::FakeRecord> rec = std::make_shared<test::FakeRecord>();
  RunOptions options;
  std::optional<results::RunRecord> written_record;
  bool outputs_pass = true;
  api::ProviderConfig seen_config;

  Harness() {
    options.output_dir = dir.path();
    options.plan_yaml = "name: unit-plan\n";
    options.progress = Progress::Mode::none;
    options.handle_signals = false;
    options.observe_tick = milliseconds(10);
    options.stop_grace = milliseconds(500);
  }

  EngineHooks hooks() {
    EngineHooks h;
    auto factory = test::fake_factory(behaviour, rec);
    h.make_provider = [this, factory](boost::asio::any_io_executor ex, const api::ProviderConfig& c) {
      seen_config = c;
      return factory(ex, c);
    };
    h.write_outputs = [this](const std::filesystem::path&, const results::RunRecord& r) -> Expected<bool> {
      written_record = r;
      return outputs_pass;
    };
    return h;
  }

  RunResult run(const plan::StormPlan& plan) { return RunEngine(plan, options, hooks()).run(); }
};

void expect_same_record(const results::RunRecord& a, const results::RunRecord& b) {
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.outcome, b.outcome);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.ended_at, b.ended_at);
  ASSERT_EQ(a.scenarios.size(), b.scenarios.size());
  for (std::size_t i = 0; i < a.scenarios.size(); ++i) {
    EXPECT_EQ(a.scenarios[i].name, b.scenarios[i].name);
    EXPECT_EQ(a.scenarios[i].fire_skew_ms, b.scenarios[i].fire_skew_ms);
    EXPECT_EQ(a.scenarios[i].api_requests, b.scenarios[i].api_requests);
    EXPECT_EQ(a.scenarios[i].errors, b.scenarios[i].errors);
  }
  ASSERT_EQ(a.vms.size(), b.vms.size());
  for (std::size_t i = 0; i < a.vms.size(); ++i) {
    EXPECT_EQ(a.vms[i].name, b.vms[i].name);
    EXPECT_EQ(a.vms[i].status, b.vms[i].status);
    EXPECT_EQ(a.vms[i].reason, b.vms[i].reason);
    EXPECT_EQ(a.vms[i].ready_s, b.vms[i].ready_s);
    EXPECT_EQ(a.vms[i].clone_s, b.vms[i].clone_s);
    ASSERT_EQ(a.vms[i].milestones.size(), b.vms[i].milestones.size());
    for (auto& [m, rec] : a.vms[i].milestones) {
      EXPECT_EQ(rec.offset_s, b.vms[i].milestones.at(m).offset_s);
      EXPECT_EQ(rec.source, b.vms[i].milestones.at(m).source);
    }
  }
}

// Clones start round-robin over the hosts, not host after host: a platform's per-host cap on simultaneous
// clones then holds back one host's queue, not the whole phase.
TEST(RunEngine, ClonesStartOneHostAfterAnother) {
  Harness h;
  auto plan = test::small_plan(3, 2);
  plan.platform.api_budget.max_concurrent = 1;  // one clone at a time: the calls show the order
  auto result = h.run(plan);
  ASSERT_FALSE(result.error) << result.error->what();
  std::vector<std::string> hosts;
  for (const auto& call : h.rec->calls) {
    if (call.rfind("provision ", 0) != 0) continue;
    for (const auto& vm : result.record.vms)
      if ("provision " + vm.name == call) hosts.push_back(vm.host);
  }
  EXPECT_EQ(hosts,
            (std::vector<std::string>{"host-01", "host-02", "host-01", "host-02", "host-01", "host-02"}));
}

// The burst is not held to apiBudget.maxConcurrent: a plan with the default budget fires all its starts
// together; storm.startConcurrency is the one setting that holds them back.
TEST(RunEngine, TheStartBurstIgnoresMaxConcurrentUnlessThePlanSetsStartConcurrency) {
  for (int start_concurrency : {0, 3}) {
    Harness h;
    h.behaviour.start_block = milliseconds(50);  // each start holds its slot: waves would show
    auto plan = test::small_plan(6, 2);
    plan.platform.api_budget.max_concurrent = 4;
    plan.storm.start_concurrency = start_concurrency;
    auto result = h.run(plan);
    ASSERT_FALSE(result.error) << result.error->what();
    EXPECT_EQ(result.vms_ready, 12u);
    const std::size_t expected = start_concurrency > 0 ? 3u : 12u;
    EXPECT_EQ(h.rec->peak_starts_in_flight, expected) << "startConcurrency " << start_concurrency;
    EXPECT_EQ(h.rec->prepare_storm_expected, expected) << "startConcurrency " << start_concurrency;
  }
}

TEST(RunEngine, CompleteRunWritesTheRunDirectoryAndCleansUp) {
  Harness h;
  auto plan = test::small_plan(3, 2);
  plan.slo.push_back({"ready", "p95", 60, false});
  auto result = h.run(plan);
  ASSERT_FALSE(result.error) << result.error->what();
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.outcome, "completed");
  EXPECT_EQ(result.vms_total, 6u);
  EXPECT_EQ(result.vms_ready, 6u);

  // <output>/<plan>-<UTC yyyymmddThhmmss>-<6 hex>/, mode 0700.
  const std::string dirname = result.run_dir.filename().string();
  std::smatch m;
  ASSERT_TRUE(std::regex_match(dirname, m, std::regex("^unit-plan-\\d{8}T\\d{6}-([0-9a-f]{6})$"))) << dirname;
  const std::string run_id = m[1];
  EXPECT_EQ(result.record.run_id, run_id);
  EXPECT_EQ(result.run_dir.parent_path(), h.dir.path());
  struct stat st {};
  ASSERT_EQ(::stat(result.run_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(test::read_file(result.run_dir / "plan.yaml"), "name: unit-plan\n");
  EXPECT_TRUE(std::filesystem::exists(result.run_dir / "journal.jsonl"));

  // Names carry the run id and the scenario slug; every VM has the milestones the fake produced, in order.
  ASSERT_EQ(result.record.vms.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    const auto& vm = result.record.vms[i];
    EXPECT_TRUE(std::regex_match(vm.name, std::regex("^bs-" + run_id + "-fake-scenario-1-00[1-6]$")))
        << vm.name;
    EXPECT_EQ(vm.status, "ready");
    ASSERT_TRUE(vm.ready_s);
    const auto& ms = vm.milestones;
    ASSERT_TRUE(ms.count(api::Milestone::start_requested) && ms.count(api::Milestone::running) &&
                ms.count(api::Milestone::guest_agent));
    EXPECT_EQ(ms.at(api::Milestone::start_requested).offset_s, 0.0);
    EXPECT_EQ(ms.at(api::Milestone::start_requested).source, "client");
    EXPECT_GE(ms.at(api::Milestone::running).offset_s, 0.020);
    EXPECT_GE(ms.at(api::Milestone::guest_agent).offset_s, 0.040);
    EXPECT_EQ(*vm.ready_s, ms.at(api::Milestone::guest_agent).offset_s);
    EXPECT_EQ(ms.at(api::Milestone::guest_agent).source, "watch");
    EXPECT_GE(vm.clone_s, 0.005);
    EXPECT_GT(vm.start_requested_unix_s, 0);
  }
  // Placement: the first three on host-01, the next three on host-02.
  EXPECT_EQ(result.record.vms[0].host, "host-01");
  EXPECT_EQ(result.record.vms[5].host, "host-02");
  ASSERT_EQ(result.record.scenarios.size(), 1u);
  EXPECT_EQ(result.record.scenarios[0].vms, 6);
  EXPECT_EQ(result.record.scenarios[0].hosts, 2);
  EXPECT_GT(result.record.scenarios[0].api_requests, 0u);
  EXPECT_EQ(result.record.slo.size(), 1u);

  // The provider saw the run id and the budget; it was connected, observed and disconnected.
  EXPECT_EQ(h.seen_config.run_id, run_id);
  EXPECT_EQ(h.seen_config.max_concurrent, 64);
  EXPECT_TRUE(h.rec->disconnected);
  EXPECT_EQ(h.rec->observe_calls, 1u);
  EXPECT_EQ(h.rec->observe_returned, 1u);
  // cleanup: always -> everything created is gone.
  EXPECT_EQ(h.rec->destroyed.size(), 6u);
  EXPECT_TRUE(h.rec->live.empty());

  // The outputs were rendered from the same record, and the journal alone reproduces it.
  ASSERT_TRUE(h.written_record);
  expect_same_record(*h.written_record, result.record);
  auto replay = read_journal(result.run_dir / "journal.jsonl");
  ASSERT_TRUE(replay) << replay.error().what();
  EXPECT_TRUE(replay->has_run_ended);
  EXPECT_TRUE(replay->undeleted.empty());
  expect_same_record(replay->record, result.record);
}

TEST(RunEngine, TimeoutMarksVmsFailedWithReasonAndTheRunEnds) {
  Harness h;
  auto plan = test::small_plan(2, 1);
  plan.storm.timeout = milliseconds(300);
  auto run_id = std::string("c0ffee");
  h.options.run_id = run_id;
  const std::string stuck = "bs-c0ffee-fake-scenario-1-002";
  h.behaviour.per_vm[stuck] = {{api::Milestone::running, milliseconds(20)}};  // agent never starts
  auto result = h.run(plan);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.outcome, "failed");
  ASSERT_EQ(result.record.vms.size(), 2u);
  EXPECT_EQ(result.record.vms[0].status, "ready");
  const auto& vm = result.record.vms[1];
  EXPECT_EQ(vm.name, stuck);
  EXPECT_EQ(vm.status, "failed");
  EXPECT_TRUE(std::regex_match(
      vm.reason,
      std::regex(R"(^timeout waiting for guest_agent after 0\.3 s \(last seen: running at 0\.\d s\)$)")))
      << vm.reason;
  EXPECT_FALSE(vm.ready_s);
  EXPECT_EQ(h.rec->destroyed.size(), 2u);  // cleanup: always
}

TEST(RunEngine, ProvisionAndStartFailuresAreRecordedAndTheRestIsMeasured) {
  Harness h;
  h.options.run_id = "abcdef";
  h.behaviour.provision_fail = {"bs-abcdef-fake-scenario-1-001"};
  h.behaviour.start_fail = {"bs-abcdef-fake-scenario-1-002"};
  auto plan = test::small_plan(4, 1);
  plan.cleanup = "on-success";
  auto result = h.run(plan);
  EXPECT_EQ(result.exit_code, 1);
  ASSERT_EQ(result.record.vms.size(), 4u);
  std::map<std::string, const results::VmRecord*> by;
  for (auto& vm : result.record.vms) by[vm.name] = &vm;
  EXPECT_EQ(by.at("bs-abcdef-fake-scenario-1-001")->status, "failed");
  EXPECT_NE(by.at("bs-abcdef-fake-scenario-1-001")->reason.find("datastore full"), std::string::npos);
  EXPECT_EQ(by.at("bs-abcdef-fake-scenario-1-002")->status, "failed");
  EXPECT_EQ(by.at("bs-abcdef-fake-scenario-1-002")->reason.rfind("start failed: ", 0), 0u);
  EXPECT_EQ(by.at("bs-abcdef-fake-scenario-1-003")->status, "ready");
  EXPECT_EQ(by.at("bs-abcdef-fake-scenario-1-004")->status, "ready");
  ASSERT_FALSE(result.record.scenarios[0].errors.empty());
  // on-success and the scenario failed: the VMs are kept for inspection, and the journal lists them.
  EXPECT_TRUE(h.rec->destroyed.empty());
  auto replay = read_journal(result.run_dir / "journal.jsonl");
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->undeleted.size(), 3u);
}

TEST(RunEngine, InterruptMidStormStopsStartsKeepsJournalAndCleansUp) {
  Harness h;
  h.options.run_id = "deadbe";
  auto plan = test::small_plan(10, 1);
  plan.storm.mode = "ramp";
  plan.storm.ramp_per_second = 50;
  int starts = 0;
  CancelSignal interrupt = h.options.interrupt;
  h.behaviour.on_start = [&](const std::string&) {
    if (++starts == 3) interrupt.cancel();
  };
  auto result = h.run(plan);
  EXPECT_EQ(result.exit_code, 130);
  EXPECT_EQ(result.outcome, "interrupted");
  EXPECT_EQ(h.rec->written.size(), 3u);  // no start after the interrupt
  // cleanup: always, also when interrupted: all 10 clones removed.
  EXPECT_EQ(h.rec->destroyed.size(), 10u);
  auto replay = read_journal(result.run_dir / "journal.jsonl");
  ASSERT_TRUE(replay);
  EXPECT_TRUE(replay->has_run_ended);
  EXPECT_EQ(replay->record.outcome, "interrupted");
  EXPECT_TRUE(replay->undeleted.empty());
  std::size_t not_started = 0;
  for (auto& vm : replay->record.vms) not_started += vm.status == "not_started";
  EXPECT_EQ(not_started, 7u);
}

TEST(RunEngine, SigintIsHandledLikeCtrlC) {
  Harness h;
  h.options.handle_signals = true;
  h.options.run_id = "5161a1";
  auto plan = test::small_plan(6, 1);
  plan.storm.mode = "ramp";
  plan.storm.ramp_per_second = 50;
  plan.cleanup = "never";
  int starts = 0;
  h.behaviour.on_start = [&](const std::string&) {
    if (++starts == 2) ::raise(SIGINT);
  };
  auto result = h.run(plan);
  EXPECT_EQ(result.exit_code, 130);
  EXPECT_LT(h.rec->written.size(), 6u);
  EXPECT_TRUE(h.rec->destroyed.empty());  // cleanup: never
  auto replay = read_journal(result.run_dir / "journal.jsonl");
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->undeleted.size(), 6u);  // left for `bootstorm cleanup`
}

TEST(RunEngine, ConnectFailureEndsTheRunWithExit1) {
  Harness h;
  h.behaviour.fail_connect = true;
  auto result = h.run(test::small_plan());
  EXPECT_EQ(result.exit_code, 1);
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->kind, ErrorKind::connect);
  EXPECT_TRUE(h.rec->live.empty());
}

// The plan is valid and the platform cannot take it as it is: a failed check, exit 1 (exit 2 is for usage
// errors and invalid plans), with nothing created.
TEST(RunEngine, MissingInventoryFailsTheChecksWithExit1AndNothingCreated) {
  Harness h;
  h.behaviour.fail_inventory = true;
  auto result = h.run(test::small_plan());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(h.rec->live.empty());
  ASSERT_TRUE(result.error);
  EXPECT_NE(result.error->message.find("missing-host"), std::string::npos);
}

TEST(RunEngine, SloMissFromTheOutputsIsExit1) {
  Harness h;
  h.outputs_pass = false;
  auto result = h.run(test::small_plan(1, 1));
  EXPECT_EQ(result.outcome, "completed");
  EXPECT_FALSE(result.slo_passed);
  EXPECT_EQ(result.exit_code, 1);
}

TEST(RunEngine, DryRunCreatesNothingOnDisk) {
  Harness h;
  h.options.dry_run = true;
  auto result = h.run(test::small_plan(2, 1));
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(result.run_dir.empty());
  EXPECT_TRUE(h.seen_config.dry_run);
  EXPECT_TRUE(std::filesystem::is_empty(h.dir.path()));
  EXPECT_EQ(h.rec->observe_calls, 0u);
}

TEST(RunEngine, AProviderThatNeverStopsObservingDoesNotHangTheRun) {
  Harness h;
  h.behaviour.observe_ignores_stop = true;
  h.options.stop_grace = milliseconds(100);
  auto result = h.run(test::small_plan(2, 1));
  EXPECT_EQ(result.outcome, "completed");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(h.rec->observe_returned, 0u);
}

TEST(RunEngine, RepeatsGetDistinctNamesAndScenarioFilterApplies) {
  Harness h;
  h.options.run_id = "aaaaaa";
  h.options.repeat = 2;
  auto plan = test::small_plan(2, 1);
  plan::Scenario other;
  other.name = "Other";
  other.placement.push_back({"host-09", 1});
  plan.scenarios.push_back(other);
  h.options.only_scenario = "Fake Scenario #1";
  auto result = h.run(plan);
  ASSERT_EQ(result.record.scenarios.size(), 2u);
  EXPECT_EQ(result.record.scenarios[1].repeat, 2);
  std::vector<std::string> names;
  for (auto& vm : result.record.vms) names.push_back(vm.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"bs-aaaaaa-fake-scenario-1-001", "bs-aaaaaa-fake-scenario-1-002",
                                      "bs-aaaaaa-fake-scenario-1-003", "bs-aaaaaa-fake-scenario-1-004"}));
}

// A real listening socket on loopback (port 0): the engine's TCP probe must find it and record port_open.
TEST(RunEngine, PortProbeRecordsPortOpen) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 64), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);

  Harness h;
  h.behaviour.ip = "127.0.0.1";
  auto plan = test::small_plan(2, 1);
  plan.ready.signal = "port_open";
  plan.ready.port = port;
  h.options.probe_interval = milliseconds(20);
  auto result = h.run(plan);
  ::close(fd);
  EXPECT_EQ(result.exit_code, 0);
  for (auto& vm : result.record.vms) {
    ASSERT_TRUE(vm.milestones.count(api::Milestone::port_open)) << vm.name;
    const auto& po = vm.milestones.at(api::Milestone::port_open);
    EXPECT_EQ(po.source, "probe");
    EXPECT_EQ(po.detail, "127.0.0.1:" + std::to_string(port));
    EXPECT_GE(po.offset_s, vm.milestones.at(api::Milestone::ip_assigned).offset_s);
    EXPECT_GT(po.resolution_s, 0);
    EXPECT_EQ(vm.status, "ready");
  }
}

TEST(RunEngine, PortOpenWithoutAPortIsInvalidInput) {
  Harness h;
  auto plan = test::small_plan(1, 1);
  plan.ready.signal = "port_open";
  auto result = h.run(plan);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(result.run_dir.empty());
}

TEST(RunEngine, LabStateDirEndpointIsSimulatedAndUsesItsEndpoints) {
  Harness h;
  test::ScratchDir state;
  {
    std::ofstream out(state.path() / "endpoints.json");
    out << R"({"vcenter": "https://127.0.0.1:1234", "kube": "https://127.0.0.1:1235", "kubeconfig": ")"
        << (state.path() / "kubeconfig").string()
        << R"(", "caFile": "/tmp/ca.pem", "username": "lab-admin", "password": "lab-pass-123", "lab": "tolly-2024"})";
  }
  auto plan = test::small_plan(1, 1);
  plan.platform.kind = "vsphere";
  plan.platform.endpoint = "lab:" + state.path().string();
  auto result = h.run(plan);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(h.seen_config.endpoint, "https://127.0.0.1:1234");
  EXPECT_EQ(h.seen_config.username, "lab-admin");
  EXPECT_EQ(h.seen_config.password, "lab-pass-123");
  EXPECT_EQ(h.seen_config.ca_file, "/tmp/ca.pem");
  EXPECT_TRUE(result.record.simulated);
  EXPECT_EQ(result.record.lab, "tolly-2024");
  // The password is a secret: it never reaches the journal.
  EXPECT_EQ(test::read_file(result.run_dir / "journal.jsonl").find("lab-pass-123"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm::engine
