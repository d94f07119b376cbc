// Safety interlocks (issue 9): bootstorm never touches what its run did not create, never creates more VMs
// than the operator allowed, and --dry-run changes nothing. Against a `bootstorm lab serve` child, checked
// through the lab's own counters (/_lab/stats mutatingRequests: every method but GET and HEAD).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "providers/api/provider.hpp"
#include "providers/kubevirt/kubevirt_provider.hpp"
#include "providers/kubevirt/settings.hpp"
#include "providers/vsphere/platform/api_choice.hpp"
#include "providers/vsphere/settings.hpp"
#include "tests/integration/faults/lab_harness.hpp"
#include "tests/support/run_task.hpp"

namespace bootstorm::lab_harness {
namespace {

constexpr const char* kRunId = "c0ffee";

class SafetyInterlocks : public LabFixture, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string platform() const { return GetParam(); }

  double mutating() { return lab_get(platform(), "/_lab/stats").value("mutatingRequests", -1.0); }

  // Changing requests that are not session bookkeeping (vCenter login/logout changes no inventory).
  double platform_changes() {
    json stats = lab_get(platform(), "/_lab/stats");
    EXPECT_TRUE(stats.contains("mutatingRequests")) << stats.dump();
    double n = stats.value("mutatingRequests", -1.0);
    const json by_route = stats.value("byRoute", json::object());
    for (const auto& [route, count] : by_route.items())
      if (route == "POST /api/session" || route == "DELETE /api/session" || route == "POST /sdk Login" ||
          route == "POST /sdk Logout")
        n -= count.get<double>();
    return n;
  }

  std::unique_ptr<api::Provider> provider(boost::asio::io_context& io) {
    vsphere::register_provider();
    kubevirt::register_provider();
    api::ProviderConfig c;
    c.kind = platform();
    c.run_id = kRunId;
    c.ca_file = endpoints_["caFile"].get<std::string>();
    if (platform() == "vsphere") {
      c.endpoint = endpoints_["vcenter"].get<std::string>();
      c.username = endpoints_["username"].get<std::string>();
      c.password = endpoints_["password"].get<std::string>();
      vsphere::Settings settings;
      settings.vm = "tiny-golden";
      c.settings = api::make_settings(settings);
    } else {
      c.endpoint = "kubeconfig";
      c.kubeconfig = endpoints_["kubeconfig"].get<std::string>();
      kubevirt::Settings settings;
      settings.namespace_ = kNamespace;
      settings.datasource_name = "fedora-golden";
      settings.datasource_namespace = "golden";
      settings.clone = "auto";
      c.settings = api::make_settings(settings);
    }
    return api::create_provider(c.kind, io.get_executor(), c);
  }

