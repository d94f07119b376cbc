#pragma once
// The fixture of the tests that attach the lab to a real kube-apiserver (tests/support/realapi) as the
// cluster's KubeVirt and CDI controllers (simulator/attach), in-process: RealApiCliTest's server and CLI, the
// lab attached to it as the server's administrator, its state in dir_/lab, and the namespace "attached"; a
// test's own kube-apiserver flags and changes to the lab profile (`lab attach --set`) through the
// constructor.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "simulator/attach/lab_attach.hpp"
#include "simulator/model/lab_overrides.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/realapi_fixture.hpp"
#include "tests/support/run_files.hpp"

namespace bootstorm::test_support {

inline constexpr const char* kAttachedNamespace = "attached";
// What bootstorm's VMI watch reports.
inline constexpr std::array<const char*, 4> kWatchedMilestones{"scheduled", "running", "guest_agent",
                                                               "ip_assigned"};

class LabAttachTest : public RealApiCliTest {
 protected:
  using json = nlohmann::json;
  using steady_clock = std::chrono::steady_clock;

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
    admin_apply(std::string("apiVersion: v1\nkind: Namespace\nmetadata: {name: ") + kAttachedNamespace +
                "}\n");
  }
  void TearDown() override {
    if (attach_) attach_->stop();
    attach_.reset();
    RealApiCliTest::TearDown();
  }

  // DIR/NAME.yaml: a storm of `vms` clones of golden/tiny-golden spread over the lab's three workers, in
  // `ns`, as rbac.yaml's service account through the server's kubeconfig, kept after the run (cleanup: never)
  // in dir_/runs, with `telemetry` as the plan's telemetry section and `storm` as its storm section.
  fs::path write_plan(const std::string& name, const std::string& ns, int vms, const std::string& telemetry,
                      const std::string& storm = "{mode: simultaneous, timeout: 2m, settle: 0s}") {
    const fs::path plan = dir_ / (name + ".yaml");
    PlanYaml{
        .name = name,
        .platform = {.kind = "kubevirt",
                     .endpoint = "kubeconfig",
                     .extra = {"credentials: {kubeconfig: " + api_->kubeconfig("bootstorm").string() + "}"}},
        .golden = "{dataSource: {name: tiny-golden, namespace: golden}}",
        .ns = ns,
        .scenarios = {{"spread", {{"worker-0", vms / 3}, {"worker-1", vms / 3}, {"worker-2", vms / 3}}}},
        .storm = storm,
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
    for (json& event : read_journal(run_dir)) {
      if (event.value("type", "") != "milestone") continue;
      const std::string vm = event.value("vm", ""), milestone = event.value("milestone", "");
      out[vm][milestone].push_back(std::move(event));
    }
    return out;
  }

  std::unique_ptr<sim::attach::LabAttach> attach_;
  std::vector<std::string> lab_sets_;
};

}  // namespace bootstorm::test_support
