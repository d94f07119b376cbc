#pragma once
// The Provider interface: everything the storm engine needs from a platform, free of Beast and of platform
// detail. Implementations live one folder each (providers/vsphere, providers/kubevirt); tests use
// tests/unit/orchestrator/engine/fake_provider.
//
// Threading: a provider is created on, and only used from, the engine's executor.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "protocol/http/api_stats.hpp"
#include "providers/api/check.hpp"
#include "providers/api/milestone.hpp"
#include "providers/api/platform_descriptor.hpp"
#include "providers/api/platform_facts.hpp"
#include "providers/api/telemetry.hpp"

namespace bootstorm::api {

// KubeVirt start burst, automatic pipelining: up to this many concurrent starts each get a connection of
// their own; beyond it, starts share connections (HTTP/1.1 pipelining) so that the burst holds about this
// many. A pre-opened TLS connection costs ~90 KB of client memory (Asio's SSL stream and OpenSSL state).
constexpr int kAutoStartConnections = 500;

// How many starts share one connection for `max_concurrent` concurrent starts (`configured` > 0 wins).
constexpr int starts_per_connection(int configured, int max_concurrent) {
  if (configured > 0) return configured;
  return max_concurrent <= kAutoStartConnections
             ? 1
             : (max_concurrent + kAutoStartConnections - 1) / kAutoStartConnections;
}

// What a provider needs to know, resolved from the plan by the engine (providers never see the plan type).
struct ProviderConfig {
  std::string kind;        // platform.kind: a registered PlatformDescriptor's kind
  std::string endpoint;    // https URL, "kubeconfig", "in-cluster"; for embedded: the lab's URL
  bool simulated = false;  // endpoint was the embedded lab / a lab serve state dir
  // CredentialForm::username_password: resolved from env or file by the engine, registered as secrets
  std::string username;
  std::string password;
  // CredentialForm::kubeconfig: kubeconfig path and context ("" = current-context)
  std::string kubeconfig;
  std::string context;
  // TLS
  std::string ca_file;
  std::string ca_data;
  bool insecure_skip_verify = false;
  // API budget
  double requests_per_second = 50;
  int max_concurrent = 64;
  int starts_per_connection = 0;  // KubeVirt start burst: pipelined starts per connection; 0 = automatic
  // The kind's own part of the plan (its golden image, its options), typed by the kind: its provider reads
  // it (providers/<kind>/settings.hpp); the engine hands it on unopened.
  PlatformSettings settings;
  std::string run_id;  // 6 hex; every object created carries it
  // Beacon: URL and per-VM token handed to guests (cloud-init / guestinfo); empty URL = no beacon
  std::string beacon_url;
  std::function<std::string(const std::string& vm_name)> beacon_token;
  // Facts the provider learns that the journal keeps: `type` is one of the kNote* names below, `fields_json`
  // a JSON object (the engine adds the scenario and repeat). May be empty (nobody keeps them).
  std::function<void(std::string_view type, std::string fields_json)> note;
  // The platform is gone: its API endpoint refused or failed connections in a row for a while (by default 5
  // over at least 10 s; http::ClientOptions::on_unreachable). Told once, with a sentence naming the endpoint,
  // from whichever thread noticed. May be empty.
  std::function<void(const std::string& message)> platform_gone;
  // Timeouts
  std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
  bool dry_run = false;  // log every changing call instead of making it
};

// One batched power-on call (vim25 PowerOnMultiVM_Task): {"call", "vms", "attempted": [id...],
// "notAttempted": [{"id", "reason"}]}.
inline constexpr std::string_view kNotePowerOnBatch = "power_on_batch";
// A VM that runs on another host than the plan placed it on (vCenter's DRS): {"vm", "plannedHost", "host"}
// (the VM's and the hosts' names).
inline constexpr std::string_view kNoteVmMoved = "vm_moved";

struct VmSpec {
  std::string name;      // bs-<runid>-<scenario slug>-<nnn>
  std::string scenario;  // scenario name as in the plan
  std::string host;      // placement host / node
  int index = 0;         // 1-based within the scenario
};

struct VmHandle {
  std::string name;
  std::string id;  // platform id (vSphere "vm-123"; KubeVirt "namespace/name")
  std::string host;
  std::string scenario;
};

struct InventoryRequest {
  std::vector<std::string> hosts;  // every placement host/node of the plan
  std::size_t total_vms = 0;
};

struct Capabilities {
  // The platform API the provider speaks, for the journal and the report ("vim25 (SOAP)", "REST", ...).
  std::string api;
  // Milestones this provider observes itself, with their typical resolution in seconds.
  std::map<Milestone, double> observed;
  bool start_blocks_until_powered_on = false;  // vCenter: power start returns when the VM is on
  // The provider gathers the starts that arrive together into one request (vim25 PowerOnMultiVM_Task): the
  // start barrier then releases every start at once instead of apiBudget.maxConcurrent at a time.
  bool starts_batched = false;
  // Start requests in flight at once during a simultaneous burst when the plan does not set
  // storm.startConcurrency; 0 = every start at once. vCenter REST: vCenter runs about 640 operations at once
  // and queues the rest, each holding its connection until the VM is on, so more would only hold sockets.
  std::size_t start_burst_limit = 0;
};

struct StartResult {
  std::chrono::steady_clock::time_point written_mono{};  // start request completely written (start_requested)
  std::chrono::system_clock::time_point written_wall{};
  std::chrono::steady_clock::time_point acknowledged_mono{};  // success response received
  std::chrono::system_clock::time_point acknowledged_wall{};
  int attempts = 1;
};

using MilestoneSink = std::function<void(MilestoneEvent)>;

class Provider {
 public:
  virtual ~Provider() = default;

