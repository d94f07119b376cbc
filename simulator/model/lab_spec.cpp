// Strict loading of lab profiles (simulator/labs/*.yaml): every key is known, every value has the right
// type, every reference resolves; errors name file:line:col.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "simulator/model/detail/lab_yaml_reader.hpp"
#include "simulator/model/lab.hpp"
#include "simulator/model/lab_overrides.hpp"

namespace bootstorm::sim::model {

namespace {

using detail::Reader;

void read_faults(Reader& r, const YAML::Node& node, Faults& f) {
  if (!r.map(
          node, "faults",
          {"neverBootRate", "agentNeverStartsRate", "neverBootVms", "agentNeverStartsVms", "cloneFailureRate",
           "cloneFailureHosts", "errorRate", "errorStatus", "latencyMs", "latencyJitterMs", "watchDropAfterS",
           "expireSessions", "forgetCollectorVersions", "forceGoneRate", "paths", "migrationFailures"})) {
    return;
  }
  r.get(node, "neverBootRate", f.never_boot_rate);
  r.get(node, "agentNeverStartsRate", f.agent_never_starts_rate);
  r.get_list(node, "neverBootVms", f.never_boot_vms);
  r.get_list(node, "agentNeverStartsVms", f.agent_never_starts_vms);
  r.get(node, "cloneFailureRate", f.clone_failure_rate);
  r.get_list(node, "cloneFailureHosts", f.clone_failure_hosts);
  r.get(node, "errorRate", f.error_rate);
  r.get(node, "errorStatus", f.error_status);
  r.get(node, "latencyMs", f.latency_ms);
  r.get(node, "latencyJitterMs", f.latency_jitter_ms);
  r.get(node, "watchDropAfterS", f.watch_drop_after_s);
  r.get(node, "expireSessions", f.expire_sessions);
  r.get(node, "forgetCollectorVersions", f.forget_collector_versions);
  r.get(node, "forceGoneRate", f.force_gone_rate);
  r.get_list(node, "paths", f.paths);
  if (r.ok() && node["migrationFailures"]) {
    // Same validation as POST /_lab/faults: the YAML list is re-read as JSON.
    const YAML::Node list = node["migrationFailures"];
    nlohmann::json items = nlohmann::json::array();
    bool shaped = list.IsSequence();
    if (shaped) {
      for (const auto& item : list) {
        if (!item.IsMap()) {
          shaped = false;
          break;
        }
        nlohmann::json entry = nlohmann::json::object();
        for (const auto& field : item) entry[field.first.Scalar()] = field.second.Scalar();
        items.push_back(std::move(entry));
      }
    }
    if (!shaped) {
      r.fail(list, "'migrationFailures' must be a list of {vm, step, reason}");
    } else if (auto parsed = parse_migration_failures_json(items.dump(), f.migration_failures); !parsed) {
      r.fail(list, parsed.error().message);
    }
  }
  for (const char* rate :
       {"neverBootRate", "agentNeverStartsRate", "cloneFailureRate", "errorRate", "forceGoneRate"}) {
    if (node[rate] && r.ok()) {
      const double v = node[rate].as<double>();
      if (v < 0 || v > 1) r.fail(node[rate], fmt::format("'{}' must be between 0 and 1", rate));
    }
  }
}

void read_phase(Reader& r, const YAML::Node& node, PhaseSpec& p) {
  if (!r.map(node, "phase", {"name", "mbRead", "cpuCoreS", "fixedS", "jitter"})) return;
  r.get(node, "name", p.name, true);
  r.get_positive(node, "mbRead", p.mb_read, true);
  r.get_positive(node, "cpuCoreS", p.cpu_core_s, true);
  r.get_positive(node, "fixedS", p.fixed_s, true);
  r.get_positive(node, "jitter", p.jitter, true);
}

void read_profile(Reader& r, const YAML::Node& node, GuestProfile& p) {
  if (!r.map(node, "profile",
             {"name", "guestOS", "cpuCount", "memoryMB", "diskGB", "diskUsedGB", "phases", "agentPhase",
              "ipDelayS", "portPhase", "portDelayS", "ioSizeKB", "outstandingIOs", "powerOnS", "powerOffS",
              "linkedDeltaMB", "instantCloneMB", "instantResumeS", "cloneOverheadS"})) {
    return;
  }
  r.get(node, "name", p.name, true);
  r.get(node, "guestOS", p.guest_os);
  r.get(node, "cpuCount", p.cpu_count);
  r.get(node, "memoryMB", p.memory_mb);
  r.get_positive(node, "diskGB", p.disk_gb);
  r.get_positive(node, "diskUsedGB", p.disk_used_gb);
  r.each(
      node, "phases",
      [&](const YAML::Node& item) {
        PhaseSpec phase;
        read_phase(r, item, phase);
        p.phases.push_back(std::move(phase));
      },
      true);
  r.get(node, "agentPhase", p.agent_phase);
  r.get_positive(node, "ipDelayS", p.ip_delay_s, true);
  r.get(node, "portPhase", p.port_phase);
  r.get_positive(node, "portDelayS", p.port_delay_s, true);
  r.get_positive(node, "ioSizeKB", p.io_size_kb);
  r.get_positive(node, "outstandingIOs", p.outstanding_ios);
  r.get_positive(node, "powerOnS", p.power_on_s, true);
  r.get_positive(node, "powerOffS", p.power_off_s, true);
  r.get_positive(node, "linkedDeltaMB", p.linked_delta_mb, true);
  r.get_positive(node, "instantCloneMB", p.instant_clone_mb, true);
  r.get_positive(node, "instantResumeS", p.instant_resume_s, true);
  r.get_positive(node, "cloneOverheadS", p.clone_overhead_s, true);
  if (!r.ok()) return;
  if (p.cpu_count < 1) r.fail(node["cpuCount"], "'cpuCount' must be >= 1");
  if (p.memory_mb < 1) r.fail(node["memoryMB"], "'memoryMB' must be >= 1");
  if (p.phases.empty()) r.fail(node["phases"], "a profile needs at least one phase");
  auto has_phase = [&](const std::string& name) {
    return std::any_of(p.phases.begin(), p.phases.end(),
                       [&](const PhaseSpec& ph) { return ph.name == name; });
  };
  if (!has_phase(p.agent_phase)) {
    r.fail(node["agentPhase"] ? node["agentPhase"] : node,
           fmt::format("agentPhase '{}' is not a phase", p.agent_phase));
  }
  if (!has_phase(p.port_phase)) {
    r.fail(node["portPhase"] ? node["portPhase"] : node,
           fmt::format("portPhase '{}' is not a phase", p.port_phase));
  }
}

void read_host(Reader& r, const YAML::Node& node, HostSpec& h) {
  if (!r.map(node, "host",
             {"name", "cluster", "inventory", "cores", "coreSpeed", "linkMBps", "busMBps", "memoryGB",
              "ioLatencyMs", "datastores", "cpuModel", "esxi", "maintenance"})) {
    return;
  }
  r.get(node, "name", h.name, true);
  r.get(node, "cluster", h.cluster);
  r.get(node, "inventory", h.inventory);
  r.get(node, "cores", h.cores);
  r.get_positive(node, "coreSpeed", h.core_speed);
  r.get_positive(node, "linkMBps", h.link_mbps);
  r.get_positive(node, "busMBps", h.bus_mbps);
  r.get_positive(node, "memoryGB", h.memory_gb);
  r.get_positive(node, "ioLatencyMs", h.io_latency_ms, true);
  r.get_list(node, "datastores", h.datastores);
  r.get(node, "cpuModel", h.cpu_model);
  r.get(node, "esxi", h.esxi);
  r.get(node, "maintenance", h.maintenance);
  if (r.ok() && h.cores < 1) r.fail(node["cores"], "'cores' must be >= 1");
  if (r.ok() && h.inventory != "vcenter" && h.inventory != "kube") {
    r.fail(node["inventory"], "'inventory' must be 'vcenter' or 'kube'");
  }
}

template <class T, class Name>
void check_unique(Reader& r, const YAML::Node& list, const std::vector<T>& items, Name name,
                  const char* what) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < items.size() && r.ok(); ++i) {
    if (!seen.insert(name(items[i])).second) {
      r.fail(list[i], fmt::format("duplicate {} '{}'", what, name(items[i])));
    }
  }
}

