#pragma once
// Resolves the plan's platform section into a ProviderConfig: credentials from the environment or a file,
// TLS settings, the API budget, the golden image, and — for simulated platforms — the lab's endpoints
// (`endpoint: embedded` starts the lab in-process through EngineHooks; `endpoint: lab:<state-dir>` reads the
// endpoints.json of a running `bootstorm lab serve`).
#include <boost/asio/any_io_executor.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "common/expected.hpp"
#include "orchestrator/engine/hooks.hpp"
#include "orchestrator/plan/plan.hpp"
#include "providers/api/provider.hpp"

namespace bootstorm::engine {

struct ResolvedPlatform {
  api::ProviderConfig config;
  bool simulated = false;
  std::string lab;                  // lab name (embedded) or state dir (lab:)
  std::shared_ptr<void> keepalive;  // embedded lab, temporary kubeconfig
};

// Everything except the lab/embedded endpoint part.
api::ProviderConfig base_provider_config(const plan::StormPlan& plan, const std::string& run_id,
                                         bool dry_run);

// Reads DIR/endpoints.json of `bootstorm lab serve --state-dir DIR`.
Expected<LabEndpoints> read_lab_endpoints(const std::filesystem::path& state_dir);

// The lab behind a simulated endpoint (is_simulated_endpoint): `embedded` starts one in-process through
// hooks.start_embedded_lab with profile `lab`; `lab:DIR` reads DIR/endpoints.json of `bootstorm lab serve`.
// The lab's secrets are registered for redaction. Used by runs and migrations alike.
struct OpenedLab {
  LabEndpoints endpoints;
  std::shared_ptr<void> keepalive;  // embedded: owns the running lab
  std::string name;                 // profile name, or the state dir when the lab does not say
  bool embedded = false;
};
Expected<OpenedLab> open_lab(const std::string& endpoint, const std::string& lab, const EngineHooks& hooks,
                             boost::asio::any_io_executor executor);

// The full resolution. May start the embedded lab (hooks.start_embedded_lab).
Expected<ResolvedPlatform> resolve_platform(const plan::StormPlan& plan, const std::string& run_id,
                                            bool dry_run, const EngineHooks& hooks,
                                            boost::asio::any_io_executor executor);

// True for endpoints served by the lab simulator (embedded, lab:<dir>).
bool is_simulated_endpoint(const std::string& endpoint);

// A kubeconfig (YAML) for a bearer-token cluster: server, CA (PEM, inlined as certificate-authority-data).
std::string make_token_kubeconfig(const std::string& server, const std::string& ca_pem,
                                  const std::string& token);

}  // namespace bootstorm::engine
