#pragma once
// What a platform kind says about itself, so that the plan loader, the resolved-plan emitter and the engine
// ask the kind instead of comparing kind names: the plan keys it accepts and their rules, the golden image
// and clone kinds, the milestones its provider observes, and how the engine logs it in and finds it in the
// lab simulator. Each kind describes itself in its own folder (providers/<kind>/descriptor.cpp); a third
// platform adds a folder and a registration, and touches no loader or engine file.
//
// Free of Asio and of any provider: the plan library (bootstorm::plan) validates plans with it without
// linking a provider. The kind's own plan keys (its golden image, its options) it reads itself, into its own
// typed settings (read_settings, kind_settings.hpp). The factory that builds a kind's api::Provider is
// registered next to its descriptor by api::register_platform (provider.hpp).
//
// Registration is explicit (the executable's composition root, cli/engine_wiring.cpp, and tests call the
// kinds' register functions): static initialisers in static libraries are dropped by the linker.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "providers/api/kind_settings.hpp"

namespace bootstorm::api {

// How the engine turns platform.credentials into a provider's login (orchestrator/engine/platform.cpp).
enum class CredentialForm {
  username_password,  // usernameEnv/passwordEnv, or a YAML file with username and password, read by the
                      // engine
  kubeconfig,         // a kubeconfig path and context, read by the provider (none for endpoint in-cluster)
};

// Which front of the lab simulator serves the kind at a simulated endpoint (embedded, lab:<state-dir>).
enum class LabFront { vcenter, kubernetes };

// The golden keys of which a plan must give at least one (vm; dataSource or pvc).
struct RequiredGoldenKeys {
  std::vector<std::string> any_of;
  std::string why;  // with one key: appended to "missing required key 'vm' in golden", e.g. " (the VM ...)"
};

struct PlatformDescriptor {
  std::string kind;      // platform.kind
  std::string api_name;  // the platform's API as messages name it: "vCenter", "Kubernetes"

  // platform.credentials: the keys the kind accepts, and how the engine resolves them.
  std::vector<std::string> credential_keys;
  CredentialForm credential_form = CredentialForm::kubeconfig;
  // Non-empty: an https:// endpoint needs platform.credentials, described so ("usernameEnv and passwordEnv,
  // or file"); empty: the credentials are optional (a kubeconfig has defaults).
  std::string https_endpoint_needs_credentials;

  // An https:// endpoint must not end with these paths: the provider adds its API's path itself (vCenter's
  // /sdk or /api), so "https://vc/sdk" would be asked at /sdk/sdk. The plan error names the address to give.
  std::vector<std::string> https_endpoint_api_paths;

  // platform.endpoint: the words the kind accepts besides embedded, lab:<state-dir> and https://<host>.
  std::vector<std::string> endpoint_words;
  LabFront lab_front = LabFront::kubernetes;

  // platform.apiBudget.startsPerConnection: empty when the kind pipelines starts, else why it cannot.
  std::string starts_per_connection_refusal;

  // golden: the keys the kind accepts, the ones it needs, its clone kinds and the default clone kind.
  std::vector<std::string> golden_keys;
  RequiredGoldenKeys required_golden;
  std::vector<std::string> clone_kinds;
  std::string default_clone;

  // platform.api: the APIs the kind can speak and the default (empty: the kind has one API, the key is
  // refused).
  std::vector<std::string> platform_apis;
  std::string default_platform_api;
  // storm.powerOn: how the kind can send the storm's starts and the default (empty: the key is refused).
  std::vector<std::string> power_on_modes;
  std::string default_power_on;

  // telemetry.source: the storage telemetry the kind's provider reads (besides auto and none), and whether
  // its source takes telemetry.endpoint, tokenFile and caFile (a query API found or named, bearer tokens).
  std::vector<std::string> telemetry_sources;
  bool telemetry_endpoint = false;

  // The memory each desktop holds of its host while it runs, in MiB, when the kind decides it (KubeVirt:
  // bootstorm's VirtualMachine requests it); 0: the golden image's own (a vSphere clone has its golden VM's).
  // What the size bounds (plan/size_bounds.hpp) weigh a placement with on a lab.
  int desktop_memory_mib = 0;

  // The top-level namespace key (where the VMs are created).
  bool has_namespace = false;

  // Milestones the kind's provider observes itself (its Capabilities::observed), by name. With
  // start_acknowledged (every start call reports it) and port_open and beacon (the engine observes them on
  // any platform) they are the ready.signal values the kind offers.
  std::vector<std::string> observed_milestones;

  // Reads the kind's part of a plan into its typed settings (kind_settings.hpp), reporting what is wrong
  // through section.reader. Called once per plan, after the generic keys, also when those had problems.
  std::function<PlatformSettings(const KindPlanSection& section)> read_settings;
};

// Adds a kind, or replaces the descriptor of a kind registered before (registering twice is harmless).
void register_platform_descriptor(PlatformDescriptor descriptor);

// The descriptor of `kind`; nullopt when no such kind is registered.
std::optional<PlatformDescriptor> find_platform_descriptor(const std::string& kind);

// Every registered kind, in registration order (the order in which messages list them).
std::vector<PlatformDescriptor> platform_descriptors();

}  // namespace bootstorm::api