// vcenter.roles and vcenter.users (see simulator/README.md, "Users and privileges").
void read_access_control(Reader& r, const YAML::Node& vc, VcenterSpec& spec) {
  static const std::set<std::string> kBuiltInRoles{"Admin", "ReadOnly", "NoAccess"};
  std::set<std::string> role_names = kBuiltInRoles;
  r.each(vc, "roles", [&](const YAML::Node& item) {
    VcenterRole role;
    if (r.map(item, "role", {"name", "privileges"})) {
      r.get(item, "name", role.name, true);
      r.get_list(item, "privileges", role.privileges);
      if (r.ok() && !role_names.insert(role.name).second)
        r.fail(item, fmt::format("role '{}' is defined twice (or is built in)", role.name));
      for (const auto& p : role.privileges) {
        const bool shaped = p.find('.') != std::string::npos && p.front() != '.' && p.back() != '.' &&
                            p.find(' ') == std::string::npos;
        if (r.ok() && !shaped)
          r.fail(item["privileges"],
                 fmt::format("'{}' is not a privilege id (e.g. VirtualMachine.Interact.PowerOn)", p));
      }
    }
    spec.roles.push_back(std::move(role));
  });
  std::set<std::string> user_names{spec.username};
  r.each(vc, "users", [&](const YAML::Node& item) {
    VcenterUser user;
    if (r.map(item, "user", {"name", "password", "permissions"})) {
      r.get(item, "name", user.name, true);
      r.get(item, "password", user.password, true);
      if (r.ok() && !user_names.insert(user.name).second)
        r.fail(item, fmt::format("user '{}' is defined twice (or is the administrator)", user.name));
      if (r.ok() && user.password.empty()) r.fail(item, fmt::format("user '{}' needs a password", user.name));
      r.each(item, "permissions", [&](const YAML::Node& p) {
        VcenterPermission permission;
        if (r.map(p, "permission", {"entity", "role", "propagate"})) {
          r.get(p, "entity", permission.entity, true);
          r.get(p, "role", permission.role, true);
          r.get(p, "propagate", permission.propagate);
          if (r.ok() && !role_names.count(permission.role))
            r.fail(p["role"],
                   fmt::format(
                       "role '{}' is not defined in vcenter.roles (nor built in: Admin, ReadOnly, NoAccess)",
                       permission.role));
        }
        user.permissions.push_back(std::move(permission));
      });
    }
    spec.users.push_back(std::move(user));
  });
}

