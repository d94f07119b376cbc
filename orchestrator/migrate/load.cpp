// MigrationPlan loading (see migration_plan.hpp). Same approach as orchestrator/plan/load.cpp, with the same
// field readers (orchestrator/plan/yaml_fields.hpp): one pass over the yaml-cpp tree, every problem reported
// with the position of the offending node.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/duration.hpp"
#include "orchestrator/migrate/migration_plan.hpp"
#include "orchestrator/plan/yaml_fields.hpp"

namespace bootstorm::migrate {
namespace {

using plan::yaml::describe_type;
using plan::yaml::is_dns_label;
using plan::yaml::MapView;
using plan::yaml::Names;

const Names kRootKeys = {"apiVersion", "kind",       "name",       "source",          "destination",
                         "vms",        "networkMap", "storageMap", "targetNamespace", "warm",
                         "ready",      "storm",      "timeout",    "output"};
const Names kSourceKeys = {"endpoint", "lab", "credentials", "tls", "apiBudget"};
const Names kSourceCredentialKeys = {"usernameEnv", "passwordEnv", "file"};
const Names kDestinationKeys = {"endpoint", "credentials", "tls", "namespace"};
const Names kDestinationCredentialKeys = {"kubeconfig", "context"};
const Names kTlsKeys = {"caFile", "insecureSkipVerify"};
const Names kApiBudgetKeys = {"requestsPerSecond", "maxConcurrent"};
const Names kVmsKeys = {"names", "fromRun", "fromStorm"};
const Names kFromStormKeys = {"golden", "placement"};
const Names kGoldenKeys = {"vm", "clone", "datastore"};
const Names kCloneTypes = {"full", "linked", "instant"};
const Names kPlacementKeys = {"host", "vms"};
const Names kNetworkKeys = {"source", "destination"};
const Names kNetworkDestinationKeys = {"type", "name", "namespace"};
const Names kNetworkTypes = {"pod", "multus", "ignored"};
const Names kStorageKeys = {"source", "destination"};
const Names kStorageDestinationKeys = {"storageClass", "accessMode", "volumeMode"};
const Names kAccessModes = {"ReadWriteOnce", "ReadWriteMany", "ReadOnlyMany"};
const Names kVolumeModes = {"Filesystem", "Block"};
const Names kReadyKeys = {"signal", "port"};
const Names kSignals = {"start_acknowledged", "running", "guest_agent", "ip_assigned", "port_open"};
const Names kStormKeys = {"mode", "timeout", "settle", "perSecond"};
const Names kStormModes = {"simultaneous", "ramp"};

constexpr const char* kApiVersion = "bootstorm.io/v1";

class Loader : public plan::yaml::FieldReader {
 public:
  explicit Loader(std::string path) : FieldReader(std::move(path)) {}

  MigrationPlan load(const YAML::Node& root) {
    MigrationPlan p;
    MapView top = map_view(root, "plan", "", kRootKeys);
    if (!top.valid) return p;
    require(top, {"apiVersion", "kind", "name", "source", "destination", "vms", "networkMap", "storageMap",
                  "targetNamespace"});
    if (auto v = get_string(top, "apiVersion")) {
      if (*v != kApiVersion)
        error(top.value("apiVersion"),
              "unsupported apiVersion '" + *v + "' (this version of bootstorm reads " + kApiVersion + ")");
      p.api_version = *v;
    }
    if (auto v = get_string(top, "kind")) {
      if (*v != kMigrationPlanKind)
        error(top.value("kind"), std::string("kind must be ") + kMigrationPlanKind + ", got '" + *v + "'");
      p.kind = *v;
    }
    if (auto v = get_string(top, "name")) {
      // The name becomes part of the run directory and, through the run id, of Kubernetes object names.
      if (!is_dns_label(*v) || v->size() > 40)
        error(top.value("name"),
              "name must be at most 40 characters of a-z, 0-9 and '-' (not at either end), got '" + *v + "'");
      p.name = *v;
    }
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
    if (auto v = get_string(top, "targetNamespace")) {
      if (!is_dns_label(*v))
        error(top.value("targetNamespace"),
              "targetNamespace must be a DNS label (a-z, 0-9, '-', at most 63 characters), got '" + *v + "'");
      p.target_namespace = *v;
    }
    if (auto v = get_bool(top, "warm")) p.warm = *v;
    if (top.has("ready")) {
      load_ready(top.value("ready"), p.ready);
    }
    if (p.ready.signal.empty()) p.ready.signal = "guest_agent";
    if (top.has("storm")) load_storm(top.value("storm"), p.storm);
    if (auto v = get_duration(top, "timeout")) {
      if (v->count() <= 0) error(top.value("timeout"), "timeout must be greater than 0");
      p.timeout = *v;
    }
    if (auto v = get_string(top, "output")) {
      if (v->empty()) error(top.value("output"), "output must name a directory, got an empty string");
      p.output = *v;
    }
    return p;
  }

