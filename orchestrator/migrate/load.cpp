// MigrationPlan loading (see migration_plan.hpp). Same approach as orchestrator/plan/load.cpp, with the same
// field readers (common/yaml_fields.hpp): one pass over the yaml-cpp tree, every problem reported
// with the position of the offending node.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/yaml_fields.hpp"
#include "common/yaml_table.hpp"
#include "orchestrator/migrate/migration_plan.hpp"
#include "orchestrator/plan/plan_fields.hpp"

namespace bootstorm::migrate {
namespace {

using yaml::describe_type;
using yaml::is_dns_label;
using yaml::MapView;
using yaml::Names;

const Names kVmsKeys = {"names", "fromRun", "fromStorm"};
const Names kFromStormKeys = {"golden", "placement"};
const Names kCloneTypes = {"full", "linked", "instant"};
const Names kPlacementKeys = {"host", "vms"};
const Names kNetworkKeys = {"source", "destination"};
const Names kNetworkDestinationKeys = {"type", "name", "namespace"};
const Names kNetworkTypes = {"pod", "multus", "ignored"};
const Names kStorageKeys = {"source", "destination"};
const Names kStorageDestinationKeys = {"storageClass", "accessMode", "volumeMode"};
const Names kAccessModes = {"ReadWriteOnce", "ReadWriteMany", "ReadOnlyMany"};
const Names kVolumeModes = {"Filesystem", "Block"};
const Names kSignals = {"start_acknowledged", "running", "guest_agent", "ip_assigned", "port_open"};
const Names kStormModes = {"simultaneous", "ramp"};

constexpr const char* kApiVersion = "bootstorm.io/v1";

// ---- the MigrationPlan's fields ------------------------------------------------------------------------

const yaml::FieldTable<MigrationPlan>& root_fields() {
  static const auto table =
      yaml::FieldTable<MigrationPlan>()
          .field("apiVersion", &MigrationPlan::api_version,
                 {[](const std::string& v, const yaml::FieldAt&) -> std::string {
                   if (v == kApiVersion) return "";
                   return "unsupported apiVersion '" + v + "' (this version of bootstorm reads " +
                          kApiVersion + ")";
                 }})
          .field("kind", &MigrationPlan::kind,
                 {[](const std::string& v, const yaml::FieldAt&) -> std::string {
                   if (v == kMigrationPlanKind) return "";
                   return std::string("kind must be ") + kMigrationPlanKind + ", got '" + v + "'";
                 }})
          // The name becomes part of the run directory and, through the run id, of Kubernetes object names.
          .field(
              "name", &MigrationPlan::name, {[](const std::string& v, const yaml::FieldAt&) -> std::string {
                if (is_dns_label(v) && v.size() <= 40) return "";
                return "name must be at most 40 characters of a-z, 0-9 and '-' (not at either end), got '" +
                       v + "'";
              }})
          .allow("source")
          .allow("destination")
          .allow("vms")
          .allow("networkMap")
          .allow("storageMap")
          .field(
              "targetNamespace", &MigrationPlan::target_namespace,
              {[](const std::string& v, const yaml::FieldAt&) -> std::string {
                if (is_dns_label(v)) return "";
                return "targetNamespace must be a DNS label (a-z, 0-9, '-', at most 63 characters), got '" +
                       v + "'";
              }})
          .field("warm", &MigrationPlan::warm)
          .allow("ready")
          .allow("storm")
          .field("timeout", &MigrationPlan::timeout,
                 {[](const std::chrono::milliseconds& v, const yaml::FieldAt&) -> std::string {
                   return v.count() > 0 ? "" : "timeout must be greater than 0";
                 }})
          .field("output", &MigrationPlan::output,
                 {[](const std::string& v, const yaml::FieldAt&) -> std::string {
                   return v.empty() ? "output must name a directory, got an empty string" : "";
                 }});
  return table;
}

const yaml::FieldTable<SourceEndpoint>& source_fields() {
  static const auto table =
      yaml::FieldTable<SourceEndpoint>()
          .field("endpoint", &SourceEndpoint::endpoint,
                 {yaml::non_empty(),
                  [](const std::string& v, const yaml::FieldAt&) -> std::string {
                    if (v == "embedded" || v.rfind("lab:", 0) == 0 || v.rfind("https://", 0) == 0) return "";
                    return "source.endpoint must be embedded, lab:<state-dir> or an https:// vCenter URL, "
                           "got '" +
                           v + "'";
                  }})
          .field("lab", &SourceEndpoint::lab)
          .allow("credentials")
          .allow("tls")
          .allow("apiBudget");
  return table;
}

const yaml::FieldTable<plan::Credentials>& source_credential_fields() {
  static const auto table = yaml::FieldTable<plan::Credentials>()
                                .field("usernameEnv", &plan::Credentials::username_env)
                                .field("passwordEnv", &plan::Credentials::password_env)
                                .field("file", &plan::Credentials::file);
  return table;
}

const yaml::FieldTable<plan::ApiBudget>& source_budget_fields() {
  static const auto table =
      yaml::FieldTable<plan::ApiBudget>()
          .field("requestsPerSecond", &plan::ApiBudget::requests_per_second, {yaml::positive<double>()})
          .field("maxConcurrent", &plan::ApiBudget::max_concurrent, {yaml::positive<int>()});
  return table;
}

const yaml::FieldTable<DestinationEndpoint>& destination_fields() {
  static const auto table =
      yaml::FieldTable<DestinationEndpoint>()
          .field(
              "endpoint", &DestinationEndpoint::endpoint,
              {yaml::non_empty(),
               [](const std::string& v, const yaml::FieldAt&) -> std::string {
                 if (v == "embedded" || v == "kubeconfig" || v == "in-cluster" || v.rfind("lab:", 0) == 0)
                   return "";
                 return "destination.endpoint must be embedded, kubeconfig, in-cluster or lab:<state-dir>, "
                        "got '" +
                        v + "'";
               }})
          .allow("credentials")
          .allow("tls")
          .field("namespace", &DestinationEndpoint::namespace_,
                 {[](const std::string& v, const yaml::FieldAt&) -> std::string {
                   return is_dns_label(v) ? "" : "destination.namespace must be a DNS label, got '" + v + "'";
                 }});
  return table;
}

const yaml::FieldTable<plan::Credentials>& destination_credential_fields() {
  static const auto table = yaml::FieldTable<plan::Credentials>()
                                .field("kubeconfig", &plan::Credentials::kubeconfig)
                                .field("context", &plan::Credentials::context);
  return table;
}

const yaml::FieldTable<plan::Ready>& ready_fields() {
  static const auto table = yaml::FieldTable<plan::Ready>()
                                .field("signal", &plan::Ready::signal, {yaml::one_of(kSignals)})
                                .field("port", &plan::Ready::port, {yaml::between(1, 65535)});
  return table;
}

const yaml::FieldTable<plan::Storm>& storm_fields() {
  static const auto table =
      yaml::FieldTable<plan::Storm>()
          .field("mode", &plan::Storm::mode, {yaml::one_of(kStormModes)})
          .field("timeout", &plan::Storm::timeout, {yaml::positive<std::chrono::milliseconds>()})
          .field("settle", &plan::Storm::settle)
          .field("perSecond", &plan::Storm::ramp_per_second, {yaml::positive<double>()});
  return table;
}

const yaml::FieldTable<SourceStorm>& golden_fields() {
  static const auto table =
      yaml::FieldTable<SourceStorm>()
          .custom("vm",
                  [](yaml::FieldReader& r, const MapView& g, SourceStorm& storm) {
                    if (auto v = r.get_non_empty(g, "vm")) storm.golden.vm = *v;
                  })
          .custom("clone",
                  [](yaml::FieldReader& r, const MapView& g, SourceStorm& storm) {
                    if (auto v = r.get_string(g, "clone")) {
                      r.check_enum(g.value("clone"), "vms.fromStorm.golden.clone", *v, kCloneTypes);
                      storm.golden.clone = *v;
                    }
                  })
          .custom("datastore", [](yaml::FieldReader& r, const MapView& g, SourceStorm& storm) {
            if (auto v = r.get_string(g, "datastore")) storm.golden.datastore = *v;
          });
  return table;
}

class Loader : public yaml::FieldReader {
 public:
  explicit Loader(std::string path) : FieldReader(std::move(path)) {}

