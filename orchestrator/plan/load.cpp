// Plan loading and strict validation. The whole file is checked in one pass and every problem is reported
// with the position of the offending node, so a user fixes a plan in one edit cycle instead of one error at
// a time. JSON plans go through the same parser: JSON is a subset of YAML flow syntax, and yaml-cpp keeps
// the line/column of every node for both.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <system_error>
#include <tuple>

#include "common/duration.hpp"
#include "common/yaml_fields.hpp"
#include "common/yaml_table.hpp"
#include "orchestrator/plan/plan.hpp"
#include "orchestrator/plan/plan_fields.hpp"
#include "orchestrator/plan/platform_rules.hpp"
#include "providers/api/platform_descriptor.hpp"

namespace bootstorm::plan {
namespace {

using yaml::describe_type;
using yaml::MapView;
using yaml::Names;
using yaml::position_of;
using namespace fields;

const Names kPlatformKeys = {"kind", "endpoint", "lab", "credentials", "tls", "apiBudget", "api"};
const Names kScenarioKeys = {"name", "placement"};
const Names kPlacementKeys = {"host", "vms"};
// Platform-specific keys and rules are the registered kinds' own (PlatformRules): the loader names no kind.
class Loader : public yaml::FieldReader {
 public:
  explicit Loader(std::string path) : FieldReader(std::move(path)), kinds_(api::platform_descriptors()) {}

  StormPlan load(const YAML::Node& root) {
    StormPlan plan;
    MapView top = map_view(root, "plan", "", root_fields().keys());
    if (!top.valid) return plan;
    require(top, {"apiVersion", "kind", "name", "platform", "golden", "scenarios"});
    root_fields().read(*this, top, plan);

    if (top.has("platform")) load_platform(top.value("platform"), plan.platform);
    const std::string& kind = plan.platform.kind;  // empty when missing or invalid: kind checks are skipped

    if (top.has("namespace")) {
      if (auto v = get_string(top, "namespace")) {
        if (const auto* platform = kinds_.find(kind); platform && !platform->has_namespace) {
          error(top.key_node("namespace"),
                "namespace applies only to " +
                    kinds_.kinds_where([](const api::PlatformDescriptor& d) { return d.has_namespace; }));
        } else {
          check_dns_label(top.value("namespace"), "namespace", *v);
          section_.namespace_ = *v;
        }
      }
    }
    std::optional<MapView> golden;
    if (top.has("golden")) golden = load_golden(top.value("golden"), kind);
    if (top.has("scenarios")) load_scenarios(top.value("scenarios"), plan.scenarios);
    load_storm(top.has("storm") ? top.value("storm") : YAML::Node(YAML::NodeType::Map), kind, plan.storm);
    read_kind_settings(kind, golden, plan.platform);
    if (top.has("ready")) {
      load_ready(top.value("ready"), kind, plan.ready);
    } else {
      plan.ready.signal = "guest_agent";
    }
    if (top.has("slo")) load_slos(top.value("slo"), plan.slo);
    if (top.has("telemetry")) load_telemetry(top.value("telemetry"), kind, plan.telemetry);
    return plan;
  }

 private:
  PlatformRules kinds_;
  // The kind's part of the plan as the generic keys leave it, for the kind's own reader.
  api::KindPlanSection section_;

  // The kind reads its own keys into its typed settings (a kind without a reader keeps none).
  void read_kind_settings(const std::string& kind, const std::optional<MapView>& golden, Platform& platform) {
    const api::PlatformDescriptor* descriptor = kinds_.find(kind);
    if (!descriptor || !descriptor->read_settings) return;
    section_.reader = this;
    section_.golden = golden && golden->valid ? &*golden : nullptr;
    if (section_.clone.empty()) section_.clone = descriptor->default_clone;
    if (section_.platform_api.empty()) section_.platform_api = descriptor->default_platform_api;
    if (section_.power_on.empty()) section_.power_on = descriptor->default_power_on;
    platform.settings = descriptor->read_settings(section_);
    section_.reader = nullptr;
    section_.golden = nullptr;
  }