 private:
  void load_tls(const YAML::Node& node, const std::string& prefix, plan::Tls& tls) {
    MapView m = map_view(node, prefix + "tls", prefix + "tls.", kTlsKeys);
    if (!m.valid) return;
    if (auto v = get_string(m, "caFile")) tls.ca_file = *v;
    if (auto v = get_bool(m, "insecureSkipVerify")) tls.insecure_skip_verify = *v;
  }

  void load_source(const YAML::Node& node, SourceEndpoint& s) {
    MapView m = map_view(node, "source", "source.", kSourceKeys);
    if (!m.valid) return;
    require(m, {"endpoint"});
    if (auto v = get_non_empty(m, "endpoint")) {
      s.endpoint = *v;
      bool ok = *v == "embedded" || v->rfind("lab:", 0) == 0 || v->rfind("https://", 0) == 0;
      if (!ok)
        error(
            m.value("endpoint"),
            "source.endpoint must be embedded, lab:<state-dir> or an https:// vCenter URL, got '" + *v + "'");
    }
    if (auto v = get_string(m, "lab")) {
      if (s.endpoint != "embedded") error(m.key_node("lab"), "source.lab applies only to endpoint embedded");
      s.lab = *v;
    }
    if (s.endpoint == "embedded" && s.lab.empty() && m.has("endpoint"))
      error(m.value("endpoint"), "source.endpoint embedded needs source.lab (e.g. tolly-2024)");
    if (m.has("credentials")) {
      MapView c = map_view(m.value("credentials"), "source.credentials", "source.credentials.",
                           kSourceCredentialKeys);
      if (c.valid) {
        if (auto v = get_string(c, "usernameEnv")) s.credentials.username_env = *v;
        if (auto v = get_string(c, "passwordEnv")) s.credentials.password_env = *v;
        if (auto v = get_string(c, "file")) s.credentials.file = *v;
        if (c.has("file") && (c.has("usernameEnv") || c.has("passwordEnv")))
          error(c.node, "source.credentials takes either file or usernameEnv/passwordEnv, not both");
      }
    }
    if (m.has("tls")) load_tls(m.value("tls"), "source.", s.tls);
    if (m.has("apiBudget")) {
      MapView b = map_view(m.value("apiBudget"), "source.apiBudget", "source.apiBudget.", kApiBudgetKeys);
      if (b.valid) {
        if (auto v = get_number(b, "requestsPerSecond")) {
          if (*v <= 0)
            error(b.value("requestsPerSecond"), "source.apiBudget.requestsPerSecond must be greater than 0");
          s.api_budget.requests_per_second = *v;
        }
        if (auto v = get_int(b, "maxConcurrent")) {
          if (*v <= 0)
            error(b.value("maxConcurrent"), "source.apiBudget.maxConcurrent must be greater than 0");
          s.api_budget.max_concurrent = static_cast<int>(*v);
        }
      }
    }
  }

