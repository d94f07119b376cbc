// A 200-VM vim25 storm against an independent vCenter, driven by the real CLI: `bootstorm run` against
// govmomi's simulator (vcsim) over verified TLS — login, the run's snapshot, 200 linked clones, one
// PowerOnMultiVM_Task, milestones pushed through WaitForUpdatesEx — then vcsim's own state read back with
// RetrievePropertiesEx, and `bootstorm cleanup` leaving nothing of the run. vcsim simulates no guest: while
// the run waits for guest_agent, this test plays the guests, setting each powered-on clone's Tools state and
// IP through ReconfigVM_Task's extraConfig (SET.guest.*), as tests/README.md describes.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "protocol/vim25/xml_writer.hpp"
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "tests/support/lab_process.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/run_files.hpp"
#include "tests/support/run_task.hpp"
#include "tests/support/vcsim_process.hpp"
#include "tests/support/vim25_driver.hpp"

namespace {

namespace fs = std::filesystem;
using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using bootstorm::test_support::PlanYaml;
using bootstorm::testing::run_task;
using nlohmann::json;

constexpr int kHosts = 4;
constexpr int kVmsPerHost = 50;

class VcsimStorm : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bootstorm-vcsim-storm-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    vcsim_ = std::make_unique<test_support::VcsimProcess>(
        BOOTSTORM_VCSIM, dir_,
        std::vector<std::string>{"-cluster", "1", "-hosts", std::to_string(kHosts), "-vms", "1"});
    ASSERT_TRUE(vcsim_->ready()) << vcsim_->why_not();
    info_ = vcsim_->info();
    endpoint_ = vcsim_->endpoint();
    api::ProviderConfig config;
    config.kind = "vsphere";
    config.endpoint = endpoint_;
    config.ca_file = info_.at("caFile");
    config.max_concurrent = 8;
    transport_ = vsphere::make_http_transport(io_.get_executor(), config);
    session_ =
        std::make_unique<Session>(io_.get_executor(), *transport_,
                                  vsphere::SessionSettings{endpoint_, info_.at("username"),
                                                           info_.at("password"), std::chrono::seconds(30)});
    ASSERT_TRUE(run_task(io_, session_->login()));
  }
  void TearDown() override {
    session_.reset();
    transport_.reset();
    vcsim_.reset();
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // A vim25 plan over the first `hosts` hosts, `vms` linked clones on each; `storm` holds extra keys of the
  // storm block (", settle: 10s").
  fs::path write_plan(int hosts = kHosts, int vms = kVmsPerHost, const std::string& storm = "") {
    PlanYaml p{.name = "vcsim-storm",
               .platform = {.kind = "vsphere",
                            .endpoint = endpoint_,
                            .extra = {"api: vim25",
                                      "credentials: {usernameEnv: VCSIM_USER, passwordEnv: VCSIM_PASSWORD}",
                                      "tls: {caFile: " + info_.at("caFile").get<std::string>() + "}",
                                      "apiBudget: {requestsPerSecond: 2000, maxConcurrent: 32}"}},
               .golden = "{vm: " + info_.at("templateVm").at("name").get<std::string>() + ", clone: linked}",
               .scenarios = {{"vcsim", {}}},
               .storm = "{mode: simultaneous, powerOn: multi, timeout: 5m" + storm + "}",
               .ready = "{signal: guest_agent}",
               .cleanup = "never",
               .output = (dir_ / "runs").string()};
    for (int h = 0; h < hosts; ++h)
      p.scenarios[0].placement.push_back({info_.at("hosts")[h].at("name").get<std::string>(), vms});
    const fs::path plan = dir_ / "plan.yaml";
    p.write(plan);
    return plan;
  }

  std::vector<std::string> credentials_env() const {
    return {"VCSIM_USER=" + info_.at("username").get<std::string>(),
            "VCSIM_PASSWORD=" + info_.at("password").get<std::string>()};
  }

  struct StormRun {
    std::optional<int> exit_code;
    std::string out;  // stdout and stderr
    fs::path run_dir;
    std::set<std::string> played;
  };

  // `bootstorm run PLAN` while this test plays the guests; `during(played)` is called every 200 ms.
  StormRun run_storm(const fs::path& plan,
                     const std::function<void(const std::set<std::string>&)>& during = {}) {
    test_support::Child run({test_support::bootstorm_binary(), "run", plan.string(), "--yes"},
                            dir_ / "run.out", dir_ / "run.err", credentials_env());
    StormRun r;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (!r.exit_code && std::chrono::steady_clock::now() < deadline) {
      play_guests(r.played);
      if (during) during(r.played);
      r.exit_code = run.wait_for(std::chrono::milliseconds(200));
    }
    r.out = test_support::read_file(dir_ / "run.out") + test_support::read_file(dir_ / "run.err");
    if (fs::exists(dir_ / "runs"))
      for (const auto& e : fs::directory_iterator(dir_ / "runs")) r.run_dir = e.path();
    return r;
  }

  // The guest of every powered-on clone of the run that has not had one: Tools running and an address.
  std::size_t play_guests(std::set<std::string>& played) {
    test_support::Vim25Driver d(io_, *session_);
    std::vector<MoRef> tasks;
    std::size_t n = 0;
    for (auto& [name, vm] : d.vms({"runtime.powerState"})) {
      if (!name.starts_with("bs-") || played.count(name)) continue;
      const Value* power = vm.prop("runtime.powerState");
      if (!power || power->text != "poweredOn") continue;
      played.insert(name);
      const std::string ip =
          "10.20." + std::to_string(played.size() / 250) + "." + std::to_string(played.size() % 250 + 1);
      tasks.push_back(d.task_of(
          "ReconfigVM_Task",
          reconfig_vm_task_extra_config(
              vm.obj, {{"SET.guest.toolsRunningStatus", "guestToolsRunning"}, {"SET.guest.ipAddress", ip}})));
      ++n;
    }
    return n;
  }

  boost::asio::io_context io_;
  fs::path dir_;
  std::unique_ptr<test_support::VcsimProcess> vcsim_;
  json info_;
  std::string endpoint_;
  std::unique_ptr<vsphere::Transport> transport_;
  std::unique_ptr<Session> session_;
};

