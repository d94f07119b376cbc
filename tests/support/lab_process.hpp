#pragma once
// The `bootstorm` executable as the CLI-driving tests run it (tests/e2e/*, tests/integration/faults): a
// command with its output captured, and a `bootstorm lab serve` child on ephemeral loopback ports that is
// ready once its endpoints.json is complete.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.hpp"

namespace bootstorm::test_support {

// The binary under test: $BOOTSTORM_BIN when set (to test an installed build), else the build tree's.
inline std::string bootstorm_binary() {
  if (const char* override_path = std::getenv("BOOTSTORM_BIN")) return override_path;
  return std::string(BOOTSTORM_BINARY_DIR) + "/bootstorm";
}

struct CliRun {
  int exit_code = -1;  // exit status, -signal when killed by one, kTimedOut when it did not finish in time
  std::string out;
  std::string err;
  std::string all() const { return out + err; }

  static constexpr int kTimedOut = -1000;
};

// Runs `argv` (argv[0] an absolute path) to completion with stdout and stderr captured in `capture`.out and
// `capture`.err (kept for inspection); killed after `timeout`. `env` ("K=V") is added to the environment,
// `cwd` (when not empty) is its working directory.
inline CliRun run_process(const std::vector<std::string>& argv, const fs::path& capture,
                          std::chrono::seconds timeout = std::chrono::seconds(120),
                          const std::vector<std::string>& env = {}, const fs::path& cwd = {}) {
  fs::path out = capture;
  fs::path err = capture;
  out += ".out";
  err += ".err";
  Child child(argv, out, err, env, cwd);
  CliRun r;
  auto rc = child.wait_for(timeout);
  r.exit_code = rc ? *rc : CliRun::kTimedOut;
  child.kill_now();
  r.out = child.out();
  r.err = child.err();
  return r;
}

// `bootstorm ARGS...`, as run_process.
inline CliRun run_cli(std::vector<std::string> args, const fs::path& capture,
                      std::chrono::seconds timeout = std::chrono::seconds(120),
                      const std::vector<std::string>& env = {}, const fs::path& cwd = {}) {
  args.insert(args.begin(), bootstorm_binary());
  return run_process(args, capture, timeout, env, cwd);
}

// A `bootstorm lab serve` child: the simulated vCenter and Kubernetes APIs on ephemeral loopback ports.
// Its output goes to `log_dir`/lab.out and lab.err; the destructor kills it.
class LabProcess {
 public:
  // `lab`: a profile name in simulator/labs or the path of a profile file; `extra`: further options of
  // `lab serve` ("--seed", "3", "--set", "KEY=VALUE").
  LabProcess(const std::string& lab, const fs::path& state_dir, const fs::path& log_dir,
             const std::vector<std::string>& extra = {})
      : state_dir_(state_dir),
        child_(serve_args(lab, state_dir, extra), log_dir / "lab.out", log_dir / "lab.err") {}

  // Waits until the lab has written a complete endpoints.json (it writes the file last, once it listens)
  // naming both loopback fronts and the credentials. Failure says why: the lab exited (with its stderr), the
  // file is incomplete, or nothing appeared in time.
  ::testing::AssertionResult wait_ready(std::chrono::seconds timeout = std::chrono::seconds(30)) {
    const fs::path file = state_dir_ / "endpoints.json";
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      std::error_code ec;
      if (fs::exists(file, ec)) {
        // A parse failure means the file is still being written: try again.
        endpoints_ = nlohmann::json::parse(read_file(file), nullptr, false);
        if (endpoints_.is_object()) return check_endpoints(file);
      }
      if (auto rc = child_.wait_for(std::chrono::milliseconds(0)))
        return ::testing::AssertionFailure() << "`bootstorm lab serve` exited with " << *rc
                                             << " before writing " << file << ": " << child_.err();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    endpoints_ = nlohmann::json();
    return ::testing::AssertionFailure() << "`bootstorm lab serve` wrote no complete " << file << " within "
                                         << timeout.count() << " s; its stderr: " << child_.err();
  }

  // endpoints.json: vcenter, kube (base URLs), kubeconfig, caFile, username, password, kubeToken.
  const nlohmann::json& endpoints() const { return endpoints_; }
  const fs::path& state_dir() const { return state_dir_; }
  Child& child() { return child_; }

 private:
  ::testing::AssertionResult check_endpoints(const fs::path& file) const {
    for (const char* key : {"vcenter", "kube", "kubeconfig", "caFile", "username", "password", "kubeToken"})
      if (!endpoints_.contains(key) || !endpoints_[key].is_string())
        return ::testing::AssertionFailure()
               << file << " has no string \"" << key << "\": " << endpoints_.dump();
    for (const char* front : {"vcenter", "kube"})
      if (endpoints_[front].get<std::string>().rfind("https://127.0.0.1:", 0) != 0)
        return ::testing::AssertionFailure()
               << file << ": " << front << " is not on loopback: " << endpoints_[front].get<std::string>();
    return ::testing::AssertionSuccess();
  }

  static std::vector<std::string> serve_args(const std::string& lab, const fs::path& state_dir,
                                             const std::vector<std::string>& extra) {
    std::vector<std::string> args{
        bootstorm_binary(), "lab", "serve",       "--lab", lab, "--state-dir", state_dir.string(),
        "--vcenter-port",   "0",   "--kube-port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  fs::path state_dir_;
  Child child_;
  nlohmann::json endpoints_;
};

// A scratch directory for the running test: <tmp>/bootstorm-<prefix>-<pid>-<suite>-<test>, emptied first.
inline fs::path make_test_scratch_dir(const std::string& prefix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "-" + info->name();
  for (char& c : name)
    if (c == '/') c = '_';  // parameterized tests
  const fs::path dir =
      fs::temp_directory_path() / ("bootstorm-" + prefix + "-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Removes a test's scratch directory, or keeps it for inspection when the test failed.
inline void finish_test_scratch_dir(const fs::path& dir, bool failed) {
  if (failed) {
    std::cerr << "kept scratch directory " << dir << " for inspection\n";
    return;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace bootstorm::test_support
