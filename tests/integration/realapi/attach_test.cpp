// The lab attached to a real kube-apiserver as the cluster's KubeVirt and CDI controllers
// (simulator/attach): what it registers there, and what a client's objects there become. The lab's own
// Kubernetes front keeps serving its local view, which these tests compare with the server's.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "simulator/attach/lab_attach.hpp"
#include "simulator/model/lab_overrides.hpp"
#include "tests/support/kubevirt_manifests.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/realapi_fixture.hpp"
#include "tests/support/run_files.hpp"

namespace bootstorm::test_support {
namespace {

using json = nlohmann::json;
using std::chrono::steady_clock;

constexpr const char* kNamespace = "attached";
// What bootstorm's VMI watch reports.
constexpr std::array<const char*, 4> kWatchedMilestones{"scheduled", "running", "guest_agent", "ip_assigned"};

class LabAttachTest : public RealApiCliTest {
 protected:
  // `apiserver_flags`: kube-apiserver's own; `lab_sets`: changes to the lab profile (`lab attach --set`).
  explicit LabAttachTest(std::vector<std::string> apiserver_flags = {},
                         std::vector<std::string> lab_sets = {})
      : RealApiCliTest("realapi-attach", {}, std::move(apiserver_flags)), lab_sets_(std::move(lab_sets)) {}

  void SetUp() override {
    RealApiCliTest::SetUp();
    if (HasFatalFailure()) return;
    sim::attach::LabAttachOptions options;
    options.lab = "small";
    options.kubeconfig = api_->kubeconfig("admin").string();
    if (!lab_sets_.empty()) {
      auto overrides = sim::model::parse_lab_overrides(lab_sets_);
      ASSERT_TRUE(overrides) << overrides.error().what();
      auto spec = sim::model::load_lab_spec_with(options.lab, *overrides);
      ASSERT_TRUE(spec) << spec.error().what();
      options.spec = std::move(*spec);
    }
    auto started = sim::attach::LabAttach::start(options);
    ASSERT_TRUE(started) << started.error().what();
    attach_ = std::move(*started);
    auto ready = attach_->wait_ready(std::chrono::seconds(90));
    ASSERT_TRUE(ready) << ready.error().what();
    ASSERT_TRUE(attach_->lab().write_state((dir_ / "lab").string()));
    admin_apply(std::string("apiVersion: v1\nkind: Namespace\nmetadata: {name: ") + kNamespace + "}\n");
  }
  void TearDown() override {
    if (attach_) attach_->stop();
    attach_.reset();
    RealApiCliTest::TearDown();
  }