DatastoreSpec read_datastore(Reader& r, const YAML::Node& item) {
  DatastoreSpec d;
  if (r.map(item, "datastore", {"name", "MBps", "iops", "latencyMs", "capacityGB"})) {
    r.get(item, "name", d.name, true);
    r.get_positive(item, "MBps", d.mbps);
    r.get_positive(item, "iops", d.iops);
    r.get_positive(item, "latencyMs", d.latency_ms, true);
    r.get_positive(item, "capacityGB", d.capacity_gb);
  }
  return d;
}

GoldenVmSpec read_golden_vm(Reader& r, const YAML::Node& item) {
  GoldenVmSpec g;
  if (r.map(item, "golden VM", {"name", "host", "datastore", "profile", "folder", "tools"})) {
    r.get(item, "name", g.name, true);
    r.get(item, "host", g.host, true);
    r.get(item, "datastore", g.datastore, true);
    r.get(item, "profile", g.profile, true);
    r.get(item, "folder", g.folder);
    r.get(item, "tools", g.tools);
  }
  return g;
}

GoldenImageSpec read_golden_image(Reader& r, const YAML::Node& item) {
  GoldenImageSpec g;
  if (r.map(item, "golden image", {"name", "namespace", "profile", "datastore", "storageClass"})) {
    r.get(item, "name", g.name, true);
    r.get(item, "namespace", g.namespace_, true);
    r.get(item, "profile", g.profile, true);
    r.get(item, "datastore", g.datastore);
    r.get(item, "storageClass", g.storage_class);
  }
  return g;
}