  // --- sections ----------------------------------------------------------------------------------------

  void load_platform(const YAML::Node& node, Platform& platform) {
    MapView view = map_view(node, "platform", "platform.", kPlatformKeys);
    if (!view.valid) return;
    require(view, {"kind"});
    if (auto v = get_string(view, "kind")) {
      if (kinds_.kinds().empty()) {
        error(view.value("kind"), "platform.kind '" + *v +
                                      "' is unknown: no platform kind is registered (a build without "
                                      "providers can check no plan)");
      } else if (check_enum(view.value("kind"), "platform.kind", *v, kinds_.kinds())) {
        platform.kind = *v;
      }
    }
    const std::string& kind = platform.kind;
    const api::PlatformDescriptor* descriptor = kinds_.find(kind);
    if (auto v = get_string(view, "endpoint")) {
      check_endpoint(view.value("endpoint"), kind, *v);
      if (descriptor) check_endpoint_path(view.value("endpoint"), *descriptor, *v);
      platform.endpoint = *v;
    }
    if (auto v = get_string(view, "lab")) {
      if (platform.endpoint != "embedded") {
        error(view.key_node("lab"),
              "platform.lab applies only to endpoint embedded (endpoint is '" + platform.endpoint + "')");
      }
      check_non_empty(view.value("lab"), "platform.lab", *v);
      platform.lab = *v;
      platform.lab_at = position_of(view.value("lab"));
    }
    if (view.has("credentials")) load_credentials(view.value("credentials"), kind, platform.credentials);
    // Keys the kind does not accept were refused above and left unset, so any credential set is the kind's.
    if (descriptor && !descriptor->https_endpoint_needs_credentials.empty() &&
        platform.endpoint.rfind("https://", 0) == 0 && platform.credentials == Credentials{}) {
      error(view.value("endpoint"), "endpoint " + platform.endpoint + " needs platform.credentials (" +
                                        descriptor->https_endpoint_needs_credentials + ")");
    }
    if (view.has("tls")) {
      MapView tls = map_view(view.value("tls"), "platform.tls", "platform.tls.", tls_fields().keys());
      tls_fields().read(*this, tls, platform.tls);
    }
    if (view.has("apiBudget")) {
      const auto budget_fields = api_budget_fields(descriptor);
      MapView budget = map_view(view.value("apiBudget"), "platform.apiBudget", "platform.apiBudget.",
                                budget_fields.keys());
      budget_fields.read(*this, budget, platform.api_budget);
    }
    if (auto v = get_string(view, "api")) {
      if (one_of_kind(view, "api", "platform.api", *v, descriptor, &api::PlatformDescriptor::platform_apis))
        section_.platform_api = *v;
    }
  }

  // startsPerConnection is refused by a kind whose starts cannot share a connection.
  yaml::FieldTable<ApiBudget> api_budget_fields(const api::PlatformDescriptor* descriptor) const {
    auto refused_by_kind = [this, descriptor](const int&, const yaml::FieldAt& at) -> std::string {
      if (!descriptor || descriptor->starts_per_connection_refusal.empty()) return "";
      return at.name + " applies only to " + kinds_.kinds_where([](const api::PlatformDescriptor& d) {
        return d.starts_per_connection_refusal.empty();
      }) + " (" +
             descriptor->starts_per_connection_refusal + ")";
    };
    return yaml::FieldTable<ApiBudget>()
        .field("requestsPerSecond", &ApiBudget::requests_per_second, {yaml::positive<double>()})
        .field("maxConcurrent", &ApiBudget::max_concurrent, {yaml::positive<int>()})
        .field("startsPerConnection", &ApiBudget::starts_per_connection,
               {yaml::between(1, kMaxStartsPerConnection), refused_by_kind});
  }

