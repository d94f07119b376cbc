// The StormPlan's fields as tables (plan_fields.hpp). Messages here are what users read: the plan
// tests pin them.
#include "orchestrator/plan/plan_fields.hpp"

#include <cctype>
#include <charconv>
#include <string>
#include <system_error>

namespace bootstorm::plan::fields {
namespace {

using yaml::Names;

const Names kStormModes = {"simultaneous", "ramp"};
const Names kSloMilestones = {"ready",       "start_requested", "start_acknowledged", "scheduled", "running",
                              "guest_agent", "ip_assigned",     "port_open",          "beacon"};
const Names kSloStats = {"mean",          "p50", "p90", "p95", "p99", "max", "min", "time_to_all_ready",
                         "ready_fraction"};
const Names kCleanupPolicies = {"always", "on-success", "never"};

constexpr const char* kApiVersion = "bootstorm.io/v1";
constexpr const char* kKind = "StormPlan";

// The name becomes part of the run directory and of every VM name, so it must be path- and DNS-friendly.
std::string check_plan_name(const std::string& name, const yaml::FieldAt&) {
  bool ok = !name.empty() && name.size() <= 63 && name.front() != '.' && name.front() != '-';
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) ok = false;
  }
  if (ok) return "";
  return "name '" + name +
         "' must be 1-63 characters of letters, digits, '-', '_' and '.', not starting with '.' or '-' (it "
         "names the run directory)";
}

std::string check_env_name(const std::string& value, const yaml::FieldAt& at) {
  bool ok = !value.empty() && !std::isdigit(static_cast<unsigned char>(value.front()));
  for (char c : value) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) ok = false;
  }
  return ok ? "" : at.name + " '" + value + "' is not an environment variable name (letters, digits, '_')";
}

std::string check_listen(const std::string& listen, const yaml::FieldAt& at) {
  auto colon = listen.rfind(':');
  bool ok = colon != std::string::npos && colon > 0 && colon + 1 < listen.size();
  if (ok) {
    int port = -1;
    const char* first = listen.data() + colon + 1;
    const char* last = listen.data() + listen.size();
    auto [end, ec] = std::from_chars(first, last, port);
    ok = ec == std::errc() && end == last && port >= 0 && port <= 65535;
  }
  return ok ? "" : at.name + " must be host:port (port 0 picks a free one), got '" + listen + "'";
}

bool is_http_url(const std::string& v) {
  return (v.rfind("http://", 0) == 0 && v.size() > 7) || (v.rfind("https://", 0) == 0 && v.size() > 8);
}

}  // namespace

const yaml::FieldTable<Storm>& storm_fields() {
  static const auto table =
      yaml::FieldTable<Storm>()
          .field("mode", &Storm::mode, {yaml::one_of(kStormModes)})
          .field("timeout", &Storm::timeout, {yaml::positive<std::chrono::milliseconds>()})
          .field("settle", &Storm::settle)
          .field("perSecond", &Storm::ramp_per_second, {yaml::positive<double>()})
          .allow("powerOn")
          .field("startConcurrency", &Storm::start_concurrency,
                 {[](const int& v, const yaml::FieldAt& at) -> std::string {
                   if (v >= 1) return "";
                   return at.name + " must be at least 1, got " + std::to_string(v) +
                          " (leave it out to send every start of the burst at once)";
                 }});
  return table;
}

const yaml::FieldTable<Ready>& ready_fields() {
  static const auto table = yaml::FieldTable<Ready>()
                                .allow("signal")
                                .field("port", &Ready::port, {yaml::between(1, 65535)})
                                .allow("beacon");
  return table;
}

const yaml::FieldTable<Slo>& slo_fields() {
  static const auto table = yaml::FieldTable<Slo>()
                                .field("milestone", &Slo::milestone, {yaml::one_of(kSloMilestones)})
                                .field("stat", &Slo::stat, {yaml::one_of(kSloStats)})
                                .allow("max")
                                .allow("min");
  return table;
}

const yaml::FieldTable<Telemetry>& telemetry_fields() {
  static const auto table =
      yaml::FieldTable<Telemetry>()
          .allow("source")
          .field("interval", &Telemetry::interval,
                 {[](const std::chrono::milliseconds& v, const yaml::FieldAt& at) -> std::string {
                   return v.count() < 1000 ? at.name + " must be at least 1s" : "";
                 }})
          .allow("endpoint")
          .allow("tokenFile")
          .allow("caFile");
  return table;
}

// The top-level keys, in the plan format's order; the sections are read by the Loader, in its order.
const yaml::FieldTable<StormPlan>& root_fields() {
  static const auto table =
      yaml::FieldTable<StormPlan>()
          .field("apiVersion", &StormPlan::api_version,
                 {[](const std::string& v, const yaml::FieldAt&) -> std::string {
                   if (v == kApiVersion) return "";
                   return "unsupported apiVersion '" + v + "' (this version of bootstorm reads " +
                          kApiVersion + ")";
                 }})
          .field("kind", &StormPlan::kind, {[](const std::string& v, const yaml::FieldAt&) -> std::string {
                   return v == kKind ? "" : "kind must be " + std::string(kKind) + ", got '" + v + "'";
                 }})
          .field("name", &StormPlan::name, {check_plan_name})
          .allow("platform")
          .allow("golden")
          .allow("namespace")
          .allow("scenarios")
          .allow("storm")
          .allow("ready")
          .field("repeat", &StormPlan::repeat, {yaml::positive<int>()})
          .allow("slo")
          .field("cleanup", &StormPlan::cleanup, {yaml::one_of(kCleanupPolicies)})
          .field("output", &StormPlan::output,
                 {[](const std::string& v, const yaml::FieldAt&) -> std::string {
                   return v.empty() ? "output must name a directory, got an empty string" : "";
                 }})
          .allow("telemetry");
  return table;
}

const yaml::FieldTable<Tls>& tls_fields() {
  static const auto table = yaml::FieldTable<Tls>()
                                .field("caFile", &Tls::ca_file)
                                .field("insecureSkipVerify", &Tls::insecure_skip_verify);
  return table;
}

// Both credential forms' keys; the kind's descriptor says which a plan of it may use (map_view's allowed).
const yaml::FieldTable<Credentials>& credential_fields() {
  static const auto table = yaml::FieldTable<Credentials>()
                                .field("usernameEnv", &Credentials::username_env, {check_env_name})
                                .field("passwordEnv", &Credentials::password_env, {check_env_name})
                                .field("file", &Credentials::file, {yaml::non_empty()})
                                .field("kubeconfig", &Credentials::kubeconfig, {yaml::non_empty()})
                                .field("context", &Credentials::context, {yaml::non_empty()});
  return table;
}

const yaml::FieldTable<Beacon>& beacon_fields() {
  static const auto table =
      yaml::FieldTable<Beacon>()
          .field("listen", &Beacon::listen, {check_listen})
          .field("advertiseUrl", &Beacon::advertise_url,
                 {[](const std::string& v, const yaml::FieldAt& at) -> std::string {
                   return is_http_url(v) ? ""
                                         : at.name + " must be an http:// or https:// URL, got '" + v + "'";
                 }});
  return table;
}

}  // namespace bootstorm::plan::fields
