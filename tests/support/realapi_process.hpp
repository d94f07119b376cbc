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
#include "tests/support/loopback.hpp"

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
  // POST `path` to the control endpoint (HTTP/1.0 on loopback): its JSON answer, or null when it failed.
  // "/compact" compacts etcd ({"revision"}); "/end-watches" ends every client's open watch ({"ended",
  // "agents"}); "/end-watches?compact=true" compacts etcd too before any watch starts again.
  nlohmann::json control_post(const std::string& path) const {
    const std::string url = control();  // http://127.0.0.1:PORT
    const int fd = connect_loopback(static_cast<unsigned short>(std::stoi(url.substr(url.rfind(':') + 1))));
    if (fd < 0) return nullptr;
    const std::string request = "POST " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n";
    std::string answer;
    if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
        answer.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (answer.rfind("HTTP/1.0 200", 0) != 0 && answer.rfind("HTTP/1.1 200", 0) != 0) return nullptr;
    const auto body = answer.find("\r\n\r\n");
    return body == std::string::npos ? nullptr
                                     : nlohmann::json::parse(answer.substr(body + 4), nullptr, false);
  }
  // The server's log so far (klog on stderr), for a failing assertion's message.
  std::string log() const { return read_file(dir_ / "realapi.err"); }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<Child> child_;
  nlohmann::json info_;
};

}  // namespace bootstorm::test_support
