// A MigrationPlan as YAML (migration_plan.hpp): every default written out, so that the run directory's
// plan.yaml reloads to the same plan.
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <string>

#include "common/duration.hpp"
#include "orchestrator/migrate/migration_plan.hpp"

namespace bootstorm::migrate {

namespace {
std::string duration_text(std::chrono::milliseconds ms) {
  auto n = ms.count();
  if (n % 3'600'000 == 0) return std::to_string(n / 3'600'000) + "h";
  if (n % 60'000 == 0) return std::to_string(n / 60'000) + "m";
  if (n % 1000 == 0) return std::to_string(n / 1000) + "s";
  return std::to_string(n) + "ms";
}
}  // namespace

std::string to_yaml(const MigrationPlan& p) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << p.api_version;
  out << YAML::Key << "kind" << YAML::Value << p.kind;
  out << YAML::Key << "name" << YAML::Value << p.name;
  out << YAML::Key << "source" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "endpoint" << YAML::Value << p.source.endpoint;
  if (!p.source.lab.empty()) out << YAML::Key << "lab" << YAML::Value << p.source.lab;
  out << YAML::Key << "credentials" << YAML::Value << YAML::Flow << YAML::BeginMap;
  if (!p.source.credentials.file.empty()) {
    out << YAML::Key << "file" << YAML::Value << p.source.credentials.file;
  } else {
    out << YAML::Key << "usernameEnv" << YAML::Value << p.source.credentials.username_env;
    out << YAML::Key << "passwordEnv" << YAML::Value << p.source.credentials.password_env;
  }
  out << YAML::EndMap;
  out << YAML::Key << "tls" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "caFile"
      << YAML::Value << YAML::DoubleQuoted << p.source.tls.ca_file << YAML::Key << "insecureSkipVerify"
      << YAML::Value << p.source.tls.insecure_skip_verify << YAML::EndMap;
  out << YAML::Key << "apiBudget" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
      << "requestsPerSecond" << YAML::Value << p.source.api_budget.requests_per_second << YAML::Key
      << "maxConcurrent" << YAML::Value << p.source.api_budget.max_concurrent << YAML::EndMap;
  out << YAML::EndMap;
  out << YAML::Key << "destination" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "endpoint" << YAML::Value << p.destination.endpoint;
  if (p.destination.endpoint == "kubeconfig")
    out << YAML::Key << "credentials" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
        << "kubeconfig" << YAML::Value << YAML::DoubleQuoted << p.destination.credentials.kubeconfig
        << YAML::Key << "context" << YAML::Value << YAML::DoubleQuoted << p.destination.credentials.context
        << YAML::EndMap;
  out << YAML::Key << "tls" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "caFile"
      << YAML::Value << YAML::DoubleQuoted << p.destination.tls.ca_file << YAML::Key << "insecureSkipVerify"
      << YAML::Value << p.destination.tls.insecure_skip_verify << YAML::EndMap;
  out << YAML::Key << "namespace" << YAML::Value << p.destination.namespace_;
  out << YAML::EndMap;
  out << YAML::Key << "vms" << YAML::Value;
  if (!p.vms.names.empty()) {
    out << YAML::Flow << YAML::BeginSeq;
    for (auto& n : p.vms.names) out << n;
    out << YAML::EndSeq;
  } else if (!p.vms.from_run.empty()) {
    out << YAML::BeginMap << YAML::Key << "fromRun" << YAML::Value << p.vms.from_run << YAML::EndMap;
  } else if (p.vms.from_storm) {
    out << YAML::BeginMap << YAML::Key << "fromStorm" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "golden" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "vm"
        << YAML::Value << p.vms.from_storm->golden.vm << YAML::Key << "clone" << YAML::Value
        << p.vms.from_storm->golden.clone;
    if (!p.vms.from_storm->golden.datastore.empty())
      out << YAML::Key << "datastore" << YAML::Value << p.vms.from_storm->golden.datastore;
    out << YAML::EndMap;
    out << YAML::Key << "placement" << YAML::Value << YAML::BeginSeq;
    for (auto& pl : p.vms.from_storm->placement)
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "host" << YAML::Value << pl.host << YAML::Key
          << "vms" << YAML::Value << pl.vms << YAML::EndMap;
    out << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  } else {
    out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
  }
  out << YAML::Key << "networkMap" << YAML::Value << YAML::BeginSeq;
  for (auto& n : p.network_map) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "source" << YAML::Value << n.source << YAML::Key
        << "destination" << YAML::Value << YAML::BeginMap << YAML::Key << "type" << YAML::Value << n.type;
    if (!n.name.empty()) out << YAML::Key << "name" << YAML::Value << n.name;
    if (!n.namespace_.empty()) out << YAML::Key << "namespace" << YAML::Value << n.namespace_;
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "storageMap" << YAML::Value << YAML::BeginSeq;
  for (auto& s : p.storage_map) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "source" << YAML::Value << s.source << YAML::Key
        << "destination" << YAML::Value << YAML::BeginMap << YAML::Key << "storageClass" << YAML::Value
        << s.storage_class;
    if (!s.access_mode.empty()) out << YAML::Key << "accessMode" << YAML::Value << s.access_mode;
    if (!s.volume_mode.empty()) out << YAML::Key << "volumeMode" << YAML::Value << s.volume_mode;
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "targetNamespace" << YAML::Value << p.target_namespace;
  out << YAML::Key << "warm" << YAML::Value << p.warm;
  out << YAML::Key << "ready" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "signal"
      << YAML::Value << p.ready.signal;
  if (p.ready.port != 0) out << YAML::Key << "port" << YAML::Value << p.ready.port;
  out << YAML::EndMap;
  out << YAML::Key << "storm" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "mode"
      << YAML::Value << p.storm.mode << YAML::Key << "timeout" << YAML::Value
      << duration_text(p.storm.timeout) << YAML::Key << "settle" << YAML::Value
      << duration_text(p.storm.settle);
  if (p.storm.mode == "ramp") out << YAML::Key << "perSecond" << YAML::Value << p.storm.ramp_per_second;
  out << YAML::EndMap;
  out << YAML::Key << "timeout" << YAML::Value << duration_text(p.timeout);
  out << YAML::Key << "output" << YAML::Value << p.output;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace bootstorm::migrate
