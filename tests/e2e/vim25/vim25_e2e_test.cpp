// vSphere on vim25 through the real `bootstorm run` on the embedded small lab: `platform.api` chosen,
// journaled and reported (vim25 by default, REST on request), and the bad inputs that end with exit 1 and a
// message naming what to fix before anything is created — a wrong password, a role without a privilege the
// run needs, a named snapshot that does not exist, an unreachable /sdk — and the plan error (exit 2) of a
// vSphere key on KubeVirt; and a storm run by a user holding only the privileges README.md lists.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "tests/support/lab_process.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/tools.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;
using nlohmann::json;

struct PlanRun : bootstorm::test_support::CliRun {
  fs::path run_dir;
};

class Vim25E2e : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = bootstorm::test_support::make_test_scratch_dir("vim25-e2e"); }
  void TearDown() override { bootstorm::test_support::finish_test_scratch_dir(dir_, HasFailure()); }

  // A plan of `vms` VMs on the small lab (2 by default); `platform_extra` are further platform keys (a line
  // each), `golden_extra` is added to the golden map.
  PlanRun run_plan(const std::vector<std::string>& platform_extra, const std::string& golden_extra,
                   const std::vector<std::string>& env = {}, const std::string& endpoint = "embedded",
                   const std::string& clone = "linked", int vms = 2) {
    const fs::path plan = dir_ / "plan.yaml";
    PlanYaml{.name = "vim25-e2e",
             .platform = {.kind = "vsphere", .endpoint = endpoint, .extra = platform_extra},
             .golden = "{vm: tiny-golden, clone: " + clone + golden_extra + "}",
             .scenarios = {{"two", {{"host-01", vms}}}},
             .storm = "{mode: simultaneous, timeout: 2m}",
             .ready = "{signal: guest_agent}",
             .cleanup = "always",
             .output = (dir_ / "runs").string()}
        .write(plan);
    PlanRun r{bootstorm::test_support::run_cli({"run", plan.string(), "--yes"}, dir_ / "run",
                                               std::chrono::seconds(300), env),
              {}};
    if (fs::exists(dir_ / "runs"))
      for (auto& entry : fs::directory_iterator(dir_ / "runs")) r.run_dir = entry.path();
    return r;
  }

  // The plan against a lab served on its own (the embedded lab takes whatever credentials the plan gives),
  // reached as a real vCenter is: its https URL, its CA, `user` and `password` from the environment.
  PlanRun run_plan_as(const std::string& user, const std::string& password,
                      const std::string& api = "vim25") {
    bootstorm::test_support::LabProcess lab("small", dir_ / "lab", dir_);
    EXPECT_TRUE(lab.wait_ready());
    return run_plan({"api: " + api, "credentials: {usernameEnv: BS_USER, passwordEnv: BS_PASSWORD}",
                     "tls: {caFile: " + lab.endpoints().value("caFile", std::string()) + "}"},
                    "", {"BS_USER=" + user, "BS_PASSWORD=" + password},
                    lab.endpoints().value("vcenter", std::string("https://127.0.0.1:1")));
  }

  static std::size_t created(const fs::path& run_dir) {
    if (run_dir.empty() || !fs::exists(run_dir / "journal.jsonl")) return 0;
    std::istringstream in(read_file(run_dir / "journal.jsonl"));
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
      n += line.find("\"type\":\"vm_created\"") != std::string::npos;
    return n;
  }

  fs::path dir_;
};

TEST_F(Vim25E2e, AutoSpeaksVim25AndSaysSoInTheReport) {
  PlanRun r = run_plan({}, "");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.all().find("platform API: vim25 (SOAP, /sdk)"), std::string::npos) << r.all();
  const json summary = json::parse(read_file(r.run_dir / "summary.json"));
  EXPECT_NE(summary["run"]["api"].get<std::string>().find("platform.api auto"), std::string::npos);
  EXPECT_NE(read_file(r.run_dir / "report.md").find("| Platform API | vim25 (SOAP, /sdk)"),
            std::string::npos);
  EXPECT_NE(read_file(r.run_dir / "journal.jsonl").find("\"type\":\"platform_connected\""),
            std::string::npos);
  EXPECT_EQ(summary["scenarios"][0]["cloneMethods"], json({{"linked", 2}})) << summary["scenarios"][0].dump();
}