  // `value` of `key` must be one of the kind's choices (`choices`); a kind without any refuses the key.
  bool one_of_kind(const MapView& view, const std::string& key, const std::string& field,
                   const std::string& value, const api::PlatformDescriptor* platform,
                   std::vector<std::string> api::PlatformDescriptor::*choices) {
    if (!platform) return false;
    if ((platform->*choices).empty()) {
      error(view.key_node(key),
            field + " applies only to " +
                kinds_.kinds_where([&](const api::PlatformDescriptor& d) { return !(d.*choices).empty(); }));
      return false;
    }
    return check_enum(view.value(key), field, value, platform->*choices,
                      " for platform kind " + platform->kind);
  }

  // https://vc.example.com/sdk: the provider would ask at /sdk/sdk. Names the address to give instead.
  void check_endpoint_path(const YAML::Node& node, const api::PlatformDescriptor& descriptor,
                           const std::string& endpoint) {
    if (endpoint.rfind("https://", 0) != 0) return;
    std::string base = endpoint;
    while (base.size() > 8 && base.back() == '/') base.pop_back();
    for (const auto& path : descriptor.https_endpoint_api_paths) {
      if (base.size() <= 8 + path.size() || base.compare(base.size() - path.size(), path.size(), path) != 0)
        continue;
      base.resize(base.size() - path.size());
      error(node, "platform.endpoint " + endpoint + " ends with " + path + ": give " + descriptor.api_name +
                      "'s address without it (" + base + "); bootstorm adds the API's path itself");
      return;
    }
  }

  // Every kind takes the lab and https endpoints; words such as kubeconfig belong to the kinds that list
  // them.
  void check_endpoint(const YAML::Node& node, const std::string& kind, const std::string& endpoint) {
    if (endpoint == "embedded") return;
    if (endpoint.rfind("lab:", 0) == 0 && endpoint.size() > 4) return;
    if (endpoint.rfind("https://", 0) == 0 && endpoint.size() > 8) return;
    const Names words = kinds_.endpoint_words();
    if (yaml::contains(words, endpoint)) {
      const auto* platform = kinds_.find(kind);
      if (platform && !yaml::contains(platform->endpoint_words, endpoint)) {
        error(node, "platform.endpoint '" + endpoint + "' applies only to " +
                        kinds_.kinds_where([&](const api::PlatformDescriptor& d) {
                          return yaml::contains(d.endpoint_words, endpoint);
                        }));
      }
      return;
    }
    Names forms = {"embedded", "lab:<state-dir>", "https://<host>[:port]"};
    forms.insert(forms.end(), words.begin(), words.end());
    error(node, "platform.endpoint must be " + PlatformRules::or_list(forms) + ", got '" + endpoint + "'");
  }

  void load_credentials(const YAML::Node& node, const std::string& kind, Credentials& credentials) {
    std::string note = kind.empty() ? "" : " for " + kind;
    MapView view =
        map_view(node, "platform.credentials", "platform.credentials.", kinds_.credential_keys(kind), note);
    if (!view.valid) return;
    credential_fields().read(*this, view, credentials);
    if (view.has("usernameEnv") != view.has("passwordEnv")) {
      const char* present = view.has("usernameEnv") ? "usernameEnv" : "passwordEnv";
      const char* missing = view.has("usernameEnv") ? "passwordEnv" : "usernameEnv";
      error(view.key_node(present),
            std::string("platform.credentials.") + present + " needs " + missing + " too");
    }
    if (view.has("file") && (view.has("usernameEnv") || view.has("passwordEnv"))) {
      error(view.key_node("file"),
            "platform.credentials: use either file or usernameEnv/passwordEnv, not both");
    }
  }

  // The generic rules of golden: the kind's keys, its golden source, its clone kinds. The kind reads the rest
  // (read_kind_settings).
  std::optional<MapView> load_golden(const YAML::Node& node, const std::string& kind) {
    const api::PlatformDescriptor* platform = kinds_.find(kind);
    std::string note = kind.empty() ? "" : " for " + kind;
    MapView view = map_view(node, "golden", "golden.", kinds_.golden_keys(kind), note);
    if (!view.valid) return std::nullopt;
    if (platform) require_golden_source(view, *platform);
    if (auto v = get_string(view, "clone")) {
      if (platform && check_enum(view.value("clone"), "golden.clone", *v, platform->clone_kinds,
                                 " for platform kind " + kind))
        section_.clone = *v;
    }
    return view;
  }