  void load_destination(const YAML::Node& node, DestinationEndpoint& d) {
    MapView m = map_view(node, "destination", "destination.", kDestinationKeys);
    if (!m.valid) return;
    require(m, {"endpoint"});
    if (auto v = get_non_empty(m, "endpoint")) {
      d.endpoint = *v;
      bool ok = *v == "embedded" || *v == "kubeconfig" || *v == "in-cluster" || v->rfind("lab:", 0) == 0;
      if (!ok)
        error(m.value("endpoint"),
              "destination.endpoint must be embedded, kubeconfig, in-cluster or lab:<state-dir>, got '" + *v +
                  "'");
    }
    if (m.has("credentials")) {
      MapView c = map_view(m.value("credentials"), "destination.credentials", "destination.credentials.",
                           kDestinationCredentialKeys);
      if (c.valid) {
        if (d.endpoint != "kubeconfig")
          error(c.node, "destination.credentials applies only to endpoint kubeconfig");
        if (auto v = get_string(c, "kubeconfig")) d.credentials.kubeconfig = *v;
        if (auto v = get_string(c, "context")) d.credentials.context = *v;
      }
    }
    if (m.has("tls")) load_tls(m.value("tls"), "destination.", d.tls);
    if (auto v = get_string(m, "namespace")) {
      if (!is_dns_label(*v))
        error(m.value("namespace"), "destination.namespace must be a DNS label, got '" + *v + "'");
      d.namespace_ = *v;
    }
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
        MapView g = map_view(s.value("golden"), "vms.fromStorm.golden", "vms.fromStorm.golden.", kGoldenKeys);
        if (g.valid) {
          require(g, {"vm"});
          if (auto v = get_non_empty(g, "vm")) storm.golden.vm = *v;
          if (auto v = get_string(g, "clone")) {
            check_enum(g.value("clone"), "vms.fromStorm.golden.clone", *v, kCloneTypes);
            storm.golden.clone = *v;
          }
          if (auto v = get_string(g, "datastore")) storm.golden.datastore = *v;
        }
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
              pl.host_at = plan::yaml::position_of(pm.value("host"));
            }
            if (auto v = get_int(pm, "vms")) {
              pl.vms_at = plan::yaml::position_of(pm.value("vms"));
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
    MapView m = map_view(node, "ready", "ready.", kReadyKeys);
    if (!m.valid) return;
    if (auto v = get_string(m, "signal")) {
      check_enum(m.value("signal"), "ready.signal", *v, kSignals);
      ready.signal = *v;
    }
    if (auto v = get_int(m, "port")) {
      if (*v < 1 || *v > 65535) error(m.value("port"), "ready.port must be between 1 and 65535");
      ready.port = static_cast<int>(*v);
    }
    if (ready.signal == "port_open" && ready.port == 0)
      error(m.node, "ready.signal port_open needs ready.port");
  }

  void load_storm(const YAML::Node& node, plan::Storm& storm) {
    MapView m = map_view(node, "storm", "storm.", kStormKeys);
    if (!m.valid) return;
    if (auto v = get_string(m, "mode")) {
      check_enum(m.value("mode"), "storm.mode", *v, kStormModes);
      storm.mode = *v;
    }
    if (auto v = get_duration(m, "timeout")) {
      if (v->count() <= 0) error(m.value("timeout"), "storm.timeout must be greater than 0");
      storm.timeout = *v;
    }
    if (auto v = get_duration(m, "settle")) storm.settle = *v;
    if (auto v = get_number(m, "perSecond")) {
      if (*v <= 0) error(m.value("perSecond"), "storm.perSecond must be greater than 0");
      storm.ramp_per_second = *v;
    }
    if (storm.mode == "ramp" && storm.ramp_per_second <= 0 && !m.has("perSecond"))
      error(m.node, "storm.mode ramp needs storm.perSecond");
  }
};

}  // namespace

MigrationLoadResult load_migration_plan_text(const std::string& text, const std::string& path_for_messages) {
  MigrationLoadResult result;
  Loader loader(path_for_messages);
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    loader.error_at(e.mark, "syntax error: " + e.msg);
    result.diagnostics = std::move(loader.diagnostics);
    return result;
  }
  if (documents.empty() || (documents.size() == 1 && documents[0].IsNull())) {
    YAML::Mark start;
    start.line = 0;
    start.column = 0;
    loader.error_at(start,
                    "the plan is empty (expected a MigrationPlan: apiVersion, kind, name, source, ...)");
    result.diagnostics = std::move(loader.diagnostics);
    return result;
  }
  if (documents.size() > 1)
    loader.error(documents[1],
                 "a plan file holds exactly one YAML document, found " + std::to_string(documents.size()));
  MigrationPlan plan = loader.load(documents[0]);
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
