#pragma once
// The fixture of the tests that drive the real `bootstorm` CLI against a real Kubernetes API server
// (tests/support/realapi: kube-apiserver and etcd, RBAC, admission, API Priority and Fairness): LabCliTest's
// scratch directory, CLI and kubectl, without a lab; instead the server with the suite's CRDs (KubeVirt, CDI,
// Route: tests/support/realapi/crds; Forklift's from tests/data/api-specs/forklift),
// deploy/kubernetes/namespace.yaml and rbac.yaml applied, then the test's own manifests; kubectl as the
// administrator or as bootstorm's service account.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/lab_fixture.hpp"
#include "tests/support/realapi_process.hpp"

namespace bootstorm::test_support {

class RealApiCliTest : public LabCliTest {
 protected:
  // `manifests`: applied after the CRDs and the RBAC, in order (paths relative to the source tree);
  // `apiserver_flags`: kube-apiserver's own, after realapi's.
  RealApiCliTest(std::string scratch_prefix, std::vector<std::string> manifests,
                 std::vector<std::string> apiserver_flags = {})
      : LabCliTest(std::move(scratch_prefix)),
        manifests_(std::move(manifests)),
        apiserver_flags_(std::move(apiserver_flags)) {}

  void SetUp() override {
    LabCliTest::SetUp();
    if (!have_kubectl())
      BOOTSTORM_MISSING_KUBECTL("the tests read and change the server as its administrator");
    api_ = std::make_unique<RealApiProcess>(BOOTSTORM_REALAPI, dir_, suite_manifests(), apiserver_flags_);
    ASSERT_TRUE(api_->ready()) << api_->why_not();
  }

  void TearDown() override {
    api_.reset();
    LabCliTest::TearDown();
  }

  // Everything the server gets before a test runs: the CRDs (sorted), the namespace and RBAC of
  // deploy/kubernetes, then the test's manifests.
  std::vector<fs::path> suite_manifests() const {
    const fs::path source(BOOTSTORM_SOURCE_DIR);
    std::vector<fs::path> out;
    for (const auto* folder : {"tests/support/realapi/crds", "tests/data/api-specs/forklift"}) {
      std::vector<fs::path> crds;
      for (const auto& entry : fs::directory_iterator(source / folder))
        if (entry.path().extension() == ".yaml") crds.push_back(entry.path());
      std::sort(crds.begin(), crds.end());
      out.insert(out.end(), crds.begin(), crds.end());
    }
    for (const auto* file : {"deploy/kubernetes/namespace.yaml", "deploy/kubernetes/rbac.yaml"})
      out.push_back(source / file);
    for (const auto& m : manifests_) out.push_back(source / m);
    return out;
  }

  // kubectl ARGS as `user`: "admin" (system:masters) or "bootstorm" (rbac.yaml's service account). It hides
  // LabCliTest's kubectl, which talks to a lab.
  CliRun kubectl(const std::string& user, std::vector<std::string> args) {
    args.insert(args.begin(), {kubectl_binary(), "--kubeconfig", api_->kubeconfig(user).string()});
    return run(args, std::chrono::seconds(60));
  }
  nlohmann::json kube_json(const std::string& user, std::vector<std::string> args) {
    args.insert(args.end(), {"-o", "json"});
    CliRun r = kubectl(user, args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return nlohmann::json::object();
    return nlohmann::json::parse(r.out, nullptr, false);
  }
  // Applies YAML text as the administrator (server-side).
  void admin_apply(const std::string& yaml) {
    const fs::path file = dir_ / ("apply" + std::to_string(counter_++) + ".yaml");
    write_file(file, yaml);
    CliRun r = kubectl("admin", {"apply", "--server-side", "-f", file.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  // The names of every VirtualMachine on the server, in any namespace.
  std::vector<std::string> all_vms() {
    std::vector<std::string> names;
    // Named: a range-for over a temporary's ["items"] would read a destroyed object.
    const nlohmann::json listed = kube_json("admin", {"get", "virtualmachines.kubevirt.io", "-A"});
    for (const auto& vm : listed.value("items", nlohmann::json::array()))
      names.push_back(vm["metadata"]["namespace"].get<std::string>() + "/" +
                      vm["metadata"]["name"].get<std::string>());
    return names;
  }

  std::unique_ptr<RealApiProcess> api_;

 private:
  std::vector<std::string> manifests_;
  std::vector<std::string> apiserver_flags_;
};

}  // namespace bootstorm::test_support
