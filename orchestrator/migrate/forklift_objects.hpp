#pragma once
// The Forklift (Migration Toolkit for Virtualization) objects bootstorm sends, built to the CRDs of
// forklift.konveyor.io/v1beta1 (tests/data/api-specs/forklift): the vSphere credentials Secret, Provider,
// NetworkMap, StorageMap, Plan and Migration, each labelled with the run id; their API paths; and the
// decoding of what comes back (Ready and validation conditions, status.migration.vms[].pipeline[]).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/migrate/migration_plan.hpp"

namespace bootstorm::migrate {

inline constexpr const char* kForkliftGroupVersion = "forklift.konveyor.io/v1beta1";
inline constexpr const char* kRunLabel = "bootstorm.io/run";  // same key as the storm's objects
inline constexpr const char* kMigratedFromAnnotation = "bootstorm.io/migrated-from";

// Names of the run's objects: "bs-<run id>-<what>" (the run id in the name is cleanup's interlock).
std::string object_name(const std::string& run_id, std::string_view what);

// vSphere Provider URL as Forklift wants it: https://<vcenter host[:port]>/sdk.
std::string vsphere_sdk_url(const std::string& vcenter_url);

struct SecretBuild {
  std::string name, namespace_, run_id;
  std::string user, password;
  std::string ca_pem;  // cacert (empty: not sent)
  bool insecure_skip_verify = false;
  std::string url;  // provider URL (Forklift's UI stores it too)
};
nlohmann::json build_secret(const SecretBuild& b);

struct ProviderBuild {
  std::string name, namespace_, run_id;
  std::string type;                           // vsphere | openshift
  std::string url;                            // vsphere: https://vcenter/sdk; openshift host provider: empty
  std::string secret_name, secret_namespace;  // empty: no secret (the host provider)
};
nlohmann::json build_provider(const ProviderBuild& b);

struct Ref {
  std::string name, namespace_;
};

nlohmann::json build_network_map(const std::string& name, const std::string& ns, const std::string& run_id,
                                 const Ref& source, const Ref& destination,
                                 const std::vector<NetworkMapping>& map);
nlohmann::json build_storage_map(const std::string& name, const std::string& ns, const std::string& run_id,
                                 const Ref& source, const Ref& destination,
                                 const std::vector<StorageMapping>& map);

struct PlanBuild {
  std::string name, namespace_, run_id;
  Ref source, destination, network_map, storage_map;
  std::string target_namespace;
  bool warm = false;
  std::vector<std::string> vm_names;
  std::string description;
};
// Plan with type cold|warm, targetPowerState off (the storm starts them) and targetLabels carrying the run
// id.
nlohmann::json build_plan(const PlanBuild& b);
nlohmann::json build_migration(const std::string& name, const std::string& ns, const std::string& run_id,
                               const Ref& plan);

// Paths.
std::string forklift_collection(const std::string& ns, std::string_view plural);  // providers, plans, ...
std::string forklift_object(const std::string& ns, std::string_view plural, const std::string& name);
std::string secrets_path(const std::string& ns);
std::string namespace_path(const std::string& name);
std::string vm_path(const std::string& ns, const std::string& name);  // kubevirt.io/v1 VirtualMachine
std::string vms_path(const std::string& ns);

// --- status decoding ---

struct Condition {
  std::string type, status, category, reason, message, suggestion;
  std::vector<std::string> items;
  std::string last_transition_time;
  std::string to_string() const;  // "Type=Status [category] reason: message (items)"
};
std::vector<Condition> conditions_of(const nlohmann::json& object);
const Condition* find_condition(const std::vector<Condition>& conditions, std::string_view type);

// Readiness of a Provider or Plan: ready when Ready=True; blocked when a condition of category Critical or
// Error is present (Forklift's validation); `blocking` lists those verbatim.
struct Readiness {
  bool ready = false;
  bool blocked = false;
  std::vector<Condition> blocking;
  std::vector<Condition> all;
};
Readiness readiness_of(const nlohmann::json& object);

struct StepStatus {
  std::string name;  // Initialize, DiskAllocation, DiskTransfer, ImageConversion, VirtualMachineCreation...
  std::string description;
  std::string phase;               // Pending | Running | Completed ...
  std::string started, completed;  // RFC 3339 as sent
  long long progress_completed = 0, progress_total = 0;
  std::string unit;  // annotations.unit (DiskTransfer: MB)
  std::string error_phase;
  std::vector<std::string> error_reasons;
};

struct VmStatus {
  std::string id, name, target_name;  // target_name: newName / targetName when Forklift renamed the VM
  std::string phase;
  std::string started, completed;
  std::vector<StepStatus> pipeline;
  std::string error_phase;
  std::vector<std::string> error_reasons;
  bool succeeded = false;  // condition Succeeded=True
  bool failed = false;     // condition Failed=True or an error
  bool canceled = false;   // condition Canceled=True
  bool done() const { return succeeded || failed || canceled || !completed.empty(); }
};

// status.migration.vms[] of a Plan (or status.vms[] of a Migration).
std::vector<VmStatus> vm_statuses(const nlohmann::json& object);

}  // namespace bootstorm::migrate
