// Drives the Kubernetes front with the real kubectl (the first on PATH; tests/support/tools.hpp) through a
// generated kubeconfig: server URL, certificate-authority-data and a bearer token.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "common/base64.hpp"
#include "kube_test_support.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/tools.hpp"

extern char** environ;

namespace bootstorm::sim::kube::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class KubectlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto kubectl = test_support::find_kubectl();
    if (!kubectl) BOOTSTORM_MISSING_KUBECTL("");
    kubectl_ = kubectl->string();
    lab_ = std::make_unique<TestLab>();
    kubeconfig_ = dir_.string() + "/kubeconfig";
    std::ofstream out(kubeconfig_);
    out << "apiVersion: v1\nkind: Config\nclusters:\n- name: lab\n  cluster:\n    server: " << lab_->base_url
        << "\n    certificate-authority-data: " << bootstorm::base64_encode(lab_->pki.ca_cert_pem)
        << "\nusers:\n- name: lab\n  user:\n    token: " << lab_->token
        << "\ncontexts:\n- name: lab\n  context:\n    cluster: lab\n    user: lab\n    namespace: default\n"
        << "current-context: lab\n";
  }

  std::vector<std::string> base_args() const {
    return {kubectl_, "--kubeconfig=" + kubeconfig_, "--cache-dir=" + dir_.string() + "/cache",
            "--request-timeout=20s"};
  }

  // Runs kubectl with `args`; returns exit code and combined output.
  std::pair<int, std::string> kubectl(const std::vector<std::string>& args) {
    std::string output_path = dir_.string() + "/out-" + std::to_string(++runs_) + ".txt";
    pid_t pid = spawn(args, output_path);
    int status = 0;
    waitpid(pid, &status, 0);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return {code, read_file(output_path)};
  }

  pid_t spawn(const std::vector<std::string>& args, const std::string& output_path) {
    std::vector<std::string> all = base_args();
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<std::string> env_strings = {"HOME=" + dir_.string(), "PATH=/usr/bin:/bin"};
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, kubectl_.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0);
    return pid;
  }

  std::unique_ptr<TestLab> lab_;
  std::string kubectl_;
  test_support::ScratchDir dir_{"kubectl"};
  std::string kubeconfig_;
  int runs_ = 0;
};

TEST_F(KubectlTest, WorksAgainstTheFront) {
  auto [nodes_rc, nodes] = kubectl({"get", "nodes"});
  EXPECT_EQ(nodes_rc, 0) << nodes;
  EXPECT_NE(nodes.find("worker-0"), std::string::npos) << nodes;

  auto [resources_rc, resources] = kubectl({"api-resources"});
  EXPECT_EQ(resources_rc, 0) << resources;
  for (const char* r :
       {"virtualmachines", "virtualmachineinstances", "datavolumes", "datasources", "plans"}) {
    EXPECT_NE(resources.find(r), std::string::npos) << r << "\n" << resources;
  }

  auto [ns_rc, ns] = kubectl({"create", "namespace", "kx"});
  EXPECT_EQ(ns_rc, 0) << ns;
  EXPECT_NE(ns.find("namespace/kx created"), std::string::npos) << ns;

  std::string manifest = dir_.string() + "/vm.yaml";
  std::ofstream(manifest) << R"(apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: kx-vm
  namespace: kx
  labels: {app: desk}
spec:
  runStrategy: Halted
  dataVolumeTemplates:
  - metadata: {name: kx-vm-root}
    spec:
      sourceRef: {kind: DataSource, name: tiny-golden, namespace: golden}
      storage:
        resources: {requests: {storage: 1Gi}}
  template:
    metadata:
      labels: {kubevirt.io/domain: kx-vm}
    spec:
      domain:
        cpu: {cores: 1}
        memory: {guest: 256Mi}
        devices:
          disks:
          - {name: root, disk: {bus: virtio}}
          interfaces:
          - {name: default, masquerade: {}}
      networks:
      - {name: default, pod: {}}
      volumes:
      - {name: root, dataVolume: {name: kx-vm-root}}
)";
  auto [apply_rc, apply] = kubectl({"apply", "-f", manifest});
  EXPECT_EQ(apply_rc, 0) << apply;
  EXPECT_NE(apply.find("virtualmachine.kubevirt.io/kx-vm created"), std::string::npos) << apply;
  lab_->wait_for("/apis/kubevirt.io/v1/namespaces/kx/virtualmachines/kx-vm",
                 [](const json& o) { return o["status"].value("printableStatus", "") == "Stopped"; });

  auto [list_rc, list] = kubectl({"get", "vm,vmi", "-A", "-o", "json"});
  ASSERT_EQ(list_rc, 0) << list;
  json parsed = json::parse(list, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << list;
  bool has_vm = false;
  for (const auto& item : parsed["items"])
    has_vm |= item["kind"] == "VirtualMachine" && item["metadata"]["name"] == "kx-vm";
  EXPECT_TRUE(has_vm) << list;

  // kubectl get vmi -w: start the VM while it watches and see the VMI's events.
  std::string watch_out = dir_.string() + "/watch.txt";
  pid_t watcher = spawn({"get", "vmi", "-n", "kx", "-w", "--output-watch-events"}, watch_out);
  std::this_thread::sleep_for(1500ms);  // let kubectl list and open its watch
  auto started =
      lab_->call("PUT", "/apis/subresources.kubevirt.io/v1/namespaces/kx/virtualmachines/kx-vm/start", "{}");
  EXPECT_EQ(started.status, 202);
  lab_->wait_for("/apis/kubevirt.io/v1/namespaces/kx/virtualmachineinstances/kx-vm",
                 [](const json& o) { return o["status"].value("phase", "") == "Running"; });
  std::string watched;
  for (int i = 0; i < 100; ++i) {
    watched = read_file(watch_out);
    if (watched.find("MODIFIED") != std::string::npos && watched.find("ADDED") != std::string::npos) break;
    std::this_thread::sleep_for(100ms);
  }
  kill(watcher, SIGTERM);
  waitpid(watcher, nullptr, 0);
  EXPECT_NE(watched.find("kx-vm"), std::string::npos) << watched;
  EXPECT_NE(watched.find("ADDED"), std::string::npos) << watched;
  EXPECT_NE(watched.find("MODIFIED"), std::string::npos) << watched;

  auto [ds_rc, ds] = kubectl({"get", "datasources.cdi.kubevirt.io", "-A"});
  EXPECT_EQ(ds_rc, 0) << ds;
  EXPECT_NE(ds.find("tiny-golden"), std::string::npos) << ds;

  auto [raw_rc, raw] = kubectl({"get", "--raw", "/apis/subresources.kubevirt.io/v1"});
  EXPECT_EQ(raw_rc, 0) << raw;
  EXPECT_NE(raw.find("virtualmachines/start"), std::string::npos) << raw;

  auto [del_rc, del] = kubectl({"delete", "vm", "kx-vm", "-n", "kx"});
  EXPECT_EQ(del_rc, 0) << del;
  EXPECT_NE(del.find("virtualmachine.kubevirt.io \"kx-vm\" deleted"), std::string::npos) << del;
  EXPECT_EQ(lab_->call("GET", "/apis/kubevirt.io/v1/namespaces/kx/virtualmachines/kx-vm").status, 404);
}

}  // namespace
}  // namespace bootstorm::sim::kube::testing