  virtual Capabilities capabilities() const = 0;

  // Log in / load credentials and check the API answers. Errors name the endpoint and what to do.
  virtual boost::asio::awaitable<Expected<void>> connect() = 0;

  // Before any change: hosts/nodes exist and are usable, golden image exists in the right state, room for
  // the clones. Errors name the missing object and list what exists.
  virtual boost::asio::awaitable<Expected<void>> check_inventory(const InventoryRequest& request) = 0;

  // Read-only questions before a run (`bootstorm check`; `run` asks them before it creates anything), after
  // connect(): each answered pass / warn / fail with what to do, or unknown where this platform cannot tell.
  // A provider whose check() passed may skip the same work in check_inventory(). The default asks
  // check_inventory() and reports its answer as one result.
  virtual boost::asio::awaitable<std::vector<CheckResult>> check(const CheckRequest& request);

  // Clone one VM (placement pinned to spec.host), labelled/named with the run id. The engine bounds
  // concurrency across calls; providers add their own per-host limits (vCenter cost units).
  virtual boost::asio::awaitable<Expected<VmHandle>> provision(const VmSpec& spec) = 0;

  // Wait until the clone can be started (powered off / DataVolume Succeeded).
  virtual boost::asio::awaitable<Expected<void>> wait_startable(const VmHandle& vm,
                                                                std::chrono::milliseconds timeout) = 0;

  // Open sessions and connections before the StartBarrier fires (`expected_starts` concurrent starts).
  virtual boost::asio::awaitable<Expected<void>> prepare_storm(std::size_t expected_starts) = 0;

  // Send the start request. Must not serialize: the engine runs many of these concurrently.
  virtual boost::asio::awaitable<Expected<StartResult>> start(const VmHandle& vm) = 0;

  // Observe milestones of `vms` (already started or about to be) and push them to `sink` as they are seen,
  // until every VM reached every milestone the provider observes or `stop` is cancelled. Never blocks the
  // executor. Must tolerate dropped connections (reconnect, recover).
  virtual boost::asio::awaitable<void> observe(std::vector<VmHandle> vms, MilestoneSink sink,
                                               CancelSignal stop) = 0;

  // Power off. Refuses (Error invalid_input) any VM whose name/labels lack the run id.
  virtual boost::asio::awaitable<Expected<void>> stop(const VmHandle& vm) = 0;
  // Delete (power off first if needed). Refuses any VM without the run id. Idempotent: gone = success.
  virtual boost::asio::awaitable<Expected<void>> destroy(const VmHandle& vm) = 0;
  // Every object of the platform that carries `run_id` (cleanup's second opinion next to the journal).
  virtual boost::asio::awaitable<Expected<std::vector<VmHandle>>> list_run_vms(const std::string& run_id) = 0;
  // Removes what the run made besides its VMs (vSphere: the golden VM's snapshot for linked clones), found by
  // the run id it carries. Called after the VMs are deleted, by a run's cleanup and by `bootstorm cleanup`.
  virtual boost::asio::awaitable<Expected<void>> remove_run_artifacts(const std::string& run_id);

  // Log out / close; called at the end, also after errors and Ctrl-C.
  virtual boost::asio::awaitable<void> disconnect() = 0;

  virtual http::ApiStats stats() const = 0;

  // What the provider learned of the platform so far (after connect() and check_inventory()).
  virtual PlatformFacts facts() const { return {}; }

  // How the platform made `vm`, as it answered, once wait_startable() succeeded: vSphere "instant", "linked"
  // or "full" (the kind of clone task that succeeded: REST has no linked clones, so there "full"); KubeVirt
  // the clone type CDI recorded on the DataVolume (cdi.kubevirt.io/cloneType: "csi-clone", "snapshot", or
  // "copy", host-assisted). Empty when the platform did not say.
  virtual std::string clone_method(const VmHandle& vm) const {
    (void)vm;
    return {};
  }

  // The platform's storage telemetry for `settings` (after connect()), or why there is none (the platform has
  // no monitoring this provider reads, the plan asked for a source the platform does not offer). The source
  // may use the provider's sessions: it must not outlive the provider. The default has none.
  virtual Expected<std::unique_ptr<TelemetrySource>> telemetry_source(const TelemetrySettings& settings);
};

// True when `name` carries the run id as bootstorm names it: "bs-<run_id>-...". The safety interlock.
bool name_carries_run_id(const std::string& name, const std::string& run_id);
// The error of a provision() asked for a VM whose name lacks the run id (cleanup could not find it); nullopt
// when the name carries it.
std::optional<Error> refuse_unnamed_create(const std::string& name, const std::string& run_id);

using ProviderFactory = std::function<std::unique_ptr<Provider>(boost::asio::any_io_executor executor,
                                                                const ProviderConfig& config)>;

// Factory registry keyed by platform.kind. Registration is explicit: the executable's composition root
// (cli/engine_wiring.cpp) and tests call each kind's register function (static initialisers in static
// libraries would be dropped by the linker).
void register_provider(const std::string& kind, ProviderFactory factory);
std::unique_ptr<Provider> create_provider(const std::string& kind, boost::asio::any_io_executor executor,
                                          const ProviderConfig& config);  // nullptr when unknown
std::vector<std::string> registered_providers();

// A platform kind complete: its descriptor (what the plan loader and the engine ask) and its factory.
void register_platform(PlatformDescriptor descriptor, ProviderFactory factory);

}  // namespace bootstorm::api