void read_kube(Reader& r, const YAML::Node& kube, KubeSpec& kube_spec) {
  if (r.map(kube, "kube",
            {"nodes", "datastore", "storageClass", "scheduleDelayS", "launcherStartS", "token",
             "serverVersion", "kubevirtVersion", "cdiVersion", "deny", "virtController", "provisioner",
             "cloneStrategy", "snapshotClass"})) {
    r.each(kube, "nodes", [&](const YAML::Node& item) {
      NodeSpec n;
      if (r.map(item, "node", {"name", "host", "labels"})) {
        r.get(item, "name", n.name, true);
        r.get(item, "host", n.host, true);
        r.get_string_map(item, "labels", n.labels);
      }
      kube_spec.nodes.push_back(std::move(n));
    });
    r.get(kube, "datastore", kube_spec.datastore);
    r.get(kube, "storageClass", kube_spec.storage_class);
    r.get_positive(kube, "scheduleDelayS", kube_spec.schedule_delay_s, true);
    r.get_positive(kube, "launcherStartS", kube_spec.launcher_start_s, true);
    r.get(kube, "token", kube_spec.token);
    r.get(kube, "serverVersion", kube_spec.server_version);
    r.get(kube, "kubevirtVersion", kube_spec.kubevirt_version);
    r.get(kube, "cdiVersion", kube_spec.cdi_version);
    r.get_list(kube, "deny", kube_spec.deny);
    r.get(kube, "provisioner", kube_spec.provisioner);
    r.get(kube, "cloneStrategy", kube_spec.clone_strategy);
    r.get(kube, "snapshotClass", kube_spec.snapshot_class);
    if (r.ok() && kube_spec.clone_strategy != "csi-clone" && kube_spec.clone_strategy != "snapshot" &&
        kube_spec.clone_strategy != "copy")
      r.fail(kube["cloneStrategy"],
             "'cloneStrategy' is csi-clone, snapshot or copy, got '" + kube_spec.clone_strategy + "'");
    if (const YAML::Node limit = kube["virtController"];
        limit && r.map(limit, "virtController", {"qps", "burst"})) {
      kubevirt_limits::TokenBucketLimit l;
      r.get_positive(limit, "qps", l.qps);
      r.get_positive(limit, "burst", l.burst);
      kube_spec.virt_controller = l;
    }
    for (const auto& rule : kube_spec.deny) {
      if (r.ok() && std::count(rule.begin(), rule.end(), ' ') != 2)
        r.fail(kube["deny"],
               "'deny' entries are \"verb group resource[/subresource]\" (group core for the core "
               "API), got '" +
                   rule + "'");
    }
  }
}

void read_vcenter(Reader& r, const YAML::Node& vc, VcenterSpec& v_spec) {
  if (r.map(vc, "vcenter",
            {"username", "password", "sessionIdleTimeoutS", "maxSessionsPerUser", "maxConcurrentOperations",
             "hostCostUnits", "cloneCost", "powerCost", "listLimit", "legacyRest", "cloneKind", "roles",
             "users", "unservedMethods"})) {
    r.get(vc, "username", v_spec.username);
    r.get(vc, "password", v_spec.password);
    r.get_positive(vc, "sessionIdleTimeoutS", v_spec.session_idle_timeout_s);
    r.get(vc, "maxSessionsPerUser", v_spec.max_sessions_per_user);
    r.get(vc, "maxConcurrentOperations", v_spec.max_concurrent_operations);
    r.get(vc, "hostCostUnits", v_spec.host_cost_units);
    r.get(vc, "cloneCost", v_spec.clone_cost);
    r.get(vc, "powerCost", v_spec.power_cost);
    r.get(vc, "listLimit", v_spec.list_limit);
    r.get(vc, "legacyRest", v_spec.legacy_rest);
    r.get(vc, "cloneKind", v_spec.clone_kind);
    r.get_list(vc, "unservedMethods", v_spec.unserved_methods);
    read_access_control(r, vc, v_spec);
    if (r.ok() && v_spec.clone_kind != "full" && v_spec.clone_kind != "linked") {
      r.fail(vc["cloneKind"], "'cloneKind' must be 'full' or 'linked'");
    }
    const auto& v = v_spec;
    if (r.ok() && (v.max_sessions_per_user < 1 || v.max_concurrent_operations < 1 || v.host_cost_units < 1 ||
                   v.clone_cost < 1 || v.power_cost < 1 || v.list_limit < 1)) {
      r.fail(vc, "vcenter limits must be >= 1");
    }
    if (r.ok() && (v.clone_cost > v.host_cost_units || v.power_cost > v.host_cost_units)) {
      r.fail(vc, "an operation cannot cost more than hostCostUnits");
    }
  }
}