  MigrationPlan load(const YAML::Node& root) {
    MigrationPlan p;
    MapView top = map_view(root, "plan", "", root_fields().keys());
    if (!top.valid) return p;
    require(top, {"apiVersion", "kind", "name", "source", "destination", "vms", "networkMap", "storageMap",
                  "targetNamespace"});
    root_fields().read(*this, top, p);
    if (top.has("source")) load_source(top.value("source"), p.source);
    if (top.has("destination")) load_destination(top.value("destination"), p.destination);
    if (top.has("destination") && top.has("source")) {
      const std::string& s = p.source.endpoint;
      const std::string& d = p.destination.endpoint;
      if (d == "embedded" && s != "embedded")
        error(top.value("destination"),
              "destination.endpoint embedded means the source's embedded lab, but source.endpoint is '" + s +
                  "'");
      if (d.rfind("lab:", 0) == 0 && d != s)
        error(top.value("destination"),
              "destination.endpoint '" + d + "' must be the same lab as source.endpoint (got '" + s + "')");
    }
    if (top.has("vms")) load_vms(top.value("vms"), p.vms);
    if (top.has("networkMap")) load_network_map(top.value("networkMap"), p.network_map);
    if (top.has("storageMap")) load_storage_map(top.value("storageMap"), p.storage_map);
    if (top.has("ready")) {
      load_ready(top.value("ready"), p.ready);
    }
    if (p.ready.signal.empty()) p.ready.signal = "guest_agent";
    if (top.has("storm")) load_storm(top.value("storm"), p.storm);
    return p;
  }