TEST_F(VcsimStorm, TwoHundredLinkedClonesPoweredOnTogetherWatchedAndCleanedUpThroughTheCli) {
  const int total = kHosts * kVmsPerHost;
  const std::vector<std::string> env = credentials_env();
  StormRun r = run_storm(write_plan());
  const std::string& out = r.out;
  ASSERT_TRUE(r.exit_code) << "the run did not end in 5 minutes\n" << out;
  ASSERT_EQ(*r.exit_code, 0) << out;
  EXPECT_NE(out.find(std::to_string(total) + "/" + std::to_string(total) + " ready"), std::string::npos)
      << out;
  EXPECT_NE(out.find("platform API: vim25"), std::string::npos) << out;
  EXPECT_EQ(r.played.size(), static_cast<std::size_t>(total));

  // The run directory: every VM ready, with running, guest_agent and ip_assigned observed.
  const fs::path run_dir = r.run_dir;
  ASSERT_FALSE(run_dir.empty());
  const json summary = json::parse(test_support::read_file(run_dir / "summary.json"));
  EXPECT_NE(summary["run"]["api"].get<std::string>().find("vim25"), std::string::npos);
  const std::string run_id = summary["run"]["id"];
  // vcsim says what it is (its vcsim.server.url setting): the run is simulated though its endpoint is a URL.
  EXPECT_EQ(summary["run"]["source"], "simulated");
  EXPECT_EQ(summary["run"]["simulated"], true);
  EXPECT_EQ(summary["platform"]["simulator"], "govmomi vcsim");
  EXPECT_EQ(summary["platform"]["version"], session_->service_content().about.version);
  ASSERT_FALSE(summary["platform"]["hosts"].empty());
  EXPECT_FALSE(summary["platform"]["hosts"][0].value("version", "").empty()) << summary["platform"].dump();
  EXPECT_NE(test_support::read_file(run_dir / "report.md").find("govmomi vcsim"), std::string::npos);

  // vcsim's own state: 200 clones of the run, powered on, each tagged with the run id.
  test_support::Vim25Driver d(io_, *session_);
  const MoRef cfm = session_->service_content().custom_fields_manager;
  int key = -1;
  for (const auto& o : d.properties({cfm}, "CustomFieldsManager", {"field"}))
    for (const Value* def : o.prop("field")->all("CustomFieldDef"))
      if (def->field_text("name") == "bootstorm.run") key = std::stoi(def->field_text("key"));
  ASSERT_GE(key, 0) << "the run made no custom attribute";
  int clones = 0, on = 0, tagged = 0;
  for (auto& [name, vm] : d.vms({"runtime.powerState", "customValue"})) {
    if (!name.starts_with("bs-" + run_id + "-")) continue;
    ++clones;
    on += vm.prop("runtime.powerState")->text == "poweredOn";
    for (const Value* v : vm.prop("customValue")->all("CustomFieldValue"))
      tagged += v->field_text("key") == std::to_string(key) && v->field_text("value") == run_id;
  }
  EXPECT_EQ(clones, total);
  EXPECT_EQ(on, total);
  EXPECT_EQ(tagged, total);
  const std::string golden = info_.at("templateVm").at("moid");
  auto snapshot_names = [&] {
    std::set<std::string> names;
    for (const auto& o : d.properties({{"VirtualMachine", golden}}, "VirtualMachine", {"snapshot"})) {
      if (const Value* info = o.prop("snapshot"))
        for (const auto& entry : snapshots_of(*info)) names.insert(entry.name);
    }
    return names;
  };
  EXPECT_TRUE(snapshot_names().count("bs-" + run_id + "-base")) << "the linked clones' snapshot";

  // Cleanup removes every clone and the snapshot.
  auto cleaned = test_support::run_process({test_support::bootstorm_binary(), "cleanup", run_dir.string()},
                                           dir_ / "cleanup", std::chrono::seconds(300), env);
  ASSERT_EQ(cleaned.exit_code, 0) << cleaned.all();
  EXPECT_NE(cleaned.out.find("deleted " + std::to_string(total) + " VMs"), std::string::npos)
      << cleaned.all();
  int left = 0;
  for (auto& [name, vm] : d.vms({"runtime.powerState"})) left += name.starts_with("bs-" + run_id + "-");
  EXPECT_EQ(left, 0);
  EXPECT_FALSE(snapshot_names().count("bs-" + run_id + "-base"));
}