// Each boot is seen when it happens: the storm's filter is on the lab before the starts are sent, so the
// guests' Tools come in the answers of several waits as they boot, not all in the one answer that a filter
// made after the boots would get (which stated each milestone's resolution as the whole wait since the
// start).
TEST_F(Vim25E2e, EachBootIsSeenWhenItHappensNotInOneLateAnswer) {
  constexpr int kVms = 60;
  PlanRun r = run_plan({"api: vim25"}, "", {}, "embedded", "linked", kVms);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  std::istringstream in(read_file(r.run_dir / "journal.jsonl"));
  std::set<double> instants;
  std::vector<double> resolutions, offsets;
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"type\":\"milestone\"") == std::string::npos) continue;
    const json e = json::parse(line);
    if (e.value("milestone", "") != "guest_agent") continue;
    instants.insert(e.at("wall").get<double>());
    resolutions.push_back(e.at("resolutionS").get<double>());
    offsets.push_back(e.at("offsetS").get<double>());
  }
  ASSERT_EQ(offsets.size(), static_cast<std::size_t>(kVms));
  EXPECT_GT(instants.size(), 1u) << "every guest's Tools came in one answer";
  // Each stated resolution is the time since the wait before its answer, not since the start: the median is
  // well under the storm's length (a filter made after the boots states every one as the whole storm).
  std::sort(resolutions.begin(), resolutions.end());
  const double longest = *std::max_element(offsets.begin(), offsets.end());
  EXPECT_LT(resolutions[resolutions.size() / 2], 0.5 * longest)
      << "median stated resolution " << resolutions[resolutions.size() / 2] << " s, the storm " << longest
      << " s";
}

TEST_F(Vim25E2e, RestOnRequestStillRunsTheStorm) {
  PlanRun r = run_plan({"api: rest"}, "");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.all().find("platform API: REST (/api) — platform.api rest"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("2/2 ready"), std::string::npos) << r.all();
  // The plan asks for linked clones; REST has none, so the run says what it really made.
  const json summary = json::parse(read_file(r.run_dir / "summary.json"));
  EXPECT_EQ(summary["scenarios"][0]["cloneMethods"], json({{"full", 2}})) << summary["scenarios"][0].dump();
  EXPECT_NE(read_file(r.run_dir / "report.md").find("Provisioning: 2 full clones in "), std::string::npos);
}

TEST_F(Vim25E2e, AWrongPasswordEndsBeforeAnythingIsCreated) {
  PlanRun r = run_plan_as("administrator@vsphere.local", "not-the-password");
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.all().find("rejected the user name or password"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("check platform.username and the password"), std::string::npos) << r.all();
  EXPECT_EQ(r.all().find("not-the-password"), std::string::npos) << "the password was printed";
  EXPECT_EQ(created(r.run_dir), 0u);
}

// The small lab's users (simulator/labs/small.yaml): `storm` holds exactly the privileges README.md lists,
// `no-power-on` all of them but VirtualMachine.Interact.PowerOn.
TEST_F(Vim25E2e, ARoleWithoutPowerOnEndsBeforeAnythingIsCreatedNamingIt) {
  PlanRun r = run_plan_as("no-power-on@vsphere.local", "no-power-on-lab-password");
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.all().find("user no-power-on@vsphere.local lacks 1 privilege the run needs"), std::string::npos)
      << r.all();
  EXPECT_NE(r.all().find("VirtualMachine.Interact.PowerOn on the clones' folder"), std::string::npos)
      << r.all();
  EXPECT_NE(r.all().find("is \"vm\""), std::string::npos)
      << r.all();  // the folder, as the vSphere Client names it
  EXPECT_NE(r.all().find("add it to the user's role"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("Administration > Access Control > Roles"), std::string::npos) << r.all();
  EXPECT_EQ(created(r.run_dir), 0u);
}