 private:
  void load_tls(const YAML::Node& node, const std::string& prefix, plan::Tls& tls) {
    MapView m = map_view(node, prefix + "tls", prefix + "tls.", plan::fields::tls_fields().keys());
    plan::fields::tls_fields().read(*this, m, tls);
  }

  void load_source(const YAML::Node& node, SourceEndpoint& s) {
    MapView m = map_view(node, "source", "source.", source_fields().keys());
    if (!m.valid) return;
    require(m, {"endpoint"});
    source_fields().read(*this, m, s);
    if (m.has("lab") && s.endpoint != "embedded")
      error(m.key_node("lab"), "source.lab applies only to endpoint embedded");
    if (s.endpoint == "embedded" && s.lab.empty() && m.has("endpoint"))
      error(m.value("endpoint"), "source.endpoint embedded needs source.lab (e.g. tolly-2024)");
    if (m.has("credentials")) {
      MapView c = map_view(m.value("credentials"), "source.credentials", "source.credentials.",
                           source_credential_fields().keys());
      source_credential_fields().read(*this, c, s.credentials);
      if (c.valid) {
        if (c.has("file") && (c.has("usernameEnv") || c.has("passwordEnv")))
          error(c.node, "source.credentials takes either file or usernameEnv/passwordEnv, not both");
      }
    }
    if (m.has("tls")) load_tls(m.value("tls"), "source.", s.tls);
    if (m.has("apiBudget")) {
      MapView b = map_view(m.value("apiBudget"), "source.apiBudget", "source.apiBudget.",
                           source_budget_fields().keys());
      source_budget_fields().read(*this, b, s.api_budget);
    }
  }

  void load_destination(const YAML::Node& node, DestinationEndpoint& d) {
    MapView m = map_view(node, "destination", "destination.", destination_fields().keys());
    if (!m.valid) return;
    require(m, {"endpoint"});
    destination_fields().read(*this, m, d);
    if (m.has("credentials")) {
      MapView c = map_view(m.value("credentials"), "destination.credentials", "destination.credentials.",
                           destination_credential_fields().keys());
      if (c.valid && d.endpoint != "kubeconfig")
        error(c.node, "destination.credentials applies only to endpoint kubeconfig");
      destination_credential_fields().read(*this, c, d.credentials);
    }
    if (m.has("tls")) load_tls(m.value("tls"), "destination.", d.tls);
  }

  void load_names(const YAML::Node& node, const std::string& what, std::vector<std::string>& out) {
    if (!node.IsSequence()) {
      error(node, what + " must be a list of VM names, got " + describe_type(node));
      return;
    }
    if (node.size() == 0) error(node, what + " must name at least one VM");
    std::map<std::string, int> seen;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const YAML::Node& item = node[i];
      if (!item.IsScalar() || item.Scalar().empty()) {
        error(item,
              what + "[" + std::to_string(i) + "] must be a VM name, got " +
                  (item.IsScalar() ? std::string("an empty string") : std::string(describe_type(item))));
        continue;
      }
      auto [pos, inserted] = seen.emplace(item.Scalar(), item.Mark().line + 1);
      if (!inserted) {
        error(item, "duplicate VM '" + item.Scalar() + "' in " + what + " (first at line " +
                        std::to_string(pos->second) + ")");
        continue;
      }
      out.push_back(item.Scalar());
    }
  }

