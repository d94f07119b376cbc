#pragma once
// MigrationPlan (kind MigrationPlan, apiVersion bootstorm.io/v1): which desktops to move from vSphere to
// OpenShift Virtualization / KubeVirt with the Migration Toolkit for Virtualization (Forklift), and how.
// Loaded and validated strictly, every problem reported as `file:line:col: message` (plan::Diagnostic),
// before anything touches a platform — the same conventions as the StormPlan loader (orchestrator/plan).
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/plan/plan.hpp"
#include "providers/vsphere/settings.hpp"

namespace bootstorm::migrate {

inline constexpr const char* kMigrationPlanKind = "MigrationPlan";

// The vCenter the VMs come from.
struct SourceEndpoint {
  std::string endpoint = "embedded";  // embedded | https://vcenter.example.com | lab:<state-dir>
  std::string lab;                    // embedded: simulator/labs/<name>.yaml or a path
  plan::Credentials credentials;      // usernameEnv/passwordEnv or file
  plan::Tls tls;
  plan::ApiBudget api_budget;

  bool operator==(const SourceEndpoint&) const = default;
};

// The cluster running Forklift and receiving the VMs.
struct DestinationEndpoint {
  std::string endpoint =
      "embedded";                 // embedded (the source's lab) | kubeconfig | in-cluster | lab:<state-dir>
  plan::Credentials credentials;  // kubeconfig, context
  plan::Tls tls;
  std::string namespace_ = "openshift-mtv";  // where the Forklift objects live (MTV's namespace)

  bool operator==(const DestinationEndpoint&) const = default;
};

// `vms.fromStorm`: clone and boot-storm these desktops on the source vCenter first (the vSphere side of the
// comparison, cleanup never), then migrate exactly those clones.
struct SourceStorm {
  vsphere::Settings golden;  // vm, clone, datastore
  std::vector<plan::Placement> placement;

  bool operator==(const SourceStorm&) const = default;
};

// Exactly one of the three is set.
struct VmSelection {
  std::vector<std::string> names;         // vms: [a, b] or vms: {names: [a, b]}
  std::string from_run;                   // vms: {fromRun: DIR} — the VMs a vSphere run created and kept
  std::optional<SourceStorm> from_storm;  // vms: {fromStorm: {...}}

  bool operator==(const VmSelection&) const = default;
};

struct NetworkMapping {
  std::string source;        // vSphere network name (or id "network-12")
  std::string type = "pod";  // pod | multus | ignored
  std::string name;          // multus: NetworkAttachmentDefinition name
  std::string namespace_;    // multus: its namespace

  bool operator==(const NetworkMapping&) const = default;
};

struct StorageMapping {
  std::string source;         // datastore name (or id "datastore-12")
  std::string storage_class;  // destination StorageClass
  std::string access_mode;    // optional: ReadWriteOnce | ReadWriteMany | ReadOnlyMany
  std::string volume_mode;    // optional: Filesystem | Block

  bool operator==(const StorageMapping&) const = default;
};

struct MigrationPlan {
  std::string api_version = "bootstorm.io/v1";
  std::string kind = kMigrationPlanKind;
  std::string name;
  SourceEndpoint source;
  DestinationEndpoint destination;
  VmSelection vms;
  std::vector<NetworkMapping> network_map;
  std::vector<StorageMapping> storage_map;
  std::string target_namespace;
  bool warm = false;
  plan::Ready ready;  // the ready signal of the storms (--then-storm, fromStorm)
  plan::Storm storm;  // storm settings of those storms
  std::chrono::milliseconds timeout{std::chrono::hours(4)};  // whole migration, Migration created -> all done
  std::string output = "runs";

  std::string source_path;
  bool operator==(const MigrationPlan&) const = default;
};

struct MigrationLoadResult {
  std::optional<MigrationPlan> plan;
  std::vector<plan::Diagnostic> diagnostics;  // every problem, in file order
};

MigrationLoadResult load_migration_plan_text(const std::string& text, const std::string& path_for_messages);
MigrationLoadResult load_migration_plan_file(const std::string& path);

// True when the document's top-level `kind` is MigrationPlan (cheap sniff for command dispatch).
bool is_migration_plan_text(const std::string& text);

// The plan as YAML with every default filled in (the run directory's plan.yaml).
std::string to_yaml(const MigrationPlan& plan);

}  // namespace bootstorm::migrate
