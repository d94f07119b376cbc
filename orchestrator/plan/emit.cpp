// The resolved plan as YAML: every default written out, in the order of the plan format, so that
// `validate --print` shows exactly what a run will do and the run directory's plan.yaml reloads to the same
// plan. Empty optional strings are left out (the loader treats absence and the default the same way).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "common/duration.hpp"
#include "orchestrator/plan/plan.hpp"

namespace bootstorm::plan {
namespace {

// Shortest text that reads back to the same double (fmt's default), e.g. 50, 0.95, 12.5.
std::string number(double value) {
  return fmt::format("{}", value);
}

std::string duration(std::chrono::milliseconds value) {
  return format_duration(value);
}

std::string seconds(double value) {
  return format_duration(std::chrono::nanoseconds(static_cast<long long>(std::llround(value * 1e9))));
}

void optional_string(YAML::Emitter& out, const char* key, const std::string& value) {
  if (!value.empty()) out << YAML::Key << key << YAML::Value << value;
}

// A value of a kind's plan keys: scalars as they are, mappings and lists in flow style.
void emit_json(YAML::Emitter& out, const nlohmann::ordered_json& value) {
  if (value.is_object()) {
    out << YAML::Flow << YAML::BeginMap;
    for (const auto& [key, item] : value.items()) {
      out << YAML::Key << key << YAML::Value;
      emit_json(out, item);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const auto& item : value) emit_json(out, item);
    out << YAML::EndSeq;
  } else if (value.is_string()) {
    out << value.get<std::string>();
  } else if (value.is_boolean()) {
    out << value.get<bool>();
  } else if (value.is_number_integer()) {
    out << value.get<long long>();
  } else if (value.is_number()) {
    out << number(value.get<double>());
  } else {
    out << YAML::Null;
  }
}

// The keys a kind writes into `section` of the resolved plan, inside that section's mapping.
void emit_kind_keys(YAML::Emitter& out, const nlohmann::ordered_json& kind_keys, const char* section) {
  if (!kind_keys.is_object() || !kind_keys.contains(section)) return;
  for (const auto& [key, value] : kind_keys[section].items()) {
    out << YAML::Key << key << YAML::Value;
    emit_json(out, value);
  }
}

void emit_platform(YAML::Emitter& out, const Platform& p) {
  out << YAML::Key << "platform" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << p.kind;
  out << YAML::Key << "endpoint" << YAML::Value << p.endpoint;
  optional_string(out, "lab", p.lab);
  const Credentials& c = p.credentials;
  if (!(c.username_env.empty() && c.password_env.empty() && c.file.empty() && c.kubeconfig.empty() &&
        c.context.empty())) {
    out << YAML::Key << "credentials" << YAML::Value << YAML::Flow << YAML::BeginMap;
    optional_string(out, "usernameEnv", c.username_env);
    optional_string(out, "passwordEnv", c.password_env);
    optional_string(out, "file", c.file);
    optional_string(out, "kubeconfig", c.kubeconfig);
    optional_string(out, "context", c.context);
    out << YAML::EndMap;
  }
  out << YAML::Key << "tls" << YAML::Value << YAML::Flow << YAML::BeginMap;
  optional_string(out, "caFile", p.tls.ca_file);
  out << YAML::Key << "insecureSkipVerify" << YAML::Value << p.tls.insecure_skip_verify;
  out << YAML::EndMap;
  out << YAML::Key << "apiBudget" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "requestsPerSecond" << YAML::Value << number(p.api_budget.requests_per_second);
  out << YAML::Key << "maxConcurrent" << YAML::Value << p.api_budget.max_concurrent;
  if (p.api_budget.starts_per_connection > 0) {
    out << YAML::Key << "startsPerConnection" << YAML::Value << p.api_budget.starts_per_connection;
  }
  out << YAML::EndMap;
  emit_kind_keys(out, p.settings.plan_keys(), "platform");
  out << YAML::EndMap;
}

// The golden section and the namespace are the kind's (api::KindSettings::plan_keys).
void emit_golden(YAML::Emitter& out, const nlohmann::ordered_json& kind_keys) {
  if (kind_keys.contains("golden")) {
    out << YAML::Key << "golden" << YAML::Value << YAML::BeginMap;
    emit_kind_keys(out, kind_keys, "golden");
    out << YAML::EndMap;
  }
  if (kind_keys.contains("namespace")) {
    out << YAML::Key << "namespace" << YAML::Value;
    emit_json(out, kind_keys["namespace"]);
  }
}

void emit_scenarios(YAML::Emitter& out, const std::vector<Scenario>& scenarios) {
  out << YAML::Key << "scenarios" << YAML::Value << YAML::BeginSeq;
  for (const auto& s : scenarios) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << s.name;
    out << YAML::Key << "placement" << YAML::Value << YAML::BeginSeq;
    for (const auto& p : s.placement) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "host" << YAML::Value << p.host << YAML::Key
          << "vms" << YAML::Value << p.vms << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void emit_storm(YAML::Emitter& out, const Storm& s, const nlohmann::ordered_json& kind_keys) {
  out << YAML::Key << "storm" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "mode" << YAML::Value << s.mode;
  out << YAML::Key << "timeout" << YAML::Value << duration(s.timeout);
  out << YAML::Key << "settle" << YAML::Value << duration(s.settle);
  if (s.mode == "ramp") out << YAML::Key << "perSecond" << YAML::Value << number(s.ramp_per_second);
  if (s.start_concurrency > 0) out << YAML::Key << "startConcurrency" << YAML::Value << s.start_concurrency;
  emit_kind_keys(out, kind_keys, "storm");
  out << YAML::EndMap;
}

void emit_telemetry(YAML::Emitter& out, const Telemetry& t) {
  out << YAML::Key << "telemetry" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "source" << YAML::Value << t.source;
  if (t.interval.count() > 0) out << YAML::Key << "interval" << YAML::Value << duration(t.interval);
  optional_string(out, "endpoint", t.endpoint);
  optional_string(out, "tokenFile", t.token_file);
  optional_string(out, "caFile", t.ca_file);
  out << YAML::EndMap;
}

void emit_ready(YAML::Emitter& out, const Ready& r) {
  out << YAML::Key << "ready" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "signal" << YAML::Value << r.signal;
  if (r.port != 0) out << YAML::Key << "port" << YAML::Value << r.port;
  if (r.beacon.enabled) {
    out << YAML::Key << "beacon" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "listen" << YAML::Value << YAML::DoubleQuoted << r.beacon.listen;
    optional_string(out, "advertiseUrl", r.beacon.advertise_url);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_slos(YAML::Emitter& out, const std::vector<Slo>& slos) {
  if (slos.empty()) return;
  out << YAML::Key << "slo" << YAML::Value << YAML::BeginSeq;
  for (const auto& s : slos) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "milestone" << YAML::Value << s.milestone;
    out << YAML::Key << "stat" << YAML::Value << s.stat;
    if (s.is_min) {
      out << YAML::Key << "min" << YAML::Value << number(s.max);
    } else {
      out << YAML::Key << "max" << YAML::Value << seconds(s.max);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

}  // namespace

std::string to_yaml(const StormPlan& plan) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << plan.api_version;
  out << YAML::Key << "kind" << YAML::Value << plan.kind;
  out << YAML::Key << "name" << YAML::Value << plan.name;
  const nlohmann::ordered_json kind_keys = plan.platform.settings.plan_keys();
  emit_platform(out, plan.platform);
  emit_golden(out, kind_keys);
  emit_scenarios(out, plan.scenarios);
  emit_storm(out, plan.storm, kind_keys);
  emit_ready(out, plan.ready);
  out << YAML::Key << "repeat" << YAML::Value << plan.repeat;
  emit_slos(out, plan.slo);
  emit_telemetry(out, plan.telemetry);
  out << YAML::Key << "cleanup" << YAML::Value << plan.cleanup;
  out << YAML::Key << "output" << YAML::Value << plan.output;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace bootstorm::plan
