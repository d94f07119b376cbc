// Faults <-> JSON: the body of POST /_lab/faults and GET /_lab/faults on both fronts. Keys are the same
// camelCase names as the lab YAML's `faults:` section.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "simulator/model/lab.hpp"

namespace bootstorm::sim::model {

namespace {

using nlohmann::json;

Error bad(const std::string& message) {
  return make_error(ErrorKind::invalid_input, "Invalid faults document: " + message,
                    "See simulator/README.md, section Faults, for the accepted keys.");
}

Expected<void> read_rate(const json& value, const char* key, double& out) {
  if (!value.is_number()) return bad(fmt::format("'{}' must be a number", key));
  const double v = value.get<double>();
  if (v < 0 || v > 1) return bad(fmt::format("'{}' must be between 0 and 1", key));
  out = v;
  return {};
}

Expected<void> read_non_negative(const json& value, const char* key, double& out) {
  if (!value.is_number()) return bad(fmt::format("'{}' must be a number", key));
  if (value.get<double>() < 0) return bad(fmt::format("'{}' must be >= 0", key));
  out = value.get<double>();
  return {};
}

Expected<void> read_list(const json& value, const char* key, std::vector<std::string>& out) {
  if (!value.is_array()) return bad(fmt::format("'{}' must be an array of strings", key));
  std::vector<std::string> items;
  for (const auto& item : value) {
    if (!item.is_string()) return bad(fmt::format("'{}' must be an array of strings", key));
    items.push_back(item.get<std::string>());
  }
  out = std::move(items);
  return {};
}

const char* const kMigrationSteps[] = {"Initialize", "DiskTransfer", "ImageConversion",
                                       "VirtualMachineCreation"};

Expected<void> read_migration_failures(const json& value, std::vector<MigrationStepFailure>& out) {
  const char* what = "'migrationFailures' must be an array of {vm, step, reason}";
  if (!value.is_array()) return bad(what);
  std::vector<MigrationStepFailure> items;
  for (const auto& item : value) {
    if (!item.is_object()) return bad(what);
    MigrationStepFailure failure;
    for (const auto& [key, field] : item.items()) {
      if (!field.is_string()) return bad(fmt::format("'migrationFailures[].{}' must be a string", key));
      if (key == "vm") {
        failure.vm = field.get<std::string>();
      } else if (key == "step") {
        failure.step = field.get<std::string>();
      } else if (key == "reason") {
        failure.reason = field.get<std::string>();
      } else {
        return bad(fmt::format("unknown key 'migrationFailures[].{}' (known: vm, step, reason)", key));
      }
    }
    if (failure.vm.empty()) return bad("'migrationFailures[].vm' is required");
    bool known = false;
    for (const char* step : kMigrationSteps) known = known || failure.step == step;
    if (!known) {
      return bad(
          fmt::format("'migrationFailures[].step' must be one of Initialize, DiskTransfer, ImageConversion, "
                      "VirtualMachineCreation (got '{}')",
                      failure.step));
    }
    if (failure.reason.empty()) failure.reason = fmt::format("{} failed (injected fault).", failure.step);
    items.push_back(std::move(failure));
  }
  out = std::move(items);
  return {};
}

}  // namespace

Expected<void> parse_migration_failures_json(std::string_view json_text,
                                             std::vector<MigrationStepFailure>& out) {
  const json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return bad("'migrationFailures' is not valid JSON");
  return read_migration_failures(doc, out);
}

Expected<void> patch_faults_json(Faults& faults, std::string_view json_text) {
  const json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return bad("the body is not valid JSON");
  if (!doc.is_object()) return bad("the body must be a JSON object");
  Faults next = faults;  // all or nothing
  for (const auto& [key, value] : doc.items()) {
    Expected<void> step;
    if (key == "neverBootRate") {
      step = read_rate(value, "neverBootRate", next.never_boot_rate);
    } else if (key == "agentNeverStartsRate") {
      step = read_rate(value, "agentNeverStartsRate", next.agent_never_starts_rate);
    } else if (key == "neverBootVms") {
      step = read_list(value, "neverBootVms", next.never_boot_vms);
    } else if (key == "agentNeverStartsVms") {
      step = read_list(value, "agentNeverStartsVms", next.agent_never_starts_vms);
    } else if (key == "cloneFailureRate") {
      step = read_rate(value, "cloneFailureRate", next.clone_failure_rate);
    } else if (key == "cloneFailureHosts") {
      step = read_list(value, "cloneFailureHosts", next.clone_failure_hosts);
    } else if (key == "errorRate") {
      step = read_rate(value, "errorRate", next.error_rate);
    } else if (key == "errorStatus") {
      if (!value.is_number_integer() || value.get<int>() < 400 || value.get<int>() > 599) {
        step = bad("'errorStatus' must be an HTTP error status (400-599)");
      } else {
        next.error_status = value.get<int>();
      }
    } else if (key == "latencyMs") {
      step = read_non_negative(value, "latencyMs", next.latency_ms);
    } else if (key == "latencyJitterMs") {
      step = read_non_negative(value, "latencyJitterMs", next.latency_jitter_ms);
    } else if (key == "watchDropAfterS") {
      step = read_non_negative(value, "watchDropAfterS", next.watch_drop_after_s);
    } else if (key == "expireSessions") {
      if (!value.is_boolean()) {
        step = bad("'expireSessions' must be a boolean");
      } else {
        next.expire_sessions = value.get<bool>();
      }
    } else if (key == "forgetCollectorVersions") {
      if (!value.is_boolean()) {
        step = bad("'forgetCollectorVersions' must be a boolean");
      } else {
        next.forget_collector_versions = value.get<bool>();
      }
    } else if (key == "forceGoneRate") {
      step = read_rate(value, "forceGoneRate", next.force_gone_rate);
    } else if (key == "paths") {
      step = read_list(value, "paths", next.paths);
    } else if (key == "migrationFailures") {
      step = read_migration_failures(value, next.migration_failures);
    } else {
      step = bad(fmt::format("unknown key '{}'", key));
    }
    if (!step) return step.error();
  }
  faults = std::move(next);
  return {};
}

std::string faults_to_json(const Faults& f) {
  json migration_failures = json::array();
  for (const auto& failure : f.migration_failures) {
    migration_failures.push_back({{"vm", failure.vm}, {"step", failure.step}, {"reason", failure.reason}});
  }
  return json{{"neverBootRate", f.never_boot_rate},
              {"agentNeverStartsRate", f.agent_never_starts_rate},
              {"neverBootVms", f.never_boot_vms},
              {"agentNeverStartsVms", f.agent_never_starts_vms},
              {"cloneFailureRate", f.clone_failure_rate},
              {"cloneFailureHosts", f.clone_failure_hosts},
              {"errorRate", f.error_rate},
              {"errorStatus", f.error_status},
              {"latencyMs", f.latency_ms},
              {"latencyJitterMs", f.latency_jitter_ms},
              {"watchDropAfterS", f.watch_drop_after_s},
              {"expireSessions", f.expire_sessions},
              {"forgetCollectorVersions", f.forget_collector_versions},
              {"forceGoneRate", f.force_gone_rate},
              {"paths", f.paths},
              {"migrationFailures", std::move(migration_failures)}}
      .dump();
}

}  // namespace bootstorm::sim::model
