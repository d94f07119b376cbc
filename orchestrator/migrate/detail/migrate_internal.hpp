#pragma once
// Internal to bootstorm::migrate: what the parts of a migration run (run.cpp, endpoints.cpp, forklift_*.cpp,
// dry_run.cpp) and its cleanup (cleanup.cpp) share; not part of the library's interface.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "orchestrator/engine/hooks.hpp"
#include "orchestrator/migrate/forklift_objects.hpp"
#include "orchestrator/migrate/migration_plan.hpp"
#include "orchestrator/migrate/migration_record.hpp"
#include "protocol/kube/kube_api.hpp"
#include "protocol/kube/kube_config.hpp"
#include "providers/api/check.hpp"
#include "providers/kube/client_config.hpp"

namespace bootstorm::migrate {

// Scenario names of the two storms: distinct, so that the compare report says which side is which.
inline constexpr const char* kStormScenario = "vSphere desktops";
inline constexpr const char* kDestinationScenario = "OpenShift desktops";

// Both ends of a migration, resolved: the vCenter (URL, credentials, CA for the Provider secret) and the
// destination cluster's client configuration. For simulated endpoints, the lab (started once, shared with
// the nested storms).
struct ResolvedEndpoints {
  std::string vcenter_url;
  std::string vcenter_user;
  std::string vcenter_password;
  std::string vcenter_ca_pem;
  bool vcenter_insecure = false;
  kube::KubeClientConfig kube;
  std::string lab;
  std::optional<engine::EmbeddedLab> shared_lab;  // embedded: keeps the lab running
};

Expected<ResolvedEndpoints> resolve_endpoints(const MigrationPlan& plan, const engine::EngineHooks& hooks,
                                              boost::asio::any_io_executor executor);

// The migration's own checks (checks.cpp): the destination's API, Forklift, the namespaces, every verb the
// migration and its cleanup use, and whether the cluster reaches the vCenter (unknown: only Forklift can
// tell). Read-only; a failure ends the checks that depend on it.
boost::asio::awaitable<std::vector<api::CheckResult>> check_migration(kube::KubeApi& api,
                                                                      const MigrationPlan& plan,
                                                                      const ResolvedEndpoints& ep);

// The destination cluster's API (destination_api.cpp): no request budget, 8 connections, 60 s per call.
std::unique_ptr<kube::KubeApi> make_destination_api(boost::asio::any_io_executor executor,
                                                    const kube::KubeClientConfig& config);

// List + watch of `collection` filtered by `query` (a field or label selector), calling `on_object` with
// every object listed, added or modified, until `done()` (success), `cancel` (Error cancelled), `deadline`
// (Error timeout) or ten failures in a row (the last of them). `what` names the objects: "Plan ns/name".
boost::asio::awaitable<Expected<void>> watch_objects(kube::KubeApi& api, const std::string& collection,
                                                     const std::string& query,
                                                     std::function<void(const nlohmann::json&)> on_object,
                                                     std::function<bool()> done,
                                                     std::chrono::steady_clock::time_point deadline,
                                                     CancelSignal cancel, const std::string& what);

// The Plan of a run: its maps share its name, its VMs land in plan.target_namespace. The same for a real run
// (forklift_setup.cpp) and for the calls a dry run lists (dry_run.cpp).
PlanBuild plan_build(const MigrationPlan& plan, const std::string& name, const std::string& run_id,
                     const Ref& source, const Ref& destination, const std::vector<std::string>& vm_names);

nlohmann::json run_started_payload(const MigrationPlan& plan, const MigrationRecord& record,
                                   const std::string& plan_yaml);

}  // namespace bootstorm::migrate
