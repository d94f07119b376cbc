// The lab attached to a real kube-apiserver as the cluster's KubeVirt and CDI controllers
// (simulator/attach): what it registers there, and what a client's objects there become. The lab's own
// Kubernetes front keeps serving its local view, which these tests compare with the server's.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "tests/support/kubevirt_manifests.hpp"
#include "tests/support/lab_attach_fixture.hpp"

namespace bootstorm::test_support {
namespace {

using json = nlohmann::json;
using std::chrono::steady_clock;

// The lab's nodes are registered on the server, Ready, as the lab's own front lists them; its golden image is
// there as a bound PVC and a DataSource; a DataVolume a client creates there is cloned, and its PVC bound.
TEST_F(LabAttachTest, RegistersTheLabsNodesAndClonesADataVolumeAClientCreatesThere) {
  const json lab_list = lab_json({"get", "nodes"});
  const json server_list = kube_json("admin", {"get", "nodes"});
  std::set<std::string> lab_nodes, server_nodes;
  for (const auto& node : lab_list["items"]) lab_nodes.insert(node["metadata"]["name"]);
  for (const auto& node : server_list["items"]) {
    server_nodes.insert(node["metadata"]["name"]);
    EXPECT_TRUE(condition_true(node, "Ready")) << node.dump();
  }
  ASSERT_FALSE(lab_nodes.empty());
  EXPECT_EQ(server_nodes, lab_nodes);

  const json golden_pvc = server_object({"pvc", "-n", "golden", "tiny-golden"});
  ASSERT_TRUE(golden_pvc.is_object()) << "the golden image's PVC is not on the server";
  EXPECT_EQ(golden_pvc.value("/status/phase"_json_pointer, ""), "Bound");
  EXPECT_TRUE(server_object({"datasources.cdi.kubevirt.io", "-n", "golden", "tiny-golden"}).is_object());

  admin_apply(std::string("apiVersion: cdi.kubevirt.io/v1beta1\nkind: DataVolume\nmetadata: {name: clone, "
                          "namespace: ") +
              kAttachedNamespace +
              "}\nspec:\n  sourceRef: {kind: DataSource, name: tiny-golden, namespace: golden}\n"
              "  storage: {resources: {requests: {storage: 1Gi}}}\n");
  const json dv = wait_for(
      {"datavolumes.cdi.kubevirt.io", "-n", kAttachedNamespace, "clone"},
      [](const json& o) { return o.is_object() && o.value("/status/phase"_json_pointer, "") == "Succeeded"; },
      std::chrono::seconds(90));
  ASSERT_TRUE(dv.is_object());
  EXPECT_EQ(dv.value("/status/phase"_json_pointer, ""), "Succeeded") << dv.dump(1);
  const json pvc = server_object({"pvc", "-n", kAttachedNamespace, "clone"});
  ASSERT_TRUE(pvc.is_object()) << "the clone's PVC is not on the server";
  EXPECT_EQ(pvc.value("/status/phase"_json_pointer, ""), "Bound") << pvc.dump(1);
  // Owned by the DataVolume as the server knows it (the lab's own uids mean nothing there).
  EXPECT_EQ(pvc.value("/metadata/ownerReferences/0/uid"_json_pointer, ""),
            dv.value("/metadata/uid"_json_pointer, "-"));
  const json stats = attach_->stats();
  EXPECT_EQ(stats.value("givenUp", -1), 0) << stats.dump();
  // Every object the lab wrote fits the CRDs' structural schemas: the server pruned no field of it.
  for (const auto& [warning, count] : stats["warnings"].items())
    EXPECT_EQ(warning.find("unknown field"), std::string::npos) << warning << " (" << count << " answers)";
}

// A VirtualMachine a client starts on the server boots in the lab: its VirtualMachineInstance appears there,
// scheduled on a lab node, Running, with the guest agent connected and an IP. Each milestone is "visible" in
// the lab's truth at the moment the server accepted the write carrying it: after the model reached it, and
// before the test read it back. Deleting the VM on the server takes its VMI, DataVolume and PVC with it.
TEST_F(LabAttachTest, AVirtualMachineStartedThereBootsAndEachMilestoneIsVisibleWhenTheServerAcceptedIt) {
  admin_apply(vm_manifest(kAttachedNamespace, "desk-0", "Always").dump());
  const json vmi = wait_for(
      {"virtualmachineinstances.kubevirt.io", "-n", kAttachedNamespace, "desk-0"},
      [](const json& o) {
        return condition_true(o, "AgentConnected") &&
               !o.value("/status/interfaces/0/ipAddress"_json_pointer, "").empty();
      },
      std::chrono::seconds(120));
  const double seen =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  ASSERT_TRUE(vmi.is_object()) << "no VirtualMachineInstance on the server";
  EXPECT_EQ(vmi.value("/status/phase"_json_pointer, ""), "Running") << vmi.dump(1);
  ASSERT_TRUE(condition_true(vmi, "AgentConnected")) << vmi.dump(1);
  const json lab_list = lab_json({"get", "nodes"});
  std::set<std::string> lab_nodes;
  for (const auto& node : lab_list["items"]) lab_nodes.insert(node["metadata"]["name"]);
  EXPECT_TRUE(lab_nodes.count(vmi.value("/status/nodeName"_json_pointer, ""))) << vmi.dump(1);
  const json vm = server_object({"virtualmachines.kubevirt.io", "-n", kAttachedNamespace, "desk-0"});
  EXPECT_EQ(vmi.value("/metadata/ownerReferences/0/uid"_json_pointer, ""),
            vm.value("/metadata/uid"_json_pointer, "-"));

  const json t = truth();
  const json* entry = nullptr;
  for (const auto& v : t["vms"])
    if (v.value("name", "") == "desk-0") entry = &v;
  ASSERT_NE(entry, nullptr) << t.dump().substr(0, 2000);
  for (const char* milestone : {"scheduled", "running", "guest_agent", "ip_assigned"}) {
    SCOPED_TRACE(milestone);
    ASSERT_TRUE((*entry)["milestones"].contains(milestone)) << entry->dump(1);
    ASSERT_TRUE((*entry)["visible"].contains(milestone)) << entry->dump(1);
    const double reached = (*entry)["milestones"][milestone];
    const double visible = (*entry)["visible"][milestone];
    EXPECT_GE(visible, reached);
    EXPECT_LE(visible, seen);
  }

  CliRun deleted = kubectl(
      "admin", {"delete", "virtualmachine.kubevirt.io", "-n", kAttachedNamespace, "desk-0", "--wait=false"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  for (const std::vector<std::string>& what :
       {std::vector<std::string>{"virtualmachineinstances.kubevirt.io", "-n", kAttachedNamespace, "desk-0"},
        std::vector<std::string>{"datavolumes.cdi.kubevirt.io", "-n", kAttachedNamespace, "desk-0-root"},
        std::vector<std::string>{"pvc", "-n", kAttachedNamespace, "desk-0-root"}}) {
    EXPECT_TRUE(wait_for(
                    what, [](const json& o) { return o.is_null(); }, std::chrono::seconds(60))
                    .is_null())
        << what[0] << " is still on the server";
  }
}

// bootstorm's own CLI, as deploy/kubernetes/rbac.yaml's least-privilege service account, storms twelve
// desktops through the real API server with the lab attached: every VM ready through the real watch, the run
// labelled simulated (the lab's virt-api says it is the lab), every milestone it recorded one the lab made
// visible there, and cleanup leaves no VirtualMachine behind.
TEST_F(LabAttachTest, BootstormStormsThroughTheRealApiServerAsItsLeastPrivilegeUserLabelledSimulated) {
  constexpr int kVms = 12;
  const fs::path out = dir_ / "runs";
  // The lab's query API, found through the monitoring Route the lab registered on the server; it takes the
  // lab's own token (a cluster's thanos-querier would ask the API server about the caller's).
  const fs::path plan = write_plan(
      "attached", "bootstorm-attached", kVms,
      "{caFile: " + (dir_ / "lab" / "ca.pem").string() + ", tokenFile: " + lab_token_file().string() + "}");
  auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()}, std::chrono::seconds(240));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty());

