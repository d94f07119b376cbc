// The command-line front (see app.hpp). Separate from main() so that tests drive it with their own commands.
#include "orchestrator/cli/app.hpp"

#include <iostream>
#include <map>

#include "common/log.hpp"

namespace bootstorm::cli {
namespace {

GlobalOptions g_last_globals;

spdlog::level::level_enum level_for(int verbosity) {
  if (verbosity < 0) return spdlog::level::warn;
  if (verbosity == 0) return spdlog::level::info;
  if (verbosity == 1) return spdlog::level::debug;
  return spdlog::level::trace;
}

}  // namespace

const GlobalOptions& last_global_options() {
  return g_last_globals;
}

int run_cli(int argc, const char* const* argv) {
  CLI::App app{
      "bootstorm: clone N desktop VMs from a golden image, power them on at the same instant and measure how "
      "long each takes to become usable (vSphere, KubeVirt, or the embedded lab simulator)."};
  app.name("bootstorm");
  app.require_subcommand(0, 1);  // none given: help on stderr and exit 2 (below), not CLI11's terse error
  app.fallthrough();  // global flags also work after the subcommand: `bootstorm validate -v x.yaml`

  // Subcommands capture a reference to `globals`; it is filled in after parsing, before any of them runs.
  GlobalOptions globals;
  int verbose = 0;
  bool quiet = false;
  auto* verbose_flag = app.add_flag("-v,--verbose", verbose, "More log output (-v debug, -vv trace)");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors in the log")->excludes(verbose_flag);
  app.add_option("--log-format", globals.log_format, "Log format on stderr: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  std::map<std::string, std::function<int()>> runners;
  for (const auto& command : registered_commands()) runners[command.name] = command.setup(app, globals);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is not an error; every real parse error is a usage error (exit 2) with CLI11's own message.
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  globals.verbosity = quiet ? -1 : verbose;
  g_last_globals = globals;
  log::Options log_options;
  log_options.format = globals.log_format == "json" ? log::Format::json : log::Format::text;
  log_options.level = level_for(globals.verbosity);
  log::init(log_options);

  for (CLI::App* sub : app.get_subcommands()) {
    auto it = runners.find(sub->get_name());
    if (it != runners.end() && it->second) return it->second();
  }
  std::cerr << app.help() << "\nbootstorm: no subcommand given\n";
  return kExitUsage;
}

}  // namespace bootstorm::cli
