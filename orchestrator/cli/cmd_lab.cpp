// `bootstorm lab serve --lab NAME|PATH --state-dir DIR [--vcenter-port N] [--kube-port N] [--seed N]
// [--set KEY=VALUE ...]`: runs the lab simulator standalone, the profile changed by --set as predict's is
// (`bootstorm lab fit` is lab_fit_command.cpp, `bootstorm lab attach` lab_attach_command.cpp). Prints the
// endpoints, writes DIR/endpoints.json, DIR/kubeconfig and DIR/ca.pem (endpoints.json last: its presence
// means the lab is listening), and serves until SIGINT or SIGTERM, then stops cleanly and removes
// endpoints.json.
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>

#include "common/log.hpp"
#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/lab_attach_command.hpp"
#include "orchestrator/cli/lab_command_support.hpp"
#include "orchestrator/cli/lab_fit_command.hpp"
#include "simulator/lab/lab_server.hpp"

namespace bootstorm::cli {
namespace {

struct LabServeArgs {
  std::string lab = "small";
  std::string state_dir;
  unsigned short vcenter_port = 0;
  unsigned short kube_port = 0;
  std::uint64_t seed = 0;
  CLI::Option* seed_option = nullptr;  // set: --seed was given
  std::vector<std::string> sets;       // --set KEY=VALUE, in order
};

int serve(const LabServeArgs& args) {
  sigset_t signals = block_stop_signals();

  sim::LabServerOptions options;
  options.lab = args.lab;
  options.vcenter_port = args.vcenter_port;
  options.kube_port = args.kube_port;
  if (args.seed_option && args.seed_option->count() > 0) options.seed = args.seed;
  auto spec = lab_spec_with_sets(args.lab, args.sets);
  if (!spec) {
    std::cerr << "bootstorm lab serve: --set: " << spec.error().what() << "\n";
    return kExitUsage;
  }
  options.spec = std::move(*spec);
  auto server = sim::LabServer::start(std::move(options));
  if (!server) {
    std::cerr << "bootstorm lab serve: " << server.error().what() << "\n";
    return server.error().kind == ErrorKind::invalid_input || server.error().kind == ErrorKind::not_found
               ? kExitUsage
               : kExitFailed;
  }
  const sim::Endpoints& endpoints = (*server)->endpoints();
  if (!args.state_dir.empty()) {
    if (auto written = (*server)->write_state(args.state_dir); !written) {
      std::cerr << "bootstorm lab serve: " << written.error().what() << "\n";
      return kExitFailed;
    }
  }
  std::cout << "lab " << (*server)->spec().name << " (simulated) is serving\n"
            << "  vcenter:  " << endpoints.vcenter_url << "  (user " << endpoints.username << ")\n"
            << "  kube:     " << endpoints.kube_url << "\n";
  if (!args.state_dir.empty()) {
    const auto dir = std::filesystem::absolute(args.state_dir).string();
    std::cout << "  state:    " << dir << "/endpoints.json, " << dir << "/kubeconfig, " << dir << "/ca.pem\n";
  }
  std::cout << "  truth:    " << endpoints.vcenter_url << "/_lab/truth\n"
            << "press Ctrl-C to stop" << std::endl;

  int received = 0;
  sigwait(&signals, &received);
  spdlog::info("lab: signal {} received, stopping", received);
  (*server)->stop();
  if (!args.state_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove(std::filesystem::path(args.state_dir) / "endpoints.json", ec);
  }
  return kExitOk;
}

const CommandRegistration registration{Command{
    "lab", 80, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<LabServeArgs>();
      CLI::App* lab =
          app.add_subcommand("lab", "Run the lab simulator (vCenter and Kubernetes APIs on loopback)");
      lab->require_subcommand(1);
      CLI::App* serve_cmd = lab->add_subcommand("serve", "Serve a lab until SIGINT/SIGTERM");
      serve_cmd
          ->add_option("--lab", args->lab, "Lab profile: a name in simulator/labs or a path to a YAML file")
          ->capture_default_str();
      serve_cmd->add_option("--state-dir", args->state_dir,
                            "Write endpoints.json, kubeconfig and ca.pem into this directory");
      serve_cmd->add_option("--vcenter-port", args->vcenter_port, "vCenter front port (default: ephemeral)");
      serve_cmd->add_option("--kube-port", args->kube_port, "Kubernetes front port (default: ephemeral)");
      args->seed_option =
          serve_cmd->add_option("--seed", args->seed, "Override the lab profile's random seed");
      serve_cmd->add_option("--set", args->sets,
                            "Change the lab profile, KEY=VALUE as for predict (e.g. "
                            "datastores.lab-ds01.latencyMs=1.3); repeatable");
      auto run_fit = add_lab_fit(*lab);
      auto run_attach = add_lab_attach(*lab);
      return [args, serve_cmd, run_fit, run_attach] {
        if (serve_cmd->parsed()) return serve(*args);
        const int attached = run_attach();
        return attached >= 0 ? attached : run_fit();
      };
    }}};

}  // namespace
}  // namespace bootstorm::cli