  // The golden image the kind clones from: one key it needs (vm), or one of several (dataSource or pvc).
  void require_golden_source(const MapView& view, const api::PlatformDescriptor& platform) {
    const Names& keys = platform.required_golden.any_of;
    if (keys.size() == 1) {
      require(view, keys, platform.required_golden.why);
      return;
    }
    if (keys.empty() || std::any_of(keys.begin(), keys.end(), [&](const auto& k) { return view.has(k); }))
      return;
    error(view.node, "golden needs " + PlatformRules::or_list(keys) + " for platform kind " + platform.kind +
                         platform.required_golden.why);
  }

  void load_scenarios(const YAML::Node& node, std::vector<Scenario>& scenarios) {
    if (!node.IsSequence()) {
      error(node, "scenarios must be a list, got " + std::string(describe_type(node)));
      return;
    }
    if (node.size() == 0) {
      error(node, "scenarios must list at least one scenario");
      return;
    }
    std::map<std::string, int> first_line_of_name;
    long long plan_vms = 0;
    for (std::size_t i = 0; i < node.size(); ++i) {
      std::string context = "scenarios[" + std::to_string(i) + "]";
      MapView view = map_view(node[i], context, context + ".", kScenarioKeys);
      Scenario scenario;
      if (view.valid) {
        require(view, {"name", "placement"});
        if (auto v = get_string(view, "name")) {
          scenario.name = *v;
          if (v->empty()) {
            error(view.value("name"), context + ".name must not be empty");
          } else if (auto [pos, inserted] =
                         first_line_of_name.emplace(*v, view.value("name").Mark().line + 1);
                     !inserted) {
            error(view.value("name"), "duplicate scenario name '" + *v + "' (first defined at line " +
                                          std::to_string(pos->second) + ")");
          }
        }
        if (view.has("placement")) load_placement(view.value("placement"), context, scenario);
      }
      // A scenario beyond its own bound was reported at its placement: the plan's count goes on without it.
      long long scenario_vms = 0;
      for (const auto& p : scenario.placement) scenario_vms += std::max(0, p.vms);
      if (scenario_vms > kMaxScenarioVms) scenario_vms = 0;
      if (plan_vms <= kMaxPlanVms && plan_vms + scenario_vms > kMaxPlanVms) {
        error(node[i],
              fmt::format("{}: with it the plan places {} VMs, more than a plan can hold ({}); split "
                          "it into several plans",
                          context, plan_vms + scenario_vms, kMaxPlanVms));
      }
      plan_vms += scenario_vms;
      scenarios.push_back(std::move(scenario));
    }
  }

  void load_placement(const YAML::Node& node, const std::string& scenario_context, Scenario& scenario) {
    std::string what = scenario_context + ".placement";
    if (!node.IsSequence()) {
      error(node, what + " must be a list of {host, vms}, got " + std::string(describe_type(node)));
      return;
    }
    if (node.size() == 0) {
      error(node, what + " must list at least one host");
      return;
    }
    std::map<std::string, int> first_line_of_host;
    long long scenario_vms = 0;
    for (std::size_t i = 0; i < node.size(); ++i) {
      std::string context = what + "[" + std::to_string(i) + "]";
      MapView view = map_view(node[i], context, context + ".", kPlacementKeys);
      Placement placement;
      if (view.valid) {
        require(view, {"host", "vms"});
        if (auto v = get_string(view, "host")) {
          placement.host = *v;
          if (v->empty()) {
            error(view.value("host"), context + ".host must not be empty");
          } else if (auto [pos, inserted] =
                         first_line_of_host.emplace(*v, view.value("host").Mark().line + 1);
                     !inserted) {
            std::string label = scenario.name.empty() ? scenario_context : "scenario '" + scenario.name + "'";
            error(view.value("host"), "duplicate host '" + *v + "' in placement of " + label +
                                          " (first at line " + std::to_string(pos->second) +
                                          "; add its VMs to one entry)");
          }
        }
        if (view.has("host")) placement.host_at = position_of(view.value("host"));
        if (auto v = get_int(view, "vms")) {
          placement.vms_at = position_of(view.value("vms"));
          if (*v <= 0) {
            error(view.value("vms"), context + ".vms must be greater than 0, got " + std::to_string(*v));
          } else if (scenario_vms + *v > kMaxScenarioVms) {
            std::string label = scenario.name.empty() ? scenario_context : "scenario '" + scenario.name + "'";
            error(view.value("vms"),
                  fmt::format("{}.vms is {}: with it {} places {} VMs, more than one scenario can hold ({}); "
                              "check the number",
                              context, *v, label, scenario_vms + *v, kMaxScenarioVms));
          }
          scenario_vms += std::max(0LL, *v);
          placement.vms = static_cast<int>(*v);
        }
      }
      scenario.placement.push_back(std::move(placement));
    }
  }