  const json summary = json::parse(read_file(run_dir / "summary.json"));
  EXPECT_EQ(summary["run"]["simulated"], true) << summary["run"].dump();
  EXPECT_EQ(summary["platform"]["simulator"], "bootstorm lab small");
  // The API server is the real one.
  CliRun version = kubectl("bootstorm", {"version", "-o", "json"});
  ASSERT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(summary["platform"]["version"], json::parse(version.out)["serverVersion"]["gitVersion"]);

  const auto rows = read_csv(run_dir / "vms.csv");
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(kVms));
  for (const auto& row : rows)
    EXPECT_EQ(row.at("status"), "ready") << row.at("vm") << ": " << row.at("reason");

  // Each milestone the run recorded from the watch, against when the server accepted the write carrying it.
  const json t = truth();
  std::map<std::string, json> truth_by_name;
  for (const auto& vm : t["vms"]) truth_by_name[vm["name"].get<std::string>()] = vm;
  int compared = 0;
  for (const json& event : read_journal(run_dir)) {
    if (event.value("type", "") != "milestone" || event.value("source", "") != "watch") continue;
    const std::string vm = event.value("vm", ""), milestone = event.value("milestone", "");
    SCOPED_TRACE(vm + " " + milestone);
    ASSERT_TRUE(truth_by_name.count(vm));
    const json& entry = truth_by_name[vm];
    ASSERT_TRUE(entry["visible"].contains(milestone)) << entry.dump();
    const double seen = event["wall"], visible = entry["visible"][milestone];
    const double since = entry["visibleSince"][milestone], reached = entry["milestones"][milestone];
    // The server accepted the write within [since, visible]: the watch cannot show it before the lab sent it
    // (nor before the model reached it), and shows it soon after the answer.
    EXPECT_LE(reached, since);
    EXPECT_LE(since, visible);
    EXPECT_GE(seen, since - 0.002);
    EXPECT_LE(seen, visible + 1.0);
    ++compared;
  }
  EXPECT_GE(compared, kVms * 3);