  static void run(boost::asio::io_context& io, boost::asio::awaitable<void> task) {
    boost::asio::co_spawn(io, std::move(task), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
    io.restart();
    io.run();
  }

  template <class T>
  static T run(boost::asio::io_context& io, boost::asio::awaitable<T> task) {
    return bootstorm::testing::run_task(io, std::move(task));
  }
};

// A VM without the run id (no bs-<run>- name on vSphere, no bootstorm.io/run label on Kubernetes) is refused
// by the real provider with a message that says why, and the VM survives unchanged. On Kubernetes a VM whose
// *name* looks like the run's but that lacks the label is refused too: the label is the interlock there.
TEST_P(SafetyInterlocks, StopAndDeleteRefuseAVmWithoutTheRunIdAndItSurvives) {
  start_lab();
  if (HasFatalFailure()) return;
  create_foreign_vm(platform());
  if (HasFatalFailure()) return;
  boost::asio::io_context io;
  auto p = provider(io);
  ASSERT_NE(p, nullptr);
  auto connected = run(io, p->connect());
  ASSERT_TRUE(connected) << connected.error().what();
  std::vector<api::VmHandle> targets;
  if (platform() == "vsphere") {
    targets.push_back({kForeignVm, foreign_before_["vm"].get<std::string>(), "", ""});
  } else {
    targets.push_back({kForeignVm, std::string(kNamespace) + "/" + kForeignVm, "", ""});
  }
  const double changes_before = platform_changes();
  for (const auto& vm : targets) {
    auto stopped = run(io, p->stop(vm));
    ASSERT_FALSE(stopped) << "stop of " << vm.name << " was not refused";
    EXPECT_EQ(stopped.error().kind, ErrorKind::invalid_input);
    auto deleted = run(io, p->destroy(vm));
    ASSERT_FALSE(deleted) << "delete of " << vm.name << " was not refused";
    EXPECT_EQ(deleted.error().kind, ErrorKind::invalid_input);
    if (platform() == "vsphere") {
      EXPECT_EQ(stopped.error().message, std::string("refusing to power off VM ") + kForeignVm +
                                             ": its name does not carry run id " + kRunId);
      EXPECT_EQ(deleted.error().message, std::string("refusing to delete VM ") + kForeignVm +
                                             ": its name does not carry run id " + kRunId);
    } else {
      const std::string tail = std::string(" VirtualMachine ") + kNamespace + "/" + kForeignVm +
                               ": its label bootstorm.io/run is \"\", not this run's \"" + kRunId + "\"";
      EXPECT_EQ(stopped.error().message, "refusing to stop" + tail);
      EXPECT_EQ(deleted.error().message, "refusing to delete" + tail);
    }
  }
  EXPECT_EQ(platform_changes(), changes_before) << "a refused stop/delete still sent a changing request";
  run(io, p->disconnect());
  expect_foreign_vm_untouched(platform());

  if (platform() == "kubevirt") {
    // Named like the run's VMs, labelled for another run: refused as well.
    json impostor = foreign_before_;
    impostor["metadata"] = {{"name", std::string("bs-") + kRunId + "-faults-001"},
                            {"namespace", kNamespace},
                            {"labels", {{"bootstorm.io/run", "beef00"}}}};
    HttpResult created =
        kube_call("POST", std::string("/apis/kubevirt.io/v1/namespaces/") + kNamespace + "/virtualmachines",
                  impostor.dump());
    ASSERT_EQ(created.status, 201) << created.body;
    auto p2 = provider(io);
    ASSERT_TRUE(run(io, p2->connect()));
    auto deleted =
        run(io, p2->destroy({impostor["metadata"]["name"].get<std::string>(),
                             std::string(kNamespace) + "/" + impostor["metadata"]["name"].get<std::string>(),
                             "", ""}));
    ASSERT_FALSE(deleted);
    EXPECT_NE(
        deleted.error().message.find("its label bootstorm.io/run is \"beef00\", not this run's \"c0ffee\""),
        std::string::npos)
        << deleted.error().message;
    run(io, p2->disconnect());
    EXPECT_EQ(kube_vms().count(impostor["metadata"]["name"].get<std::string>()), 1u)
        << "the impostor was deleted";
  }
}

TEST_P(SafetyInterlocks, MaxVmsRefusesALargerPlanBeforeAnyPlatformCall) {
  start_lab();
  if (HasFatalFailure()) return;
  PlanKnobs k;
  k.platform = platform();
  k.hosts = 2;
  k.vms_per_host = 3;
  const fs::path out = dir_ / "runs";
  const fs::path plan = write_plan(k, out);
  const double requests_before = lab_get(platform(), "/_lab/stats").value("requestsTotal", -1.0);
  CliResult r = bootstorm({"run", plan.string(), "--yes", "--max-vms", "5", "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find(plan.string() + ":"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(".vms: with it the plan has 6 VMs, more than the 5 that run creates without a larger "
                       "--max-vms; pass --max-vms 6 if that is what you mean"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(lab_get(platform(), "/_lab/stats").value("requestsTotal", -1.0), requests_before)
      << "the refused plan still talked to the platform";
  EXPECT_FALSE(fs::exists(out) && !fs::is_empty(out)) << "a refused plan created a run directory";
  // The default limit is 500.
  k.vms_per_host = 251;
  const fs::path big = write_plan(k, out);
  CliResult d = bootstorm({"run", big.string(), "--yes", "--out", out.string()});
  EXPECT_EQ(d.exit_code, 2) << d.all();
  EXPECT_NE(d.err.find("with it the plan has 502 VMs, more than the 500 that run creates"), std::string::npos)
      << d.err;
  EXPECT_EQ(lab_get(platform(), "/_lab/stats").value("requestsTotal", -1.0), requests_before);
}

// `run --dry-run` reads (inventory checks) but sends no changing request; `cleanup --dry-run` lists what it
// would delete and deletes nothing; then the real cleanup deletes exactly that.
TEST_P(SafetyInterlocks, DryRunOfRunAndCleanupMakesNoChangingCall) {
  start_lab();
  if (HasFatalFailure()) return;
  create_foreign_vm(platform());
  if (HasFatalFailure()) return;
  PlanKnobs k;
  k.platform = platform();
  k.cleanup = "never";
  const fs::path out = dir_ / "runs";
  const fs::path plan = write_plan(k, out);

  const double vms_before = lab_get(platform(), "/_lab/stats").value("vms", -1.0);
  const double changes_before = platform_changes();
  CliResult dry = bootstorm({"run", plan.string(), "--dry-run", "--out", out.string()});
  EXPECT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_EQ(platform_changes(), changes_before) << "run --dry-run sent a changing request\n" << dry.all();
  EXPECT_EQ(lab_get(platform(), "/_lab/stats").value("vms", -1.0), vms_before);
  EXPECT_NE(dry.all().find("dry-run"), std::string::npos) << "the dry run says what it would do\n"
                                                          << dry.all();
  EXPECT_TRUE(run_dir_in(out).empty()) << "a dry run wrote a run directory";

  // A real run that keeps its VMs, then cleanup --dry-run.
  CliResult real = bootstorm({"run", plan.string(), "--yes", "--out", out.string()});
  ASSERT_EQ(real.exit_code, 0) << real.all();
  // The counter sees what a real run changes (clone/create and start per VM at least): it can catch a leak.
  EXPECT_GE(platform_changes(), changes_before + 2 * total_vms(k));
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty());
  const std::string run_id = run_id_of(run_dir);
  const double mutating_before = mutating();
  const double changes_before_cleanup = platform_changes();
  CliResult dry_cleanup = bootstorm({"cleanup", run_dir.string(), "--dry-run"});
  EXPECT_EQ(dry_cleanup.exit_code, 0) << dry_cleanup.all();
  EXPECT_NE(dry_cleanup.out.find("run " + run_id + ": would delete " + std::to_string(total_vms(k)) + " VMs"),
            std::string::npos)
      << dry_cleanup.out;
  EXPECT_EQ(platform_changes(), changes_before_cleanup) << "cleanup --dry-run sent a changing request";
  if (platform() == "kubevirt") {
    EXPECT_EQ(mutating(), mutating_before);
  }
  std::size_t still_there = 0;
  if (platform() == "vsphere") {
    for (const auto& [name, vm] : vcenter_vms()) still_there += name.rfind("bs-" + run_id + "-", 0) == 0;
  } else {
    for (const auto& [name, vm] : kube_vms()) still_there += name.rfind("bs-" + run_id + "-", 0) == 0;
  }
  EXPECT_EQ(still_there, static_cast<std::size_t>(total_vms(k)));

  CliResult c = bootstorm({"cleanup", run_dir.string()});
  EXPECT_EQ(c.exit_code, 0) << c.all();
  EXPECT_NE(c.out.find("run " + run_id + ": deleted " + std::to_string(total_vms(k)) + " VMs"),
            std::string::npos)
      << c.out;
  expect_nothing_of_run_left(platform(), run_id);
  expect_foreign_vm_untouched(platform());
}

// `bootstorm migrate --dry-run` (vSphere -> KubeVirt through Forklift) prints the calls and changes neither
// end.
class MigrateSafety : public LabFixture {};

TEST_F(MigrateSafety, DryRunOfMigrateMakesNoChangingCallOnEitherPlatform) {
  start_lab();
  if (HasFatalFailure()) return;
  const fs::path out = dir_ / "runs";
  const fs::path plan = dir_ / "migrate.yaml";
  write_file(
      plan,
      "apiVersion: bootstorm.io/v1\nkind: MigrationPlan\nname: migrate-dry\nsource:\n  endpoint: lab:" +
          state_.string() + "\ndestination:\n  endpoint: lab:" + state_.string() +
          "\n  namespace: openshift-mtv\nvms:\n  fromStorm:\n    golden: {vm: tiny-golden, clone: linked}\n"
          "    placement: [{host: host-01, vms: 2}]\nnetworkMap:\n  - {source: VM Network, destination: "
          "{type: pod}}\nstorageMap:\n  - {source: lab-ds01, destination: {storageClass: lab-rbd}}\n"
          "targetNamespace: migrated-desktops\nready: {signal: guest_agent}\nstorm: {mode: simultaneous, "
          "timeout: 1m}\ntimeout: 5m\noutput: " +
          out.string() + "\n");
  auto changes = [&](const std::string& front_name) {
    json stats = lab_get(front_name, "/_lab/stats");
    EXPECT_TRUE(stats.contains("mutatingRequests")) << stats.dump();
    double n = stats.value("mutatingRequests", -1.0);
    const json by_route = stats.value("byRoute", json::object());
    for (const auto& [route, count] : by_route.items())
      if (route == "POST /api/session" || route == "DELETE /api/session") n -= count.get<double>();
    return n;
  };
  const double vcenter_before = changes("vsphere"), kube_before = changes("kubevirt");
  const double vms_before = lab_get("vsphere", "/_lab/stats").value("vms", -1.0);
  CliResult r = bootstorm({"migrate", plan.string(), "--dry-run", "--out", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("outcome: dry-run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("POST /apis/forklift.konveyor.io/v1beta1/namespaces/openshift-mtv/migrations"),
            std::string::npos)
      << "the dry run lists the calls it would make\n"
      << r.out;
  EXPECT_EQ(changes("vsphere"), vcenter_before) << "migrate --dry-run changed vCenter";
  EXPECT_EQ(changes("kubevirt"), kube_before) << "migrate --dry-run changed the cluster";
  EXPECT_EQ(lab_get("vsphere", "/_lab/stats").value("vms", -1.0), vms_before);
  EXPECT_FALSE(fs::exists(out)) << "a dry run must not create a run directory";
}

INSTANTIATE_TEST_SUITE_P(BothProviders, SafetyInterlocks, ::testing::Values("vsphere", "kubevirt"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace bootstorm::lab_harness