  void load_storm(const YAML::Node& node, const std::string& kind, Storm& storm) {
    const api::PlatformDescriptor* platform = kinds_.find(kind);
    MapView view = map_view(node, "storm", "storm.", storm_fields().keys());
    if (!view.valid) return;
    storm_fields().read(*this, view, storm);
    if (auto v = get_string(view, "powerOn")) {
      if (one_of_kind(view, "powerOn", "storm.powerOn", *v, platform,
                      &api::PlatformDescriptor::power_on_modes))
        section_.power_on = *v;
    }
    if (storm.mode == "ramp" && !view.has("perSecond")) {
      error(view.value("mode"), "storm.mode ramp needs storm.perSecond (VMs started per second)");
    }
    if (storm.mode == "simultaneous" && view.has("perSecond")) {
      error(view.key_node("perSecond"), "storm.perSecond applies only to storm.mode ramp");
    }
  }

  void load_telemetry(const YAML::Node& node, const std::string& kind, Telemetry& telemetry) {
    const api::PlatformDescriptor* platform = kinds_.find(kind);
    MapView view = map_view(node, "telemetry", "telemetry.", telemetry_fields().keys());
    if (!view.valid) return;
    telemetry_fields().read(*this, view, telemetry);
    if (auto v = get_string(view, "source")) {
      Names choices = {"auto", "none"};
      if (platform) {
        choices.insert(choices.end(), platform->telemetry_sources.begin(), platform->telemetry_sources.end());
      }
      check_enum(view.value("source"), "telemetry.source", *v, choices,
                 platform ? " for platform kind " + platform->kind : std::string());
      telemetry.source = *v;
    }
    const bool none = telemetry.source == "none";
    for (const char* key : {"endpoint", "tokenFile", "caFile"}) {
      auto v = get_string(view, key);
      if (!v) continue;
      if (platform && !platform->telemetry_endpoint) {
        error(view.key_node(key),
              std::string("telemetry.") + key + " applies only to " +
                  kinds_.kinds_where([](const api::PlatformDescriptor& d) { return d.telemetry_endpoint; }));
        continue;
      }
      if (none) {
        error(view.key_node(key), std::string("telemetry.") + key + " has no use with telemetry.source none");
        continue;
      }
      if (v->empty()) {
        error(view.value(key), std::string("telemetry.") + key + " must not be empty");
        continue;
      }
      if (std::string_view(key) == "endpoint") {
        if (v->rfind("https://", 0) != 0 && v->rfind("http://", 0) != 0) {
          error(view.value(key),
                "telemetry.endpoint must be an http:// or https:// URL (the query API's base, "
                "e.g. https://thanos-querier.example:9091), got '" +
                    *v + "'");
        }
        telemetry.endpoint = *v;
      } else if (std::string_view(key) == "tokenFile") {
        telemetry.token_file = *v;
      } else {
        telemetry.ca_file = *v;
      }
    }
  }