  // DIR/NAME.yaml: a storm of `vms` clones of golden/tiny-golden spread over the lab's three workers, in
  // `ns`, as rbac.yaml's service account through the server's kubeconfig, kept after the run (cleanup: never)
  // in dir_/runs, with `telemetry` as the plan's telemetry section.
  fs::path write_plan(const std::string& name, const std::string& ns, int vms, const std::string& telemetry) {
    const fs::path plan = dir_ / (name + ".yaml");
    PlanYaml{
        .name = name,
        .platform = {.kind = "kubevirt",
                     .endpoint = "kubeconfig",
                     .extra = {"credentials: {kubeconfig: " + api_->kubeconfig("bootstorm").string() + "}"}},
        .golden = "{dataSource: {name: tiny-golden, namespace: golden}}",
        .ns = ns,
        .scenarios = {{"spread", {{"worker-0", vms / 3}, {"worker-1", vms / 3}, {"worker-2", vms / 3}}}},
        .storm = "{mode: simultaneous, timeout: 2m, settle: 0s}",
        .ready = "{signal: guest_agent}",
        .telemetry = telemetry,
        .cleanup = "never",
        .output = (dir_ / "runs").string()}
        .write(plan);
    return plan;
  }
  // A file holding the lab's own bearer token (endpoints.json kubeToken).
  fs::path lab_token_file() {
    const json endpoints = json::parse(read_file(dir_ / "lab" / "endpoints.json"));
    const fs::path file = dir_ / "lab-token";
    write_file(file, endpoints.value("kubeToken", ""));
    return file;
  }
  // kubectl against the lab's own front: the controllers' local view.
  json lab_json(std::vector<std::string> args) {
    args.insert(args.begin(), {kubectl_binary(), "--kubeconfig", (dir_ / "lab" / "kubeconfig").string()});
    args.insert(args.end(), {"-o", "json"});
    CliRun r = run(args, std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out, nullptr, false) : json::object();
  }
  // The server's object, or null when it does not exist.
  json server_object(const std::vector<std::string>& what) {
    std::vector<std::string> args{"get"};
    args.insert(args.end(), what.begin(), what.end());
    args.insert(args.end(), {"-o", "json", "--ignore-not-found"});
    CliRun r = kubectl("admin", args);
    if (r.exit_code != 0 || r.out.find('{') == std::string::npos) return nullptr;
    return json::parse(r.out, nullptr, false);
  }
  // Polls `holds` on the server's object until it is true or `limit` passes; the last object read.
  json wait_for(const std::vector<std::string>& what, const std::function<bool(const json&)>& holds,
                std::chrono::seconds limit) {
    const auto until = steady_clock::now() + limit;
    json object;
    do {
      object = server_object(what);
      if (holds(object)) return object;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    } while (steady_clock::now() < until);
    return object;
  }
  json truth() {
    CliRun r = run({kubectl_binary(), "--kubeconfig", (dir_ / "lab" / "kubeconfig").string(), "get", "--raw",
                    "/_lab/truth"},
                   std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }

  static bool condition_true(const json& object, const std::string& type) {
    if (!object.is_object()) return false;
    for (const auto& c : object.value("/status/conditions"_json_pointer, json::array()))
      if (c.value("type", "") == type && c.value("status", "") == "True") return true;
    return false;
  }

  // Every milestone event of the run's journal, per VM and milestone.
  static std::map<std::string, std::map<std::string, std::vector<json>>> journal_milestones(
      const fs::path& run_dir) {
    std::map<std::string, std::map<std::string, std::vector<json>>> out;
    std::istringstream journal(read_file(run_dir / "journal.jsonl"));
    for (std::string line; std::getline(journal, line);) {
      json event = json::parse(line, nullptr, false);
      if (!event.is_object() || event.value("type", "") != "milestone") continue;
      const std::string vm = event.value("vm", ""), milestone = event.value("milestone", "");
      out[vm][milestone].push_back(std::move(event));
    }
    return out;
  }

  // A storm of kInterruptedVms whose watches the server ends mid-storm, kEnds times (realapi's control
  // endpoint; `compact`: compacting etcd each time before any watch starts again). The run directory, what
  // bootstorm wrote on stderr, the control's answers and the wall time (unix s) of the last end.
  struct InterruptedStorm {
    fs::path run_dir;
    std::string err;
    std::vector<json> ends;
    double last_end = 0;
  };
  static constexpr int kInterruptedVms = 12;
  static constexpr int kEnds = 3;
  InterruptedStorm storm_with_watches_ended(const std::string& name, bool compact) {
    InterruptedStorm result;
    const fs::path out = dir_ / "runs";
    const fs::path plan = write_plan(name, "bootstorm-" + name, kInterruptedVms, "{source: none}");
    auto child = spawn_bootstorm({"run", plan.string(), "--yes"});
    // The first VMI on the server: the starts went out and bootstorm's watch is open. Then the ends, while
    // the boots (seconds apart, lab_sets_) go on.
    const auto until = steady_clock::now() + std::chrono::seconds(120);
    const auto running = [&] { return !child->wait_for(std::chrono::milliseconds(0)); };
    const auto no_vmi_yet = [&] {
      return kube_json("admin",
                       {"get", "virtualmachineinstances.kubevirt.io", "-n", "bootstorm-" + name})["items"]
          .empty();
    };
    while (steady_clock::now() < until && running() && no_vmi_yet())
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (int i = 0; i < kEnds && running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(i == 0 ? 300 : 1200));
      result.ends.push_back(api_->control_post(compact ? "/end-watches?compact=true" : "/end-watches"));
      const auto now = std::chrono::system_clock::now().time_since_epoch();
      result.last_end = std::chrono::duration<double>(now).count();
    }
    const auto exit_code = child->wait_for(std::chrono::seconds(180));
    result.err = child->err();
    EXPECT_EQ(exit_code, 0) << child->out() << result.err;
    result.run_dir = run_dir_in(out);
    return result;
  }
  // Each end happened while bootstorm's watch was open (the server's answer names its User-Agent), and the
  // storm went on after the last: a milestone came after it.
  void expect_ended_mid_storm(const InterruptedStorm& storm) {
    ASSERT_EQ(storm.ends.size(), static_cast<std::size_t>(kEnds)) << "the storm ended before the watches did";
    for (const auto& end : storm.ends) {
      ASSERT_TRUE(end.is_object()) << "the control endpoint did not answer";
      bool bootstorm_ended = false;
      for (const auto& agent : end.value("agents", json::array()))
        bootstorm_ended |= agent.get<std::string>().rfind("bootstorm/kubevirt", 0) == 0;
      EXPECT_TRUE(bootstorm_ended) << end.dump();
    }
    double last_seen = 0;
    for (const auto& [vm, milestones] : journal_milestones(storm.run_dir))
      for (const auto& [milestone, events] : milestones)
        for (const auto& event : events) last_seen = std::max(last_seen, event.value("wall", 0.0));
    EXPECT_GT(last_seen, storm.last_end) << "every milestone came before the last end: not mid-storm";
  }
  // Every VM ready, and each of its milestones up to ready (guest_agent) recorded exactly once; the IP, which
  // may come after the run stopped watching, at most once.
  void expect_every_milestone_once(const fs::path& run_dir) {
    const auto rows = read_csv(run_dir / "vms.csv");
    ASSERT_EQ(rows.size(), static_cast<std::size_t>(kInterruptedVms));
    for (const auto& row : rows)
      EXPECT_EQ(row.at("status"), "ready") << row.at("vm") << ": " << row.at("reason");
    const auto seen = journal_milestones(run_dir);
    for (const auto& row : rows) {
      for (const char* milestone : kWatchedMilestones) {
        const auto vm = seen.find(row.at("vm"));
        const std::size_t times =
            vm == seen.end() || !vm->second.count(milestone) ? 0 : vm->second.at(milestone).size();
        if (std::string_view(milestone) == "ip_assigned") {
          EXPECT_LE(times, 1u) << row.at("vm") << " " << milestone;
        } else {
          EXPECT_EQ(times, 1u) << row.at("vm") << " " << milestone;
        }
      }
    }
  }