void read_telemetry(Reader& r, const YAML::Node& telemetry, TelemetrySpec& t_spec) {
  if (r.map(telemetry, "telemetry", {"scrapeIntervalS", "vcenterIntervalS"})) {
    r.get_positive(telemetry, "scrapeIntervalS", t_spec.scrape_interval_s);
    r.get_positive(telemetry, "vcenterIntervalS", t_spec.vcenter_interval_s);
    const double ms = t_spec.scrape_interval_s * 1000;
    if (r.ok() && (ms < 1000 || std::abs(ms - std::round(ms)) > 1e-6)) {
      r.fail(telemetry["scrapeIntervalS"], "'scrapeIntervalS' must be at least 1 s, in whole milliseconds");
    }
    const double vc = t_spec.vcenter_interval_s;
    if (r.ok() && (vc < 1 || std::abs(vc - std::round(vc)) > 1e-9)) {
      r.fail(telemetry["vcenterIntervalS"],
             "'vcenterIntervalS' must be a whole number of seconds, at least 1");
    }
  }
}

// Every name the profile uses resolves: hosts' clusters and datastores, golden VMs' host, datastore, profile
// and folder, nodes' hosts, kube.datastore, golden images' profile and datastore.
void check_references(Reader& r, const YAML::Node& root, const LabSpec& spec) {
  // Cross references.
  check_unique(
      r, root["hosts"], spec.hosts, [](const HostSpec& h) { return h.name; }, "host");
  check_unique(
      r, root["datastores"], spec.datastores, [](const DatastoreSpec& d) { return d.name; }, "datastore");
  check_unique(
      r, root["profiles"], spec.profiles, [](const GuestProfile& p) { return p.name; }, "profile");
  auto host_exists = [&](const std::string& n) {
    return std::any_of(spec.hosts.begin(), spec.hosts.end(), [&](const HostSpec& h) { return h.name == n; });
  };
  auto ds_exists = [&](const std::string& n) {
    return std::any_of(spec.datastores.begin(), spec.datastores.end(),
                       [&](const DatastoreSpec& d) { return d.name == n; });
  };
  auto profile_exists = [&](const std::string& n) {
    return std::any_of(spec.profiles.begin(), spec.profiles.end(),
                       [&](const GuestProfile& p) { return p.name == n; });
  };
  for (std::size_t i = 0; i < spec.hosts.size() && r.ok(); ++i) {
    const auto& h = spec.hosts[i];
    if (!h.cluster.empty() && std::none_of(spec.clusters.begin(), spec.clusters.end(),
                                           [&](const ClusterSpec& c) { return c.name == h.cluster; })) {
      r.fail(root["hosts"][i], fmt::format("host '{}' names unknown cluster '{}'", h.name, h.cluster));
    }
    for (const auto& d : h.datastores) {
      if (!ds_exists(d))
        r.fail(root["hosts"][i], fmt::format("host '{}' mounts unknown datastore '{}'", h.name, d));
    }
  }
  for (std::size_t i = 0; i < spec.golden_vms.size() && r.ok(); ++i) {
    const auto& g = spec.golden_vms[i];
    const YAML::Node at = root["goldenVMs"][i];
    if (!host_exists(g.host))
      r.fail(at, fmt::format("golden VM '{}' names unknown host '{}'", g.name, g.host));
    if (!ds_exists(g.datastore)) {
      r.fail(at, fmt::format("golden VM '{}' names unknown datastore '{}'", g.name, g.datastore));
    }
    if (!profile_exists(g.profile)) {
      r.fail(at, fmt::format("golden VM '{}' names unknown profile '{}'", g.name, g.profile));
    }
    if (!g.folder.empty() &&
        std::find(spec.folders.begin(), spec.folders.end(), g.folder) == spec.folders.end()) {
      r.fail(at, fmt::format("golden VM '{}' names unknown folder '{}'", g.name, g.folder));
    }
  }
  for (std::size_t i = 0; i < spec.kube.nodes.size() && r.ok(); ++i) {
    if (!host_exists(spec.kube.nodes[i].host)) {
      r.fail(root["kube"]["nodes"][i], fmt::format("node '{}' names unknown host '{}'",
                                                   spec.kube.nodes[i].name, spec.kube.nodes[i].host));
    }
  }
  if (r.ok() && (!spec.kube.nodes.empty() || !spec.golden_images.empty()) &&
      !ds_exists(spec.kube.datastore)) {
    r.fail(root["kube"] ? root["kube"] : root,
           fmt::format("kube.datastore '{}' is not a datastore of the lab", spec.kube.datastore));
  }
  for (std::size_t i = 0; i < spec.golden_images.size() && r.ok(); ++i) {
    const auto& g = spec.golden_images[i];
    const YAML::Node at = root["goldenImages"][i];
    if (!profile_exists(g.profile)) {
      r.fail(at, fmt::format("golden image '{}' names unknown profile '{}'", g.name, g.profile));
    }
    if (!g.datastore.empty() && !ds_exists(g.datastore)) {
      r.fail(at, fmt::format("golden image '{}' names unknown datastore '{}'", g.name, g.datastore));
    }
  }
}