// REST cannot ask for privileges before the run: the refused starts fail, the console says why once, and the
// clones are cleaned up (their role may delete them).
TEST_F(Vim25E2e, OnRestARoleWithoutPowerOnFailsTheStartsSaysWhyOnceAndCleansUp) {
  PlanRun r = run_plan_as("no-power-on@vsphere.local", "no-power-on-lab-password", "rest");
  EXPECT_EQ(r.exit_code, 1) << r.all();
  const std::string said = "failed: HTTP 403 UNAUTHORIZED";
  const auto first = r.all().find(said);
  ASSERT_NE(first, std::string::npos) << r.all();
  EXPECT_EQ(r.all().find(said, first + 1), std::string::npos) << "the same refusal was logged twice\n"
                                                              << r.all();
  EXPECT_NE(r.all().find("cleanup: 2 VMs deleted"), std::string::npos) << r.all();
  EXPECT_EQ(created(r.run_dir), 2u);
  // Reached by its https URL, the lab still says what it is (REST: a header of its answers).
  const json summary = json::parse(read_file(r.run_dir / "summary.json"));
  EXPECT_EQ(summary["run"]["source"], "simulated");
  EXPECT_EQ(summary["run"]["lab"], "small");
  EXPECT_EQ(summary["platform"]["simulator"], "bootstorm lab small");
  EXPECT_EQ(summary["platform"]["product"], "VMware vCenter Server");
}

TEST_F(Vim25E2e, TheRoleReadmeListsIsEnoughForALinkedCloneStormAndItsCleanup) {
  PlanRun r = run_plan_as("storm@vsphere.local", "storm-lab-password");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.all().find("2/2 ready"), std::string::npos) << r.all();
  EXPECT_EQ(created(r.run_dir), 2u);
  EXPECT_EQ(r.all().find("NoPermission"), std::string::npos) << r.all();
  // Reached by its https URL, the lab still says what it is (vim25: about.fullName), and the host's facts
  // are the ones its profile gives.
  const json summary = json::parse(read_file(r.run_dir / "summary.json"));
  EXPECT_EQ(summary["run"]["source"], "simulated");
  EXPECT_EQ(summary["platform"]["simulator"], "bootstorm lab small");
  ASSERT_EQ(summary["platform"]["hosts"].size(), 1u);
  EXPECT_EQ(summary["platform"]["hosts"][0]["name"], "host-01");
  EXPECT_EQ(summary["platform"]["hosts"][0]["version"], "VMware ESXi 8.0.2 build-lab");
  EXPECT_EQ(summary["platform"]["hosts"][0]["cpuModel"], "simulated lab CPU");
  EXPECT_NE(read_file(r.run_dir / "report.md").find("\u2014 simulated lab"), std::string::npos);
}