  std::unique_ptr<sim::attach::LabAttach> attach_;
  std::vector<std::string> lab_sets_;
};

// Boots seconds apart, so that a storm of twelve lasts long enough for the server to end its watches in
// the middle of it: each VM's firmware takes ~4 s, give or take half.
const std::vector<std::string> kSlowBoots{"profiles.tiny.phases.firmware.fixedS=4",
                                          "profiles.tiny.phases.firmware.jitter=0.5",
                                          "kube.launcherStartS=0.5"};

class LabAttachSlowBootsTest : public LabAttachTest {
 protected:
  LabAttachSlowBootsTest() : LabAttachTest({}, kSlowBoots) {}
};

// Without the watch cache, every watch is served from etcd, so that one resumed from a resourceVersion etcd
// compacted away is answered 410 Gone.
class LabAttachNoWatchCacheTest : public LabAttachTest {
 protected:
  LabAttachNoWatchCacheTest() : LabAttachTest({"--watch-cache=false"}, kSlowBoots) {}
};

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
              kNamespace +
              "}\nspec:\n  sourceRef: {kind: DataSource, name: tiny-golden, namespace: golden}\n"
              "  storage: {resources: {requests: {storage: 1Gi}}}\n");
  const json dv = wait_for(
      {"datavolumes.cdi.kubevirt.io", "-n", kNamespace, "clone"},
      [](const json& o) { return o.is_object() && o.value("/status/phase"_json_pointer, "") == "Succeeded"; },
      std::chrono::seconds(90));
  ASSERT_TRUE(dv.is_object());
  EXPECT_EQ(dv.value("/status/phase"_json_pointer, ""), "Succeeded") << dv.dump(1);
  const json pvc = server_object({"pvc", "-n", kNamespace, "clone"});
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
  admin_apply(vm_manifest(kNamespace, "desk-0", "Always").dump());
  const json vmi = wait_for(
      {"virtualmachineinstances.kubevirt.io", "-n", kNamespace, "desk-0"},
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
  const json vm = server_object({"virtualmachines.kubevirt.io", "-n", kNamespace, "desk-0"});
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

  CliRun deleted =
      kubectl("admin", {"delete", "virtualmachine.kubevirt.io", "-n", kNamespace, "desk-0", "--wait=false"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  for (const std::vector<std::string>& what :
       {std::vector<std::string>{"virtualmachineinstances.kubevirt.io", "-n", kNamespace, "desk-0"},
        std::vector<std::string>{"datavolumes.cdi.kubevirt.io", "-n", kNamespace, "desk-0-root"},
        std::vector<std::string>{"pvc", "-n", kNamespace, "desk-0-root"}}) {
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
  std::istringstream journal(read_file(run_dir / "journal.jsonl"));
  int compared = 0;
  for (std::string line; std::getline(journal, line);) {
    const json event = json::parse(line, nullptr, false);
    if (!event.is_object() || event.value("type", "") != "milestone" || event.value("source", "") != "watch")
      continue;
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

// kube-apiserver ends a watch on its own: when its timeout passes, and every watch when it shuts down. Three
// times in the middle of a storm the server ends every open watch (realapi's /end-watches, which returns the
// watch handler as the timeout does): bootstorm resumes each from the last resourceVersion it saw, and the
// watch cache still holds what happened in between. Nothing is lost or repeated, and nothing needed a
// re-list: every milestone of every VM once, each from the watch as it happened.
TEST_F(LabAttachSlowBootsTest, WatchesTheServerEndsMidStormResumeWithoutAGap) {
  const InterruptedStorm storm = storm_with_watches_ended("ended", false);
  ASSERT_FALSE(storm.run_dir.empty()) << storm.err;
  expect_ended_mid_storm(storm);
  expect_every_milestone_once(storm.run_dir);
  for (const auto& [vm, milestones] : journal_milestones(storm.run_dir))
    for (const char* milestone : kWatchedMilestones)
      for (const auto& event : milestones.count(milestone) ? milestones.at(milestone) : std::vector<json>{})
        EXPECT_EQ(event.value("source", ""), "watch") << vm << " " << milestone << ": " << event.dump();
  EXPECT_EQ(storm.err.find("re-listing"), std::string::npos) << storm.err;
  EXPECT_EQ(storm.err.find("dropped"), std::string::npos) << storm.err;
}

// Every watch ended mid-storm, and etcd compacted past every resourceVersion a client was sent before any
// watch starts again: bootstorm's watch, resumed from where it was, is answered 410 Gone; it re-lists, and
// what happened while it had no watch comes from the list (stamped from the VMI's own condition times). No
// milestone is lost or repeated.
TEST_F(LabAttachNoWatchCacheTest, ACompactedResourceVersionIsGoneMidStormAndTheRelistLosesNothing) {
  const InterruptedStorm storm = storm_with_watches_ended("compacted", true);
  ASSERT_FALSE(storm.run_dir.empty()) << storm.err;
  expect_ended_mid_storm(storm);
  for (const auto& end : storm.ends) EXPECT_GT(end.value("revision", 0LL), 0) << end.dump();
  EXPECT_NE(storm.err.find("watch of VirtualMachineInstances: resourceVersion"), std::string::npos)
      << storm.err;
  EXPECT_NE(storm.err.find("is gone (410); re-listing"), std::string::npos) << storm.err;
  expect_every_milestone_once(storm.run_dir);
}

}  // namespace
}  // namespace bootstorm::test_support
