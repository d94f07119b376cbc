// vSphere on vim25 through the real `bootstorm run` on the embedded small lab: `platform.api` chosen,
// journaled and reported (vim25 by default, REST on request), and the bad inputs that end with exit 1 and a
// message naming what to fix before anything is created — a wrong password, a named snapshot that does not
// exist, an unreachable /sdk — and the plan error (exit 2) of a vSphere key on KubeVirt.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/lab_process.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::read_file;
using nlohmann::json;

struct PlanRun : bootstorm::test_support::CliRun {
  fs::path run_dir;
};

class Vim25E2e : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = bootstorm::test_support::make_test_scratch_dir("vim25-e2e"); }
  void TearDown() override { bootstorm::test_support::finish_test_scratch_dir(dir_, HasFailure()); }

  // A plan of 2 VMs on the small lab; `platform_extra` and `golden_extra` are added to those maps.
  PlanRun run_plan(const std::string& platform_extra, const std::string& golden_extra,
                   const std::vector<std::string>& env = {}, const std::string& endpoint = "embedded") {
    const fs::path plan = dir_ / "plan.yaml";
    std::ofstream(plan) << "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: vim25-e2e\n"
                        << "platform: {kind: vsphere, endpoint: " << endpoint << platform_extra << "}\n"
                        << "golden: {vm: tiny-golden, clone: linked" << golden_extra << "}\n"
                        << "scenarios: [{name: two, placement: [{host: host-01, vms: 2}]}]\n"
                        << "storm: {mode: simultaneous, timeout: 2m}\n"
                        << "ready: {signal: guest_agent}\ncleanup: always\noutput: "
                        << (dir_ / "runs").string() << "\n";
    PlanRun r{bootstorm::test_support::run_cli({"run", plan.string(), "--yes"}, dir_ / "run",
                                               std::chrono::seconds(300), env),
              {}};
    if (fs::exists(dir_ / "runs"))
      for (auto& entry : fs::directory_iterator(dir_ / "runs")) r.run_dir = entry.path();
    return r;
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
  PlanRun r = run_plan("", "");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.all().find("platform API: vim25 (SOAP, /sdk)"), std::string::npos) << r.all();
  const json summary = json::parse(read_file(r.run_dir / "summary.json"));
  EXPECT_NE(summary["run"]["api"].get<std::string>().find("platform.api auto"), std::string::npos);
  EXPECT_NE(read_file(r.run_dir / "report.md").find("| Platform API | vim25 (SOAP, /sdk)"),
            std::string::npos);
  EXPECT_NE(read_file(r.run_dir / "journal.jsonl").find("\"type\":\"platform_connected\""),
            std::string::npos);
}

TEST_F(Vim25E2e, RestOnRequestStillRunsTheStorm) {
  PlanRun r = run_plan(", api: rest", "");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.all().find("platform API: REST (/api) — platform.api rest"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("2/2 ready"), std::string::npos) << r.all();
}

TEST_F(Vim25E2e, AWrongPasswordEndsBeforeAnythingIsCreated) {
  // A lab served on its own (the embedded lab takes whatever credentials the plan gives), reached as a real
  // vCenter is: its https URL, its CA, the user from the environment.
  bootstorm::test_support::LabProcess lab("small", dir_ / "lab", dir_);
  ASSERT_TRUE(lab.wait_ready());
  const std::string url = lab.endpoints().at("vcenter");
  const std::string ca = lab.endpoints().at("caFile");
  PlanRun r = run_plan(
      ", api: vim25, credentials: {usernameEnv: BS_USER, passwordEnv: BS_PASSWORD}, tls: {caFile: " + ca +
          "}",
      "", {"BS_USER=" + lab.endpoints().at("username").get<std::string>(), "BS_PASSWORD=not-the-password"},
      url);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.all().find("rejected the user name or password"), std::string::npos) << r.all();
  EXPECT_NE(r.all().find("check platform.username and the password"), std::string::npos) << r.all();
  EXPECT_EQ(r.all().find("not-the-password"), std::string::npos) << "the password was printed";
  EXPECT_EQ(created(r.run_dir), 0u);
}

TEST_F(Vim25E2e, ANamedSnapshotThatDoesNotExistEndsBeforeAnythingIsCreated) {
  PlanRun r = run_plan(", api: vim25", ", snapshot: no-such-snapshot");
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
  PlanRun r = run_plan(", api: vim25, credentials: {usernameEnv: BS_USER, passwordEnv: BS_PASSWORD}", "",
                       {"BS_USER=u", "BS_PASSWORD=p"}, endpoint);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.all().find(endpoint + "/sdk"), std::string::npos) << r.all();
  EXPECT_EQ(created(r.run_dir), 0u);
}

TEST_F(Vim25E2e, AVsphereKeyOnKubevirtIsAPlanError) {
  const fs::path plan = dir_ / "kubevirt.yaml";
  std::ofstream(plan)
      << "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: k\n"
      << "platform: {kind: kubevirt, endpoint: embedded}\n"
      << "golden: {dataSource: {name: win10-golden, namespace: openshift-virtualization-os-images}}\n"
      << "scenarios: [{name: s, placement: [{host: node-1, vms: 1}]}]\n"
      << "storm: {mode: simultaneous, powerOn: multi}\n";
  auto r = bootstorm::test_support::run_cli({"run", plan.string(), "--yes"}, dir_ / "kube");
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.all().find("storm.powerOn applies only to platform kind vsphere"), std::string::npos)
      << r.all();
}

}  // namespace