// The same plan provisioned with linked clones and with full copies on one lab: the lab's truth counts the
// bytes every clone moved (datastore and host link), and each run's report says how long its provisioning
// took.
TEST_F(Vim25E2e, LinkedClonesMoveAtMostATenthOfTheBytesOfFullCopiesAndBothReportsSayHowLong) {
  const auto curl = bootstorm::test_support::find_tool("curl");
  if (!curl) BOOTSTORM_MISSING_TOOL("curl", "curl", "it reads the lab's truth independently");
  bootstorm::test_support::LabProcess lab("small", dir_ / "lab", dir_);
  ASSERT_TRUE(lab.wait_ready());
  const std::string endpoint = "lab:" + (dir_ / "lab").string();
  std::map<std::string, std::string> run_of;  // clone kind -> run id
  for (const std::string kind : {"linked", "full"}) {
    fs::remove_all(dir_ / "runs");
    PlanRun r = run_plan({"api: vim25"}, "", {}, endpoint, kind);
    ASSERT_EQ(r.exit_code, 0) << kind << "\n" << r.all();
    const std::string report = read_file(r.run_dir / "report.md");
    EXPECT_NE(report.find("Provisioning: 2 " + kind + " clones in "), std::string::npos) << report;
    const json summary = json::parse(read_file(r.run_dir / "summary.json"));
    EXPECT_EQ(summary["run"]["cloneKind"], kind);
    EXPECT_GT(summary["scenarios"][0]["provisioningS"].get<double>(), 0.0);
    EXPECT_EQ(summary["scenarios"][0]["powerOnCalls"], 1) << "one PowerOnMultiVM_Task";
    EXPECT_TRUE(summary["scenarios"][0]["powerOnSpreadMs"].is_number());
    run_of[kind] = summary["run"]["id"].get<std::string>();
  }
  const auto truth = bootstorm::test_support::run_process(
      {curl->string(), "-sS", "--cacert", lab.endpoints().at("caFile").get<std::string>(),
       lab.endpoints().at("vcenter").get<std::string>() + "/_lab/truth"},
      dir_ / "truth", std::chrono::seconds(30));
  ASSERT_EQ(truth.exit_code, 0) << truth.all();
  const json clones = json::parse(truth.out).at("clones");
  std::map<std::string, double> moved;  // clone kind -> MB through datastores and links
  std::map<std::string, int> counted;
  for (const auto& c : clones) {
    const std::string name = c.at("name");
    for (const auto& [kind, id] : run_of) {
      if (name.rfind("bs-" + id + "-", 0) != 0) continue;
      EXPECT_EQ(c.at("kind"), kind) << c.dump();
      moved[kind] += c.at("datastoreMB").get<double>() + c.at("linkMB").get<double>();
      ++counted[kind];
    }
  }
  ASSERT_EQ(counted["linked"], 2) << clones.dump();
  ASSERT_EQ(counted["full"], 2) << clones.dump();
  ASSERT_GT(moved["full"], 0.0);
  EXPECT_LE(moved["linked"], moved["full"] / 10)
      << "linked " << moved["linked"] << " MB, full " << moved["full"] << " MB";
}

TEST_F(Vim25E2e, ANamedSnapshotThatDoesNotExistEndsBeforeAnythingIsCreated) {
  PlanRun r = run_plan({"api: vim25"}, ", snapshot: no-such-snapshot");
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.all().find("golden VM tiny-golden in vCenter"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("has no snapshot named no-such-snapshot"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("set golden.snapshot to one of its snapshots"), std::string::npos) << r.all();
  EXPECT_EQ(created(r.run_dir), 0u);
}

TEST_F(Vim25E2e, AnUnreachableSdkEndsWithTheEndpointNamed) {
  // A port nothing listens on: bound, then closed.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string endpoint = "https://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  ::close(fd);
  PlanRun r = run_plan({"api: vim25", "credentials: {usernameEnv: BS_USER, passwordEnv: BS_PASSWORD}"}, "",
                       {"BS_USER=u", "BS_PASSWORD=p"}, endpoint);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.all().find(endpoint + "/sdk"), std::string::npos) << r.all();
  EXPECT_EQ(created(r.run_dir), 0u);
}

TEST_F(Vim25E2e, AVsphereKeyOnKubevirtIsAPlanError) {
  const fs::path plan = dir_ / "kubevirt.yaml";
  PlanYaml{.name = "k",
           .platform = {.kind = "kubevirt", .endpoint = "embedded"},
           .golden = "{dataSource: {name: win10-golden, namespace: openshift-virtualization-os-images}}",
           .scenarios = {{"s", {{"node-1", 1}}}},
           .storm = "{mode: simultaneous, powerOn: multi}"}
      .write(plan);
  auto r = bootstorm::test_support::run_cli({"run", plan.string(), "--yes"}, dir_ / "kube");
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.all().find("storm.powerOn applies only to platform kind vsphere"), std::string::npos)
      << r.all();
}

}  // namespace