  void load_vms(const YAML::Node& node, VmSelection& vms) {
    if (node.IsSequence()) {
      load_names(node, "vms", vms.names);
      return;
    }
    MapView m = map_view(node, "vms", "vms.", kVmsKeys);
    if (!m.valid) return;
    if (m.entries.size() != 1) {
      error(node, "vms takes exactly one of names, fromRun, fromStorm");
      return;
    }
    if (m.has("names")) load_names(m.value("names"), "vms.names", vms.names);
    if (auto v = get_non_empty(m, "fromRun")) vms.from_run = *v;
    if (m.has("fromStorm")) {
      MapView s = map_view(m.value("fromStorm"), "vms.fromStorm", "vms.fromStorm.", kFromStormKeys);
      if (!s.valid) return;
      require(s, {"golden", "placement"});
      SourceStorm storm;
      if (s.has("golden")) {
        MapView g = map_view(s.value("golden"), "vms.fromStorm.golden", "vms.fromStorm.golden.",
                             golden_fields().keys());
        if (g.valid) require(g, {"vm"});
        golden_fields().read(*this, g, storm);
      }
      if (s.has("placement")) {
        const YAML::Node& list = s.value("placement");
        if (!list.IsSequence() || list.size() == 0) {
          error(list, "vms.fromStorm.placement must be a non-empty list of {host, vms}, got " +
                          std::string(list.IsSequence() ? "an empty list" : describe_type(list)));
        } else {
          long long storm_vms = 0;
          for (std::size_t i = 0; i < list.size(); ++i) {
            std::string ctx = "vms.fromStorm.placement[" + std::to_string(i) + "]";
            MapView pm = map_view(list[i], ctx, ctx + ".", kPlacementKeys);
            if (!pm.valid) continue;
            require(pm, {"host", "vms"});
            plan::Placement pl;
            if (auto v = get_non_empty(pm, "host")) {
              pl.host = *v;
              pl.host_at = yaml::position_of(pm.value("host"));
            }
            if (auto v = get_int(pm, "vms")) {
              pl.vms_at = yaml::position_of(pm.value("vms"));
              if (*v <= 0) {
                error(pm.value("vms"), ctx + ".vms must be greater than 0, got " + std::to_string(*v));
              } else if (storm_vms + *v > plan::kMaxScenarioVms) {
                error(pm.value("vms"), ctx + ".vms is " + std::to_string(*v) + ": with it the storm places " +
                                           std::to_string(storm_vms + *v) +
                                           " VMs, more than one storm can hold (" +
                                           std::to_string(plan::kMaxScenarioVms) + "); check the number");
              }
              storm_vms += std::max(0LL, *v);
              pl.vms = static_cast<int>(*v);
            }
            storm.placement.push_back(pl);
          }
        }
      }
      vms.from_storm = storm;
    }
  }

  void load_network_map(const YAML::Node& node, std::vector<NetworkMapping>& out) {
    if (!node.IsSequence() || node.size() == 0) {
      error(node, "networkMap must be a non-empty list of {source, destination}, got " +
                      std::string(node.IsSequence() ? "an empty list" : describe_type(node)));
      return;
    }
    std::map<std::string, int> seen;
    for (std::size_t i = 0; i < node.size(); ++i) {
      std::string ctx = "networkMap[" + std::to_string(i) + "]";
      MapView m = map_view(node[i], ctx, ctx + ".", kNetworkKeys);
      if (!m.valid) continue;
      require(m, {"source", "destination"});
      NetworkMapping nm;
      if (auto v = get_non_empty(m, "source")) {
        auto [pos, inserted] = seen.emplace(*v, m.value("source").Mark().line + 1);
        if (!inserted)
          error(m.value("source"), "duplicate source network '" + *v + "' in networkMap (first at line " +
                                       std::to_string(pos->second) + ")");
        nm.source = *v;
      }
      if (m.has("destination")) {
        MapView d = map_view(m.value("destination"), ctx + ".destination", ctx + ".destination.",
                             kNetworkDestinationKeys);
        if (d.valid) {
          require(d, {"type"});
          if (auto v = get_string(d, "type")) {
            check_enum(d.value("type"), ctx + ".destination.type", *v, kNetworkTypes);
            nm.type = *v;
          }
          if (auto v = get_string(d, "name")) nm.name = *v;
          if (auto v = get_string(d, "namespace")) nm.namespace_ = *v;
          if (nm.type == "multus" && nm.name.empty())
            error(d.node, ctx + ".destination of type multus needs name (the NetworkAttachmentDefinition)");
          if (nm.type != "multus" && (d.has("name") || d.has("namespace")))
            error(d.node, ctx + ".destination name/namespace apply only to type multus");
        }
      }
      out.push_back(nm);
    }
  }

