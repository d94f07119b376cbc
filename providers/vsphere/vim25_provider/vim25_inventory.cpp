// Vim25Provider::check_inventory: everything the plan names, read before anything is created — the
// datacenter and its VM folder, the placement hosts (connected, not in maintenance), the golden VM, the
// datastore, and what the clone kind needs (a named snapshot that exists; for instant clones vSphere 6.7+
// and a running golden VM), and the user's privileges for all of it (vim25_privileges.cpp). Each error names
// what is missing, what exists, and what to do.
#include <spdlog/spdlog.h>

#include <set>

#include "protocol/vim25/decode.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"

namespace bootstorm::vsphere::vim25 {

namespace asio = boost::asio;

namespace {

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

}  // namespace

asio::awaitable<Expected<void>> Vim25Provider::check_inventory(const api::InventoryRequest& request) {
  if (inventory_checked_ && checked_request_.hosts == request.hosts &&
      checked_request_.total_vms == request.total_vms)
    co_return Expected<void>{};  // check() asked
  auto resolved = co_await resolve_inventory(request);
  if (!resolved) co_return resolved.error();
  auto privileges = co_await check_privileges();
  if (!privileges) co_return privileges.error();
  if (!privileges->asked)
    spdlog::warn(
        "{}: the user's privileges are not checked before the run (a missing one will fail the call "
        "that needs it)",
        privileges->why_not);
  co_await learn_hosts();
  inventory_checked_ = true;
  checked_request_ = request;
  co_return Expected<void>{};
}

asio::awaitable<Expected<void>> Vim25Provider::resolve_inventory(const api::InventoryRequest& request) {
  const std::string where = "vCenter " + config_.endpoint;
  // Named arguments, not temporaries in the co_await expressions (g++ 12 mis-copies those).
  const std::string datacenter_type = "Datacenter", cluster_type = "ClusterComputeResource",
                    host_type = "HostSystem", vm_type = "VirtualMachine", datastore_type = "Datastore";
  const std::vector<std::string> datacenter_paths{"name", "vmFolder"}, cluster_paths{"resourcePool"},
      host_paths{"name", "parent", "runtime.connectionState", "runtime.inMaintenanceMode"},
      vm_paths{"name", "runtime.powerState", "runtime.host", "datastore", "parent", "snapshot"},
      datastore_paths{"name", "summary.freeSpace"};
  auto datacenters = co_await read_all(datacenter_type, datacenter_paths);
  if (!datacenters) co_return datacenters.error();
  if (datacenters->empty())
    co_return make_error(ErrorKind::not_found, where + " has no datacenter",
                         "create one, or use another vCenter");
  // One datacenter: the golden VM's (found below); remember every one's folder meanwhile.
  std::map<std::string, MoRef> folder_of;
  for (const auto& dc : *datacenters)
    if (const Value* f = dc.prop("vmFolder")) folder_of[dc.obj.value] = f->moref();

  // Hosts by name, with the pool of their cluster.
  auto clusters = co_await read_all(cluster_type, cluster_paths);
  if (!clusters) co_return clusters.error();
  std::map<std::string, std::string> cluster_pool;
  for (const auto& c : *clusters)
    if (const Value* p = c.prop("resourcePool")) cluster_pool[c.obj.value] = p->text;
  auto hosts = co_await read_all(host_type, host_paths);
  if (!hosts) co_return hosts.error();
  std::map<std::string, const ObjectContent*> by_name;
  std::set<std::string> host_names;
  for (const auto& h : *hosts) {
    if (const Value* n = h.prop("name")) {
      by_name[n->text] = &h;
      host_names.insert(n->text);
      host_names_[h.obj.value] = n->text;
    }
  }
  for (const auto& name : request.hosts) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      co_return make_error(ErrorKind::not_found, "host " + name + " is not in " + where,
                           "use one of: " + joined(host_names));
    }
    const ObjectContent& h = *it->second;
    const Value* state = h.prop("runtime.connectionState");
    if (state && state->text != "connected") {
      co_return make_error(ErrorKind::conflict, "host " + name + " in " + where + " is " + state->text,
                           "reconnect it in vCenter, or place the scenario on another host");
    }
    const Value* maintenance = h.prop("runtime.inMaintenanceMode");
    if (maintenance && maintenance->text == "true") {
      co_return make_error(ErrorKind::conflict, "host " + name + " in " + where + " is in maintenance mode",
                           "take it out of maintenance mode, or place the scenario on another host");
    }
    Host host{h.obj.value, name, {}};
    if (const Value* parent = h.prop("parent"); parent && parent->moref_type == "ClusterComputeResource")
      host.pool = cluster_pool[parent->text];
    hosts_[name] = host;
  }

  // The golden VM.
  auto vms = co_await read_all(vm_type, vm_paths);
  if (!vms) co_return vms.error();
  const ObjectContent* golden = nullptr;
  std::set<std::string> similar;
  for (const auto& vm : *vms) {
    const Value* n = vm.prop("name");
    if (!n) continue;
    if (n->text == settings_.vm) golden = &vm;
    if (!n->text.starts_with("bs-") && similar.size() < 20) similar.insert(n->text);
  }
  if (!golden) {
    co_return make_error(ErrorKind::not_found, "golden VM " + settings_.vm + " is not in " + where,
                         "set golden.vm to one of: " + joined(similar));
  }
  golden_ = golden->obj;
  if (const Value* h = golden->prop("runtime.host")) golden_host_id_ = h->text;
  // The datacenter whose VM folder holds the golden VM's folder chain: with one datacenter, that one.
  datacenter_ = {"Datacenter", datacenters->front().obj.value};
  vm_folder_ = folder_of[datacenter_.value];
  if (const Value* parent = golden->prop("parent"); parent && parent->moref_type == "Folder")
    vm_folder_ = parent->moref();

  // The datastore: the plan's, else the golden VM's.
  auto datastores = co_await read_all(datastore_type, datastore_paths);
  if (!datastores) co_return datastores.error();
  std::set<std::string> datastore_names;
  datastore_ = {};
  for (const auto& d : *datastores) {
    const Value* n = d.prop("name");
    if (!n) continue;
    datastore_names.insert(n->text);
    if (!settings_.datastore.empty() && n->text == settings_.datastore) datastore_ = d.obj;
  }
  if (!settings_.datastore.empty() && datastore_.empty()) {
    co_return make_error(ErrorKind::not_found, "datastore " + settings_.datastore + " is not in " + where,
                         "set golden.datastore to one of: " + joined(datastore_names));
  }
  if (datastore_.empty()) {
    if (const Value* ds = golden->prop("datastore"); ds && !ds->all("ManagedObjectReference").empty())
      datastore_ = ds->all("ManagedObjectReference").front()->moref();
  }

  // What the clone kind needs.
  const std::string power =
      golden->prop("runtime.powerState") ? golden->prop("runtime.powerState")->text : "";
  if (settings_.clone == "linked") {
    std::vector<SnapshotEntry> snapshots;
    if (const Value* info = golden->prop("snapshot")) snapshots = snapshots_of(*info);
    if (!settings_.snapshot.empty()) {
      snapshot_ = {};
      std::set<std::string> names;
      for (const auto& [name, ref] : snapshots) {
        names.insert(name);
        if (name == settings_.snapshot) snapshot_ = ref;
      }
      if (snapshot_.empty()) {
        co_return make_error(ErrorKind::conflict,
                             "golden VM " + settings_.vm + " in " + where + " has no snapshot named " +
                                 settings_.snapshot + " (it has: " + joined(names) + ")",
                             "set golden.snapshot to one of its snapshots, or leave it out and the run takes "
                             "its own snapshot");
      }
    }
  } else if (settings_.clone == "instant") {
    const std::string version = session_.service_content().about.api_version;
    if (lower_version(version, "6.7") != "6.7") {
      co_return make_error(ErrorKind::conflict,
                           where + " speaks vim25 " + version + "; instant clones need vSphere 6.7 or later",
                           "use golden.clone: linked");
    }
    if (power != "poweredOn") {
      co_return make_error(ErrorKind::conflict,
                           "golden VM " + settings_.vm + " in " + where + " is " + power +
                               "; an instant clone forks a running VM",
                           "power the golden VM on (and let its guest settle) before the run");
    }
  }
  co_return Expected<void>{};
}

}  // namespace bootstorm::vsphere::vim25