// Milestones per VM in the journal: {vm: {milestone: times journaled}}.
std::map<std::string, std::map<std::string, int>> journaled_milestones(const std::vector<json>& events) {
  std::map<std::string, std::map<std::string, int>> m;
  for (const auto& e : events)
    if (e.value("type", "") == "milestone") ++m[e.value("vm", "")][e.value("milestone", "")];
  return m;
}

TEST_F(VcsimStorm, ASessionEndedByAnotherMidStormIsLoggedInAgainAndNoMilestoneIsLostOrRepeated) {
  const int hosts = 2, vms = 20, total = hosts * vms;
  std::vector<std::string> ended;
  StormRun r = run_storm(write_plan(hosts, vms), [&](const std::set<std::string>& played) {
    // A quarter of the guests up: an administrator ends bootstorm's session from the vSphere Client.
    if (!ended.empty() || played.size() < static_cast<std::size_t>(total / 4)) return;
    test_support::Vim25Driver d(io_, *session_);
    const MoRef sm = session_->service_content().session_manager;
    for (const auto& o : d.properties({sm}, "SessionManager", {"sessionList"})) {
      if (const Value* list = o.prop("sessionList"))
        for (const Value* s : list->all("UserSession"))
          if (s->field_text("key") != session_->session_key()) ended.push_back(s->field_text("key"));
    }
    if (ended.empty()) return;
    XmlWriter w("TerminateSession");
    w.moref("_this", sm);
    for (const auto& key : ended) w.leaf("sessionId", key);
    auto reply = d.call("TerminateSession", w.finish());
    EXPECT_TRUE(reply) << (reply ? "" : reply.error().what());
  });
  ASSERT_FALSE(ended.empty()) << "bootstorm's session never appeared in SessionManager.sessionList\n"
                              << r.out;
  ASSERT_TRUE(r.exit_code) << "the run did not end in 5 minutes\n" << r.out;
  ASSERT_EQ(*r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(std::to_string(total) + "/" + std::to_string(total) + " ready"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("is no longer authenticated: logging in again"), std::string::npos) << r.out;
  ASSERT_FALSE(r.run_dir.empty());
  const auto milestones = journaled_milestones(test_support::read_journal(r.run_dir));
  EXPECT_EQ(milestones.size(), static_cast<std::size_t>(total));
  for (const auto& [vm, m] : milestones) {
    for (const char* name : {"running", "guest_agent", "ip_assigned"}) {
      const auto it = m.find(name);
      EXPECT_EQ(it == m.end() ? 0 : it->second, 1) << vm << ": " << name;
    }
  }
}

TEST_F(VcsimStorm, AVmAlreadyOnWhenTheStormStartsFailsWithVcsimsReasonAndIsNotMeasured) {
  const int hosts = 2, vms = 5, total = hosts * vms;
  std::string early;
  // settle: the clones wait 8 s, off, before the starts: time for someone to power one on.
  StormRun r = run_storm(write_plan(hosts, vms, ", settle: 8s"), [&](const std::set<std::string>&) {
    if (!early.empty()) return;
    test_support::Vim25Driver d(io_, *session_);
    std::vector<std::pair<std::string, MoRef>> clones;
    for (auto& [name, vm] : d.vms({"runtime.powerState"})) {
      if (!name.starts_with("bs-")) continue;
      if (vm.prop("runtime.powerState")->text != "poweredOff") return;  // the storm has begun
      clones.emplace_back(name, vm.obj);
    }
    if (clones.size() < static_cast<std::size_t>(total)) return;
    early = clones.front().first;
    d.wait({d.task_of("PowerOnVM_Task", power_on_vm_task(clones.front().second))}, "power on " + early);
  });
  ASSERT_FALSE(early.empty()) << "the clones were never all there, off\n" << r.out;
  ASSERT_TRUE(r.exit_code) << "the run did not end in 5 minutes\n" << r.out;
  EXPECT_EQ(*r.exit_code, 1) << "a run with a VM that failed to start is a failed run\n" << r.out;
  EXPECT_NE(r.out.find(std::to_string(total - 1) + "/" + std::to_string(total) + " ready"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("already powered on before the storm started (" + early + ")"), std::string::npos)
      << r.out;
  ASSERT_FALSE(r.run_dir.empty());
  const std::vector<json> events = test_support::read_journal(r.run_dir);
  const auto all = journaled_milestones(events);
  EXPECT_FALSE(all.count(early)) << early << " booted before its start: nothing of it is measured";
  std::string reason;
  for (const auto& e : events)
    if (e.value("vm", "") == early && e.contains("reason")) reason = e["reason"].get<std::string>();
  EXPECT_NE(reason.find("InvalidPowerState"), std::string::npos) << "vcsim's own reason: " << reason;
  const json summary = json::parse(test_support::read_file(r.run_dir / "summary.json"));
  bool listed = false;
  for (const json& f : summary["scenarios"][0]["failures"])
    listed = listed || (f.value("vm", "") == early &&
                        f.value("reason", "").find("InvalidPowerState") != std::string::npos);
  EXPECT_TRUE(listed) << summary["scenarios"][0]["failures"].dump();
  EXPECT_NE(test_support::read_file(r.run_dir / "report.md").find(early), std::string::npos);
}

TEST_F(VcsimStorm, CheckPassesWhatVcsimCanProveSaysUnknownWhereItIsSilentAndFailsAMissingHost) {
  const std::vector<std::string> env = credentials_env();
  auto checked =
      test_support::run_process({test_support::bootstorm_binary(), "check", write_plan(2, 6).string()},
                                dir_ / "check", std::chrono::seconds(60), env);
  EXPECT_EQ(checked.exit_code, 0) << checked.all();
  EXPECT_TRUE(
      std::regex_search(checked.out, std::regex("PASS +API +answered: .*\\[govmomi vcsim\\], vim25 API")))
      << checked.out;
  EXPECT_TRUE(std::regex_search(checked.out, std::regex("PASS +inventory +2 hosts connected")))
      << checked.out;
  EXPECT_TRUE(std::regex_search(checked.out, std::regex("PASS +privileges "))) << checked.out;
  // vcsim's template has no Tools status: check cannot know, and says so rather than passing it.
  const std::string golden = info_.at("templateVm").at("name");
  EXPECT_TRUE(std::regex_search(checked.out, std::regex("UNKNOWN +golden VM Tools .*" + golden)))
      << checked.out;
  EXPECT_TRUE(std::regex_search(checked.out, std::regex("PASS +datastore space +datastore " +
                                                        info_.at("datastore").at("name").get<std::string>())))
      << checked.out;
  EXPECT_NE(checked.out.find("12 linked clones"), std::string::npos) << checked.out;
  // Nothing was created.
  test_support::Vim25Driver d(io_, *session_);
  for (const auto& [name, vm] : d.vms({"runtime.powerState"})) EXPECT_FALSE(name.starts_with("bs-")) << name;

  // A host vcsim does not have: check fails, naming it.
  const fs::path plan = write_plan(1, 2);
  std::string text = test_support::read_file(plan);
  const std::string host = info_.at("hosts")[0].at("name");
  text.replace(text.find(host), host.size(), "no-such-host-07");
  std::ofstream(plan) << text;
  auto missing = test_support::run_process({test_support::bootstorm_binary(), "check", plan.string()},
                                           dir_ / "check-missing", std::chrono::seconds(60), env);
  EXPECT_NE(missing.exit_code, 0) << missing.all();
  EXPECT_TRUE(std::regex_search(missing.all(), std::regex("FAIL +inventory .*no-such-host-07")))
      << missing.all();
}

}  // namespace
