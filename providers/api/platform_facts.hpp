#pragma once
// PlatformFacts: what a platform is (product, versions, hosts, storage), as a provider learns it, for the
// journal (platform_facts), summary.json ("platform"), the report header and `compare`. Plain data: no Asio.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/lab_identity.hpp"

namespace bootstorm::api {

// One host or node of the platform as the provider saw it; empty fields were not exposed.
struct HostFacts {
  std::string name;
  std::string cpu_model;
  std::string version;  // ESXi version and build; the node's kubelet version
  bool operator==(const HostFacts&) const = default;
};

// What the platform is, for the journal (platform_facts), summary.json ("platform") and the report header.
// Learned by connect() and check_inventory(); what the platform does not expose stays empty.
struct PlatformFacts {
  std::string product;  // "VMware vCenter Server", "Kubernetes"
  std::string version;  // "8.0.2", "v1.31.0"
  std::string build;    // vCenter's build; Kubernetes' gitCommit
  // The platform's own word that it is a simulator ("bootstorm simulated lab small", "govmomi vcsim"): every
  // run against it is simulated, whatever the endpoint form. Empty for a real platform.
  std::string simulator;
  // Other software the run depends on, with its version: "KubeVirt", "CDI", "OpenShift".
  std::map<std::string, std::string> components;
  std::vector<HostFacts> hosts;  // the plan's placement hosts / nodes
  std::string storage_class;     // KubeVirt: the clones' storage class
  std::string provisioner;       // its CSI provisioner
  std::string clone_method;  // KubeVirt: how CDI clones into it: csi-clone, snapshot or copy (host-assisted)
  bool operator==(const PlatformFacts&) const = default;
};

// The lab profile in a bootstorm lab's simulator name ("bootstorm lab small" -> "small"); another simulator's
// name as it is ("govmomi vcsim").
std::string lab_profile_of(const std::string& simulator);

// The JSON of the journal's platform_facts event and of summary.json's "platform": {product, version, build,
// simulator, components: {name: version}, hosts: [{name, cpuModel, version}], storageClass, provisioner,
// cloneMethod};
// empty fields are left out. from_json reads what to_json wrote and ignores what it does not know.
nlohmann::ordered_json facts_to_json(const PlatformFacts& facts);
PlatformFacts facts_from_json(const nlohmann::json& document);

// One line for the log and the report header: "VMware vCenter Server 8.0.2 build 22617221; ESXi 8.0.2 on 4
// hosts". Empty when nothing is known.
std::string describe(const PlatformFacts& facts);

// What differs between two runs' platforms, one sentence each ("KubeVirt: v1.2.0 vs v1.3.0"); empty when they
// agree. A fact one run did not record is not a difference (runs from before it was recorded).
std::vector<std::string> differences(const PlatformFacts& a, const PlatformFacts& b);

}  // namespace bootstorm::api
