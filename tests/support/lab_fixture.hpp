#pragma once
// The fixture of the tests that drive the real `bootstorm` CLI against a `bootstorm lab serve` child: a
// scratch directory per test (kept when the test fails), the lab, the CLI and kubectl as further children,
// and the run directories they leave.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/lab_process.hpp"
#include "tests/support/tools.hpp"

namespace bootstorm::test_support {

class LabCliTest : public ::testing::Test {
 protected:
  // `scratch_prefix` names the scratch directory: <tmp>/bootstorm-<prefix>-<pid>-<suite>-<test>. With a
  // `lab` profile, every test starts with that lab serving (see start_lab); without, tests start their own.
  explicit LabCliTest(std::string scratch_prefix, std::string lab = {})
      : scratch_prefix_(std::move(scratch_prefix)), lab_profile_(std::move(lab)) {}

  void SetUp() override {
    dir_ = make_test_scratch_dir(scratch_prefix_);
    if (!lab_profile_.empty()) start_lab(lab_profile_);
  }

  void TearDown() override {
    lab_.reset();
    finish_test_scratch_dir(dir_, HasFailure());
  }

  // Starts `bootstorm lab serve --lab LAB` with its state in dir_/lab; fatal failure when it is not ready.
  void start_lab(const std::string& lab, std::chrono::seconds timeout = std::chrono::seconds(30)) {
    state_ = dir_ / "lab";
    lab_ = std::make_unique<LabProcess>(lab, state_, dir_);
    ASSERT_TRUE(lab_->wait_ready(timeout));
    endpoints_ = lab_->endpoints();
  }

  // (Re)starts the lab on a copy of profile simulator/labs/<lab>.yaml in which the text `from` is replaced by
  // `to`: the lab a test needs, one setting away from a shipped one. Fatal failure when `from` is not there.
  void restart_lab_with(const std::string& lab, const std::string& from, const std::string& to) {
    std::ifstream in(fs::path(BOOTSTORM_SOURCE_DIR) / "simulator/labs" / (lab + ".yaml"), std::ios::binary);
    std::string profile((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = profile.find(from);
    ASSERT_NE(at, std::string::npos) << "'" << from << "' is not in lab profile " << lab;
    profile.replace(at, from.size(), to);
    const fs::path variant = dir_ / (lab + "-variant-" + std::to_string(counter_++) + ".yaml");
    std::ofstream(variant, std::ios::binary) << profile;
    lab_.reset();
    if (!state_.empty()) fs::remove_all(state_);
    start_lab(variant.string());
  }

  // Runs argv to completion, output captured in dir_/cmd<N>.out and .err.
  CliRun run(const std::vector<std::string>& argv, std::chrono::seconds timeout = std::chrono::seconds(120),
             const std::vector<std::string>& env = {}) {
    return run_process(argv, dir_ / ("cmd" + std::to_string(counter_++)), timeout, env);
  }

  CliRun bootstorm(std::vector<std::string> args, std::chrono::seconds timeout = std::chrono::seconds(120),
                   const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), bootstorm_binary());
    return run(args, timeout, env);
  }

  // `bootstorm ARGS...` in the background, output in dir_/bg<N>.out and .err.
  std::unique_ptr<Child> spawn_bootstorm(std::vector<std::string> args,
                                         const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), bootstorm_binary());
    const std::string tag = std::to_string(counter_++);
    return std::make_unique<Child>(args, dir_ / ("bg" + tag + ".out"), dir_ / ("bg" + tag + ".err"), env);
  }

  // ------------------------------------------------------------------ kubectl against the lab's kubeconfig
  // The first kubectl on PATH (tests/support/tools.hpp); empty when there is none.
  static const std::string& kubectl_binary() {
    static const std::string path = find_kubectl().value_or(fs::path()).string();
    return path;
  }
  static bool have_kubectl() { return !kubectl_binary().empty(); }

  // kubectl ARGS against the lab; a test failure naming the package when there is no kubectl (tests that
  // need it check have_kubectl() first, so a developer's machine skips them: tests/support/tools.hpp).
  CliRun kubectl(std::vector<std::string> args) {
    if (!have_kubectl()) {
      CliRun missing;
      missing.err = missing_tool_message("kubectl", "kubernetes-client", kubectl_detail(""));
      ADD_FAILURE() << missing.err;
      return missing;
    }
    args.insert(args.begin(),
                {kubectl_binary(), "--kubeconfig", endpoints_["kubeconfig"].get<std::string>()});
    return run(args, std::chrono::seconds(60));
  }

  nlohmann::json kube_json(const std::vector<std::string>& args) {
    CliRun r = kubectl(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return nlohmann::json::object();
    return nlohmann::json::parse(r.out);
  }

  // The simulator's own endpoints (/_lab/truth, /_lab/stats, /_lab/faults), through kubectl.
  nlohmann::json lab_get(const std::string& path) { return kube_json({"get", "--raw", path}); }

  nlohmann::json set_faults(const nlohmann::json& faults) {
    const fs::path body = dir_ / ("faults" + std::to_string(counter_++) + ".json");
    write_file(body, faults.dump());
    return kube_json({"create", "--raw", "/_lab/faults", "-f", body.string()});
  }

  // Names of the `resource` objects in `ns` that carry bootstorm.io/run=<run_id>.
  std::vector<std::string> names_of(const std::string& resource, const std::string& ns,
                                    const std::string& run_id) {
    nlohmann::json list =
        kube_json({"get", resource, "-n", ns, "-l", "bootstorm.io/run=" + run_id, "-o", "json"});
    std::vector<std::string> names;
    for (const auto& item : list.value("items", nlohmann::json::array()))
      names.push_back(item["metadata"]["name"].get<std::string>());
    return names;
  }

  // VMs of the namespace carrying bootstorm.io/run=<run_id>.
  std::vector<std::string> run_vms(const std::string& ns, const std::string& run_id) {
    return names_of("virtualmachines.kubevirt.io", ns, run_id);
  }

  // ------------------------------------------------------------------ run directories
  // The subdirectories of `dir`, sorted (none when it does not exist).
  static std::vector<fs::path> subdirs(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    if (fs::exists(dir, ec))
      for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_directory()) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

  // The one run directory under `out` (empty path when there is none or more than one).
  static fs::path run_dir_in(const fs::path& out) {
    auto dirs = subdirs(out);
    return dirs.size() == 1 ? dirs.front() : fs::path();
  }

  fs::path dir_;
  fs::path state_;
  nlohmann::json endpoints_;
  std::unique_ptr<LabProcess> lab_;
  int counter_ = 0;

 private:
  std::string scratch_prefix_;
  std::string lab_profile_;
};

}  // namespace bootstorm::test_support
