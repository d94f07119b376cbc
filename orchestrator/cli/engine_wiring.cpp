// The composition root of the `bootstorm` executable (engine_wiring.hpp): the built-in platform kinds
// (descriptors and provider factories), the embedded lab, the beacon listener and the report writers, put
// together as the engine's hooks.
#include "orchestrator/cli/engine_wiring.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "common/rfc3339.hpp"
#include "orchestrator/beacon/listener.hpp"
#include "providers/api/provider.hpp"
#include "providers/kubevirt/kubevirt_provider.hpp"
#include "providers/vsphere/platform/api_choice.hpp"
#include "reports/reports.hpp"
#include "results/summary.hpp"
#include "simulator/lab/lab_server.hpp"

namespace bootstorm::cli {

void register_builtin_platforms() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Registration order is the order in which plan messages list the kinds ("vsphere, kubevirt").
    vsphere::register_provider();
    kubevirt::register_provider();
  });
}

Expected<bool> write_run_outputs(const std::filesystem::path& run_dir, const results::RunRecord& record) {
  results::Summary summary = results::summarize(record);
  // Re-rendering from the journal must give the same files: stamp them with the run's end, not with now.
  std::string generated_at =
      !record.ended_at.empty() ? record.ended_at : format_rfc3339(std::chrono::system_clock::now());
  auto written = reports::write_run_outputs(run_dir, record, summary, generated_at);
  if (!written) return written.error();
  return summary.slo_passed();
}

namespace {

// `endpoint: embedded`: the lab simulator in-process, on its own thread, for the duration of the run.
Expected<engine::EmbeddedLab> start_embedded_lab(const std::string& lab) {
  sim::LabServerOptions options;
  if (!lab.empty()) options.lab = lab;
  auto server = sim::LabServer::start(options);
  if (!server) return server.error();
  const sim::Endpoints& ep = (*server)->endpoints();
  engine::EmbeddedLab embedded;
  embedded.endpoints.vcenter_url = ep.vcenter_url;
  embedded.endpoints.kube_url = ep.kube_url;
  embedded.endpoints.ca_pem = ep.ca_pem;
  embedded.endpoints.username = ep.username;
  embedded.endpoints.password = ep.password;
  embedded.endpoints.kube_token = ep.kube_token;
  embedded.keepalive = std::shared_ptr<sim::LabServer>(std::move(*server));
  return embedded;
}

}  // namespace

engine::EngineHooks make_engine_hooks() {
  register_builtin_platforms();
  engine::EngineHooks hooks;
  hooks.make_provider = [](boost::asio::any_io_executor ex, const api::ProviderConfig& config) {
    return api::create_provider(config.kind, std::move(ex), config);
  };
  hooks.make_beacon = [](boost::asio::any_io_executor ex, const beacon::ListenerOptions& options) {
    return beacon::start_listener(std::move(ex), options);
  };
  hooks.write_outputs = [](const std::filesystem::path& dir, const results::RunRecord& record) {
    return write_run_outputs(dir, record);
  };
  hooks.start_embedded_lab = [](boost::asio::any_io_executor, const std::string& lab) {
    return start_embedded_lab(lab);
  };
  return hooks;
}

}  // namespace bootstorm::cli