  void load_ready(const YAML::Node& node, const std::string& kind, Ready& ready) {
    MapView view = map_view(node, "ready", "ready.", ready_fields().keys());
    if (!view.valid) {
      ready.signal = "guest_agent";
      return;
    }
    ready_fields().read(*this, view, ready);
    if (view.has("beacon")) {
      ready.beacon.enabled = true;
      MapView beacon =
          map_view(view.value("beacon"), "ready.beacon", "ready.beacon.", beacon_fields().keys());
      beacon_fields().read(*this, beacon, ready.beacon);
    }
    ready.signal = ready.beacon.enabled ? "beacon" : "guest_agent";
    if (auto v = get_string(view, "signal")) {
      const YAML::Node& at = view.value("signal");
      ready.signal = *v;
      // The kind is named only when it narrows the list (a kind that observes fewer milestones than others).
      const Names signals = kinds_.ready_signals(kind);
      const bool narrowed = signals.size() < kinds_.ready_signals("").size();
      check_enum(at, "ready.signal", *v, signals, narrowed ? " for platform kind " + kind : "");
      if (*v == "beacon" && !ready.beacon.enabled) {
        error(at, "ready.signal beacon needs ready.beacon (e.g. beacon: {listen: \"0.0.0.0:8088\"})");
      }
      if (*v == "port_open" && !view.has("port")) {
        error(at, "ready.signal port_open needs ready.port (e.g. port: 3389)");
      }
    }
  }

  void load_slos(const YAML::Node& node, std::vector<Slo>& slos) {
    if (!node.IsSequence()) {
      error(node,
            "slo must be a list of {milestone, stat, max | min}, got " + std::string(describe_type(node)));
      return;
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      std::string context = "slo[" + std::to_string(i) + "]";
      MapView view = map_view(node[i], context, context + ".", slo_fields().keys());
      Slo slo;
      if (view.valid) {
        require(view, {"stat"});
        slo_fields().read(*this, view, slo);
        if (slo.stat == "ready_fraction") {
          slo.is_min = true;
          if (view.has("max")) {
            error(view.key_node("max"),
                  context + ": stat ready_fraction is bounded below: use min: <fraction 0..1>");
          } else if (!view.has("min")) {
            error(view.node,
                  "missing required key 'min' in " + context + " (stat ready_fraction needs min: <0..1>)");
          }
          if (auto v = get_number(view, "min")) {
            if (*v < 0 || *v > 1) {
              error(view.value("min"),
                    context + ".min must be a fraction between 0 and 1, got " + view.value("min").Scalar());
            }
            slo.max = *v;
          }
        } else if (!slo.stat.empty()) {
          if (view.has("min")) {
            error(view.key_node("min"),
                  context + ": stat " + slo.stat + " is bounded above: use max: <duration>");
          } else if (!view.has("max")) {
            error(view.node, "missing required key 'max' in " + context + " (e.g. max: 60s)");
          }
          if (auto v = get_duration(view, "max")) {
            slo.max = std::chrono::duration<double>(*v).count();
          }
        }
      }
      slos.push_back(std::move(slo));
    }
  }
};

}  // namespace

LoadResult load_plan_text(const std::string& text, const std::string& path_for_messages) {
  LoadResult result;
  Loader loader(path_for_messages);
  const std::optional<YAML::Node> document = loader.read_document(
      text, "plan", "the plan is empty (expected a StormPlan: apiVersion, kind, name, platform, ...)");
  if (!document) {
    result.diagnostics = std::move(loader.diagnostics);
    return result;
  }
  StormPlan plan = loader.load(*document);
  plan.source_path = path_for_messages;
  loader.sort_diagnostics();
  result.diagnostics = std::move(loader.diagnostics);
  if (result.diagnostics.empty()) result.plan = std::move(plan);
  return result;
}

LoadResult load_plan_file(const std::string& path) {
  std::error_code dir_ec;
  if (std::filesystem::is_directory(path, dir_ec)) {
    LoadResult result;
    result.diagnostics.push_back(Diagnostic{path, 0, 0, "is a directory, not a plan file"});
    return result;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    LoadResult result;
    std::error_code ec(errno, std::generic_category());
    result.diagnostics.push_back(Diagnostic{path, 0, 0, "cannot read the plan file: " + ec.message()});
    return result;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return load_plan_text(buffer.str(), path);
}

}  // namespace bootstorm::plan
