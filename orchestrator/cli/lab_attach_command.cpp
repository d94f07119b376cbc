// `bootstorm lab attach --kubeconfig FILE [--context NAME] --lab NAME|PATH [--state-dir DIR] [--seed N]
// [--set KEY=VALUE ...]`: the lab as a Kubernetes cluster's KubeVirt and CDI controllers, acting through that
// cluster's API server (simulator/attach). It registers the lab's Nodes, StorageClasses, golden images and
// KubeVirt and CDI CRs there, serves KubeVirt's aggregated API (start, stop) behind an APIService, and boots
// in the lab every VirtualMachine a client makes there. Runs against it are simulated: the lab's virt-api
// says so. Writes DIR/endpoints.json (with "attachedTo") once ready, and serves until SIGINT or SIGTERM; then
// it takes its APIService off the server, stops, and removes endpoints.json.
#include "orchestrator/cli/lab_attach_command.hpp"

#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>

#include "common/log.hpp"
#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/lab_command_support.hpp"
#include "simulator/attach/lab_attach.hpp"

namespace bootstorm::cli {
namespace {

struct LabAttachArgs {
  std::string kubeconfig;
  std::string context;
  std::string lab = "small";
  std::string state_dir;
  std::uint64_t seed = 0;
  CLI::Option* seed_option = nullptr;
  std::vector<std::string> sets;
  int ready_timeout_s = 120;
};

int attach(const LabAttachArgs& args) {
  sigset_t signals = block_stop_signals();

  sim::attach::LabAttachOptions options;
  options.lab = args.lab;
  options.kubeconfig = args.kubeconfig;
  options.context = args.context;
  if (args.seed_option && args.seed_option->count() > 0) options.seed = args.seed;
  auto spec = lab_spec_with_sets(args.lab, args.sets);
  if (!spec) {
    std::cerr << "bootstorm lab attach: --set: " << spec.error().what() << "\n";
    return kExitUsage;
  }
  options.spec = std::move(*spec);
  auto attached = sim::attach::LabAttach::start(std::move(options));
  if (!attached) {
    std::cerr << "bootstorm lab attach: " << attached.error().what() << "\n";
    return attached.error().kind == ErrorKind::invalid_input || attached.error().kind == ErrorKind::not_found
               ? kExitUsage
               : kExitFailed;
  }
  sim::attach::LabAttach& lab = **attached;
  std::cout << "lab " << lab.lab().spec().name << " (simulated) is attaching to " << lab.server() << "\n"
            << std::flush;
  if (auto ready = lab.wait_ready(std::chrono::seconds(args.ready_timeout_s)); !ready) {
    std::cerr << "bootstorm lab attach: " << ready.error().what() << "\n";
    lab.stop();
    return kExitFailed;
  }
  if (!args.state_dir.empty()) {
    if (auto written = lab.lab().write_state(args.state_dir); !written) {
      std::cerr << "bootstorm lab attach: " << written.error().what() << "\n";
      lab.stop();
      return kExitFailed;
    }
  }
  const sim::Endpoints& endpoints = lab.lab().endpoints();
  std::cout << "lab " << lab.lab().spec().name << " (simulated) acts as KubeVirt's and CDI's controllers of "
            << lab.server() << "\n"
            << "  truth:    " << endpoints.kube_url << "/_lab/truth\n";
  if (!args.state_dir.empty()) {
    const auto dir = std::filesystem::absolute(args.state_dir).string();
    std::cout << "  state:    " << dir << "/endpoints.json, " << dir << "/kubeconfig (the lab's own view)\n";
  }
  std::cout << "press Ctrl-C to detach" << std::endl;

  int received = 0;
  sigwait(&signals, &received);
  spdlog::info("lab attach: signal {} received, detaching", received);
  const nlohmann::json stats = lab.stats();
  lab.stop();
  spdlog::info(
      "lab attach: {} requests ({} throttled): {} creates, {} updates, {} status updates, {} deletes, {} "
      "conflicts, {} given up; {} milestones made visible",
      stats.value("requests", 0), stats.value("throttled", 0), stats.value("creates", 0),
      stats.value("updates", 0), stats.value("statusUpdates", 0), stats.value("deletes", 0),
      stats.value("conflicts", 0), stats.value("givenUp", 0), stats.value("milestonesVisible", 0));
  if (!args.state_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove(std::filesystem::path(args.state_dir) / "endpoints.json", ec);
  }
  return kExitOk;
}

}  // namespace

std::function<int()> add_lab_attach(CLI::App& lab) {
  auto args = std::make_shared<LabAttachArgs>();
  CLI::App* cmd = lab.add_subcommand(
      "attach",
      "Act as a Kubernetes cluster's KubeVirt and CDI controllers through its API server, booting its VMs in "
      "the lab, until SIGINT/SIGTERM");
  cmd->add_option("--kubeconfig", args->kubeconfig,
                  "The cluster's kubeconfig (default: $KUBECONFIG, then ~/.kube/config)");
  cmd->add_option("--context", args->context, "The kubeconfig context (default: its current context)");
  cmd->add_option("--lab", args->lab, "Lab profile: a name in simulator/labs or a path to a YAML file")
      ->capture_default_str();
  cmd->add_option("--state-dir", args->state_dir,
                  "Write endpoints.json (with attachedTo), the lab's kubeconfig and ca.pem here once ready");
  args->seed_option = cmd->add_option("--seed", args->seed, "Override the lab profile's random seed");
  cmd->add_option("--set", args->sets, "Change the lab profile, KEY=VALUE as for `lab serve`; repeatable");
  cmd->add_option("--ready-timeout", args->ready_timeout_s,
                  "Seconds to wait for the server to be seeded and virt-api available")
      ->capture_default_str();
  return [args, cmd]() -> int { return cmd->parsed() ? attach(*args) : -1; };
}

}  // namespace bootstorm::cli
