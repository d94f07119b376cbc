#pragma once
// A real Kubernetes API server (tests/support/realapi, BOOTSTORM_REALAPI: kube-apiserver and an embedded
// etcd) as a child process of a test: started on 127.0.0.1 with kernel-chosen ports, ready once it wrote
// endpoints.json (URL, CA, a kubeconfig per user, the control endpoint) after applying the given manifests.
// Stopped with SIGTERM when destroyed (SIGKILL if it has not stopped within 20 s).
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.hpp"

namespace bootstorm::test_support {

class RealApiProcess {
 public:
  // `manifests` are applied in order as the administrator before it is ready (CRDs, rbac.yaml);
  // `apiserver_flags` go to kube-apiserver (e.g. "--min-request-timeout=5").
  RealApiProcess(const std::string& binary, const std::filesystem::path& dir,
                 const std::vector<std::filesystem::path>& manifests = {},
                 const std::vector<std::string>& apiserver_flags = {})
      : dir_(dir) {
    std::vector<std::string> argv{binary, "-dir", (dir / "state").string()};
    for (const auto& m : manifests) {
      argv.push_back("-apply");
      argv.push_back(m.string());
    }
    if (!apiserver_flags.empty()) {
      argv.push_back("--");
      argv.insert(argv.end(), apiserver_flags.begin(), apiserver_flags.end());
    }
    child_ = std::make_unique<Child>(argv, dir / "realapi.out", dir / "realapi.err");
    const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    std::string line;
    while (std::chrono::steady_clock::now() < until) {
      line = read_file(dir / "realapi.out");
      if (line.find('\n') != std::string::npos) break;
      if (child_->wait_for(std::chrono::milliseconds(50))) break;  // it exited: say why
    }
    if (line.find('\n') != std::string::npos) info_ = nlohmann::json::parse(line, nullptr, false);
  }
  ~RealApiProcess() {
    if (!child_) return;
    child_->send(SIGTERM);
    if (!child_->wait_for(std::chrono::seconds(20))) child_->kill_now();
  }
  RealApiProcess(const RealApiProcess&) = delete;
  RealApiProcess& operator=(const RealApiProcess&) = delete;

  bool ready() const { return info_.is_object(); }
  std::string why_not() const {
    const std::string err = read_file(dir_ / "realapi.err");
    return "realapi did not start: " + (err.size() > 4000 ? err.substr(err.size() - 4000) : err);
  }
  const nlohmann::json& info() const { return info_; }
  std::string url() const { return info_.at("kube"); }
  std::string ca_file() const { return info_.at("caFile"); }
  // The kubeconfig of "admin" (system:masters) or "bootstorm" (deploy/kubernetes/rbac.yaml's service
  // account).
  std::filesystem::path kubeconfig(const std::string& user) const {
    return info_.at("kubeconfigs").at(user).get<std::string>();
  }
  std::string control() const { return info_.at("control"); }
  // The server's log so far (klog on stderr), for a failing assertion's message.
  std::string log() const { return read_file(dir_ / "realapi.err"); }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<Child> child_;
  nlohmann::json info_;
};

}  // namespace bootstorm::test_support