// A permission's object: one the lab's inventory has when it starts.
void check_permission_entities(Reader& r, const YAML::Node& root, const LabSpec& spec) {
  std::set<std::string> entities{"/", "vm", spec.datacenter.name};
  for (const auto& c : spec.clusters) entities.insert(c.name);
  for (const auto& h : spec.hosts) entities.insert(h.name);
  for (const auto& d : spec.datastores) entities.insert(d.name);
  for (const auto& g : spec.golden_vms) entities.insert(g.name);
  entities.insert(spec.folders.begin(), spec.folders.end());
  entities.insert(spec.resource_pools.begin(), spec.resource_pools.end());
  for (std::size_t u = 0; u < spec.vcenter.users.size() && r.ok(); ++u) {
    const auto& user = spec.vcenter.users[u];
    for (std::size_t i = 0; i < user.permissions.size() && r.ok(); ++i) {
      if (!entities.count(user.permissions[i].entity)) {
        r.fail(root["vcenter"]["users"][u]["permissions"][i],
               fmt::format(
                   "user '{}' has a permission on '{}', which is not an object of the lab (\"/\" is the "
                   "root; else a datacenter, cluster, host, folder, resource pool, datastore or golden VM)",
                   user.name, user.permissions[i].entity));
      }
    }
  }
}

}  // namespace

Expected<LabSpec> parse_lab_spec(std::string_view yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    return make_error(ErrorKind::invalid_input,
                      fmt::format("{}:{}:{}: {}", source, e.mark.line + 1, e.mark.column + 1, e.msg),
                      "Fix the YAML syntax of the lab profile.");
  }
  Reader r(source);
  LabSpec spec;
  if (!r.map(root, "lab profile",
             {"name", "description", "seed", "datacenter", "clusters", "folders", "resourcePools", "hosts",
              "datastores", "profiles", "goldenVMs", "goldenImages", "kube", "vcenter", "telemetry",
              "faults"})) {
    return r.error();
  }
  r.get(root, "name", spec.name, true);
  r.get(root, "description", spec.description);
  r.get(root, "seed", spec.seed);
  if (root["datacenter"] && r.map(root["datacenter"], "datacenter", {"name"})) {
    r.get(root["datacenter"], "name", spec.datacenter.name);
  }
  r.each(root, "clusters", [&](const YAML::Node& item) {
    ClusterSpec c;
    if (r.map(item, "cluster", {"name"})) r.get(item, "name", c.name, true);
    spec.clusters.push_back(std::move(c));
  });
  r.get_list(root, "folders", spec.folders);
  r.get_list(root, "resourcePools", spec.resource_pools);
  r.each(
      root, "hosts",
      [&](const YAML::Node& item) {
        HostSpec h;
        read_host(r, item, h);
        spec.hosts.push_back(std::move(h));
      },
      true);
  r.each(
      root, "datastores", [&](const YAML::Node& item) { spec.datastores.push_back(read_datastore(r, item)); },
      true);
  r.each(
      root, "profiles",
      [&](const YAML::Node& item) {
        GuestProfile p;
        read_profile(r, item, p);
        spec.profiles.push_back(std::move(p));
      },
      true);
  r.each(root, "goldenVMs",
         [&](const YAML::Node& item) { spec.golden_vms.push_back(read_golden_vm(r, item)); });
  r.each(root, "goldenImages",
         [&](const YAML::Node& item) { spec.golden_images.push_back(read_golden_image(r, item)); });
  if (const YAML::Node kube = root["kube"]; kube) {
    read_kube(r, kube, spec.kube);
  }
  if (const YAML::Node vc = root["vcenter"]; vc) {
    read_vcenter(r, vc, spec.vcenter);
  }
  if (const YAML::Node telemetry = root["telemetry"]; telemetry) {
    read_telemetry(r, telemetry, spec.telemetry);
  }
  if (root["faults"]) read_faults(r, root["faults"], spec.faults);
  if (!r.ok()) return r.error();

  check_references(r, root, spec);
  check_permission_entities(r, root, spec);
  if (!r.ok()) return r.error();
  return spec;
}

}  // namespace bootstorm::sim::model
