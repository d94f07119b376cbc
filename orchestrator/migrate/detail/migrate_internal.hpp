#pragma once
// Internal to bootstorm::migrate: what the parts of a migration run (run.cpp, endpoints.cpp, forklift_*.cpp,
// dry_run.cpp) and its cleanup (cleanup.cpp) share; not part of the library's interface.
#include <boost/asio/any_io_executor.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "orchestrator/engine/hooks.hpp"
#include "orchestrator/migrate/forklift_objects.hpp"
#include "orchestrator/migrate/migration_plan.hpp"
#include "orchestrator/migrate/migration_record.hpp"
#include "providers/kubevirt/kube_config.hpp"

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
  kubevirt::KubeClientConfig kube;
  std::string lab;
  std::optional<engine::EmbeddedLab> shared_lab;  // embedded: keeps the lab running
};

Expected<ResolvedEndpoints> resolve_endpoints(const MigrationPlan& plan, const engine::EngineHooks& hooks,
                                              boost::asio::any_io_executor executor);

// The Plan of a run: its maps share its name, its VMs land in plan.target_namespace. The same for a real run
// (forklift_setup.cpp) and for the calls a dry run lists (dry_run.cpp).
PlanBuild plan_build(const MigrationPlan& plan, const std::string& name, const std::string& run_id,
                     const Ref& source, const Ref& destination, const std::vector<std::string>& vm_names);

nlohmann::json run_started_payload(const MigrationPlan& plan, const MigrationRecord& record,
                                   const std::string& plan_yaml);

}  // namespace bootstorm::migrate