  // `bootstorm cleanup` takes the run's VMs off the server, and the lab takes what they owned.
  auto cleaned = bootstorm({"-v", "cleanup", run_dir.string()}, std::chrono::seconds(120));
  ASSERT_EQ(cleaned.exit_code, 0) << cleaned.out << cleaned.err;
  EXPECT_TRUE(kube_json("admin", {"get", "virtualmachines.kubevirt.io", "-A"})["items"].empty());
  json left;
  for (const auto until = steady_clock::now() + std::chrono::seconds(30); steady_clock::now() < until;) {
    left = kube_json("admin", {"get", "virtualmachineinstances.kubevirt.io,datavolumes.cdi.kubevirt.io,pvc",
                               "-n", "bootstorm-attached"});
    if (left["items"].empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_TRUE(left["items"].empty()) << left.dump(1).substr(0, 2000);
}

// API Priority and Fairness on the real server: bootstorm's service account gets a priority level of its own
// with a few seats and no queue, so that the apiserver answers part of a simultaneous start burst with 429
// and Retry-After. No start is lost: every VM is ready; the throttled answers are counted in summary.json and
// the report; and the starts it refused were sent again no sooner than Retry-After said (the fire skew, first
// to last start written, spans the second kube-apiserver asks for).
TEST_F(LabAttachTest, StartsApiPriorityAndFairnessRefusesAreSentAgainAfterRetryAfterAndCounted) {
  admin_apply(
      "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: PriorityLevelConfiguration\n"
      "metadata: {name: bootstorm-tight}\n"
      "spec: {type: Limited, limited: {nominalConcurrencyShares: 1, lendablePercent: 0, "
      "limitResponse: {type: Reject}}}\n"
      "---\napiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: "
      "bootstorm-tight}\n"
      "spec:\n  priorityLevelConfiguration: {name: bootstorm-tight}\n  matchingPrecedence: 500\n"
      "  distinguisherMethod: {type: ByUser}\n  rules:\n"
      "  - subjects: [{kind: ServiceAccount, serviceAccount: {name: bootstorm, namespace: bootstorm}}]\n"
      "    resourceRules: [{verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], "
      "clusterScope: true}]\n"
      "    nonResourceRules: [{verbs: ['*'], nonResourceURLs: ['*']}]\n");
  constexpr int kVms = 60;
  const fs::path out = dir_ / "runs";
  const fs::path plan = write_plan("throttled", "bootstorm-throttled", kVms, "{source: none}");
  auto r = bootstorm({"run", plan.string(), "--yes"}, std::chrono::seconds(240));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty());
  const auto rows = read_csv(run_dir / "vms.csv");
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(kVms));
  for (const auto& row : rows)
    EXPECT_EQ(row.at("status"), "ready") << row.at("vm") << ": " << row.at("reason");

  const json summary = json::parse(read_file(run_dir / "summary.json"));
  const json& scenario = summary["scenarios"][0];
  const json& answers = scenario["apiAnswers"];
  const int throttled = answers.value("throttled", 0);
  ASSERT_GT(throttled, 0) << answers.dump();
  EXPECT_EQ(answers["statuses"].value("429", 0), throttled) << answers.dump();
  // kube-apiserver's refusals say when to come back (nearly all: one in a hundred may come without).
  EXPECT_GE(answers.value("retryAfterAnswers", 0), throttled * 9 / 10) << answers.dump();
  // Every 429 asked for a second; the last start went out no sooner.
  EXPECT_GE(scenario.value("fireSkewMs", 0.0), 990.0) << scenario.dump().substr(0, 2000);
  const std::string md = read_file(run_dir / "report.md");
  EXPECT_NE(md.find(std::to_string(throttled) + " of "), std::string::npos) << md;
  EXPECT_NE(md.find("throttled (429)"), std::string::npos) << md;
}

}  // namespace
}  // namespace bootstorm::test_support