  void load_storage_map(const YAML::Node& node, std::vector<StorageMapping>& out) {
    if (!node.IsSequence() || node.size() == 0) {
      error(node, "storageMap must be a non-empty list of {source, destination}, got " +
                      std::string(node.IsSequence() ? "an empty list" : describe_type(node)));
      return;
    }
    std::map<std::string, int> seen;
    for (std::size_t i = 0; i < node.size(); ++i) {
      std::string ctx = "storageMap[" + std::to_string(i) + "]";
      MapView m = map_view(node[i], ctx, ctx + ".", kStorageKeys);
      if (!m.valid) continue;
      require(m, {"source", "destination"});
      StorageMapping sm;
      if (auto v = get_non_empty(m, "source")) {
        auto [pos, inserted] = seen.emplace(*v, m.value("source").Mark().line + 1);
        if (!inserted)
          error(m.value("source"), "duplicate source datastore '" + *v + "' in storageMap (first at line " +
                                       std::to_string(pos->second) + ")");
        sm.source = *v;
      }
      if (m.has("destination")) {
        MapView d = map_view(m.value("destination"), ctx + ".destination", ctx + ".destination.",
                             kStorageDestinationKeys);
        if (d.valid) {
          require(d, {"storageClass"});
          if (auto v = get_non_empty(d, "storageClass")) sm.storage_class = *v;
          if (auto v = get_string(d, "accessMode")) {
            check_enum(d.value("accessMode"), ctx + ".destination.accessMode", *v, kAccessModes);
            sm.access_mode = *v;
          }
          if (auto v = get_string(d, "volumeMode")) {
            check_enum(d.value("volumeMode"), ctx + ".destination.volumeMode", *v, kVolumeModes);
            sm.volume_mode = *v;
          }
        }
      }
      out.push_back(sm);
    }
  }

  void load_ready(const YAML::Node& node, plan::Ready& ready) {
    MapView m = map_view(node, "ready", "ready.", ready_fields().keys());
    if (!m.valid) return;
    ready_fields().read(*this, m, ready);
    if (ready.signal == "port_open" && ready.port == 0)
      error(m.node, "ready.signal port_open needs ready.port");
  }

  void load_storm(const YAML::Node& node, plan::Storm& storm) {
    MapView m = map_view(node, "storm", "storm.", storm_fields().keys());
    if (!m.valid) return;
    storm_fields().read(*this, m, storm);
    if (storm.mode == "ramp" && storm.ramp_per_second <= 0 && !m.has("perSecond"))
      error(m.node, "storm.mode ramp needs storm.perSecond");
  }
};

}  // namespace

MigrationLoadResult load_migration_plan_text(const std::string& text, const std::string& path_for_messages) {
  MigrationLoadResult result;
  Loader loader(path_for_messages);
  const std::optional<YAML::Node> document = loader.read_document(
      text, "plan", "the plan is empty (expected a MigrationPlan: apiVersion, kind, name, source, ...)");
  if (!document) {
    result.diagnostics = std::move(loader.diagnostics);
    return result;
  }
  MigrationPlan plan = loader.load(*document);
  plan.source_path = path_for_messages;
  loader.sort_diagnostics();
  result.diagnostics = std::move(loader.diagnostics);
  if (result.diagnostics.empty()) result.plan = std::move(plan);
  return result;
}

MigrationLoadResult load_migration_plan_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    MigrationLoadResult r;
    std::error_code ec(errno, std::generic_category());
    r.diagnostics.push_back(plan::Diagnostic{path, 0, 0, "cannot read the plan file: " + ec.message()});
    return r;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return load_migration_plan_text(buffer.str(), path);
}

bool is_migration_plan_text(const std::string& text) {
  try {
    YAML::Node root = YAML::Load(text);
    return root.IsMap() && root["kind"] && root["kind"].IsScalar() &&
           root["kind"].Scalar() == kMigrationPlanKind;
  } catch (const YAML::Exception&) {
    return false;
  }
}

}  // namespace bootstorm::migrate
