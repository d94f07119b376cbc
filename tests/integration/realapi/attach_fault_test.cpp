// The fault suite's Kubernetes faults that apply to a real server, with the lab attached as the cluster's
// KubeVirt and CDI controllers: bootstorm killed while it provisions (what reached the server is found by the
// run id and removed), and a desktop that never boots (the lab's model fault, set on the attached lab). The
// HTTP faults of the lab's front (5xx rates, latency, dropped watches) are not the real server's; its own
// refusals and ended watches are tested in attach_test.cpp and attach_watch_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/lab_attach_fixture.hpp"

namespace bootstorm::test_support {
namespace {

using json = nlohmann::json;
using std::chrono::steady_clock;

constexpr int kVms = 6;

class LabAttachFaultTest : public LabAttachTest {
 protected:
  // Clones of 2 s: a kill in provision lands while DataVolumes are cloning.
  LabAttachFaultTest() : LabAttachTest({}, {"profiles.tiny.cloneOverheadS=2"}) {}

  // Polls the run directory under `out` until `holds` is true of its journal; the run directory, or empty.
  static fs::path wait_for_journal(Child& child, const fs::path& out,
                                   const std::function<bool(const std::vector<json>&)>& holds) {
    for (const auto until = steady_clock::now() + std::chrono::seconds(90); steady_clock::now() < until;) {
      if (child.wait_for(std::chrono::milliseconds(0))) return {};
      const fs::path run_dir = run_dir_in(out);
      if (!run_dir.empty() && holds(read_journal(run_dir))) return run_dir;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return {};
  }
  // The run id: the run directory's last dash-separated part (NAME-TIMESTAMP-ID).
  static std::string run_id_of(const fs::path& run_dir) {
    const std::string name = run_dir.filename().string();
    return name.substr(name.rfind('-') + 1);
  }
  // The names of the server's objects of `kind` in `ns` that carry the run's label.
  std::vector<std::string> of_run(const std::string& kind, const std::string& ns, const std::string& run_id) {
    std::vector<std::string> names;
    // Named: a range-for over a temporary's ["items"] would read a destroyed object.
    const json listed = kube_json("admin", {"get", kind, "-n", ns, "-l", "bootstorm.io/run=" + run_id});
    for (const auto& item : listed.value("items", json::array())) names.push_back(item["metadata"]["name"]);
    return names;
  }
};

// SIGKILL while the run provisions (VMs created on the server, their DataVolumes cloning): nothing fired;
// what reached the server is found by its run id although the journal never heard of all of it, and
// `bootstorm cleanup` takes every VM, VMI and DataVolume of the run off the real server.
TEST_F(LabAttachFaultTest, SigkillDuringProvisionThenCleanupRemovesWhatReachedTheServer) {
  const std::string ns = "bootstorm-killed";
  const fs::path out = dir_ / "runs";
  const fs::path plan = write_plan("killed", ns, kVms, "{source: none}");
  auto child = spawn_bootstorm({"run", plan.string(), "--yes"});
  const fs::path run_dir = wait_for_journal(
      *child, out, [](const std::vector<json>& events) { return count_events(events, "vm_created") > 0; });
  ASSERT_FALSE(run_dir.empty()) << child->out() << child->err();
  child->kill_now();
  ASSERT_EQ(count_events(read_journal(run_dir), "storm_fired"), 0u) << "killed too late: not in provision";
  const std::string run_id = run_id_of(run_dir);
  ASSERT_FALSE(run_id.empty());
  // What the dead run had sent lands on the server.
  std::size_t on_server = 0;
  for (const auto until = steady_clock::now() + std::chrono::seconds(20); steady_clock::now() < until;) {
    const std::size_t now = of_run("virtualmachines.kubevirt.io", ns, run_id).size();
    if (now == on_server && now > 0) break;
    on_server = now;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_GT(on_server, 0u) << "the kill came before any VM reached the server";
  EXPECT_TRUE(of_run("virtualmachineinstances.kubevirt.io", ns, run_id).empty()) << "nothing was started";

  CliRun cleaned = bootstorm({"cleanup", run_dir.string()}, std::chrono::seconds(180));
  ASSERT_EQ(cleaned.exit_code, 0) << cleaned.out << cleaned.err;
  EXPECT_NE(cleaned.out.find("deleted " + std::to_string(on_server) + " VMs"), std::string::npos)
      << cleaned.out;
  json left;
  for (const auto until = steady_clock::now() + std::chrono::seconds(60); steady_clock::now() < until;) {
    left = json::array();
    for (const char* kind : {"virtualmachines.kubevirt.io", "virtualmachineinstances.kubevirt.io",
                             "datavolumes.cdi.kubevirt.io", "persistentvolumeclaims"})
      for (const auto& name : of_run(kind, ns, run_id)) left.push_back(std::string(kind) + " " + name);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_TRUE(left.empty()) << left.dump();
}

// A desktop that never boots (the attached lab's model holds it in firmware: `neverBootVms` on its own
// /_lab/faults): the run fails at the storm timeout with that VM's reason, the others are measured, and the
// truth agrees (running, never agent-connected).
TEST_F(LabAttachFaultTest, AVmThatNeverBootsFailsAtTheTimeoutWithTheReasonAndTheOthersAreMeasured) {
  const std::string ns = "bootstorm-stuck";
  const fs::path out = dir_ / "runs";
  // The settle leaves time to pick the victim once its name (with the run id) is known.
  const fs::path plan =
      write_plan("stuck", ns, kVms, "{source: none}", "{mode: simultaneous, timeout: 5s, settle: 5s}");
  auto child = spawn_bootstorm({"run", plan.string(), "--yes"});
  const fs::path run_dir = wait_for_journal(*child, out, [](const std::vector<json>& events) {
    return count_events(events, "vm_created") == static_cast<std::size_t>(kVms);
  });
  ASSERT_FALSE(run_dir.empty()) << child->out() << child->err();
  std::string victim;
  for (const auto& e : read_journal(run_dir))
    if (e.value("type", "") == "vm_created" && victim.empty()) victim = e.value("vm", "");
  const fs::path faults = dir_ / "faults.json";
  write_file(faults, json{{"neverBootVms", json::array({victim})}}.dump());
  CliRun set = run({kubectl_binary(), "--kubeconfig", (dir_ / "lab" / "kubeconfig").string(), "create",
                    "--raw", "/_lab/faults", "-f", faults.string()});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  ASSERT_EQ(count_events(read_journal(run_dir), "storm_fired"), 0u)
      << "the settle was over before the fault was set";

  const auto rc = child->wait_for(std::chrono::seconds(120));
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 1) << child->out() << child->err();
  EXPECT_NE(child->out().find(std::to_string(kVms - 1) + "/" + std::to_string(kVms) + " ready"),
            std::string::npos)
      << child->out();
  const json summary = json::parse(read_file(run_dir / "summary.json"), nullptr, false);
  ASSERT_TRUE(summary.is_object());
  const json& failures = summary["scenarios"][0]["failures"];
  ASSERT_EQ(failures.size(), 1u) << failures.dump();
  EXPECT_EQ(failures[0]["vm"], victim);
  EXPECT_NE(failures[0].value("reason", "").find("timeout waiting for guest_agent after 5 s"),
            std::string::npos)
      << failures.dump();
  const json t = truth();
  bool found = false;
  for (const auto& vm : t["vms"]) {
    if (vm.value("name", "") != victim) continue;
    found = true;
    EXPECT_TRUE(vm["milestones"].contains("running")) << vm.dump();
    EXPECT_FALSE(vm["milestones"].contains("guest_agent"))
        << "the lab did not hold the victim: " << vm.dump();
  }
  EXPECT_TRUE(found) << "the truth has no " << victim;
}

}  // namespace
}  // namespace bootstorm::test_support
