// The vCenter inventory as /api/vcenter lists it — VMs (with the filters and the list limit vCenter has),
// hosts, datastores, clusters, folders, resource pools, the datacenter — and GET /api/vcenter/vm/{vm}.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string_view>
#include <vector>

#include "simulator/vcenter/detail/vapi_responses.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

using http::ServerRequest;
using http::ServerResponse;

namespace {

// Filter helper: empty filter = match all.
bool in(const std::vector<std::string>& filter, std::string_view value) {
  return filter.empty() || std::find(filter.begin(), filter.end(), value) != filter.end();
}

// A list of one kind of the datacenter's objects: empty when the request's `datacenters` filter leaves out
// the lab's one datacenter, else the summary of each object `selected` keeps, in the lab's order.
template <class Objects, class Selected, class Summary>
ServerResponse datacenter_list(const model::Lab& lab, const ServerRequest& req, const Objects& objects,
                               Selected selected, Summary summary) {
  json out = json::array();
  if (!in(req.query_params("datacenters"), lab.datacenter().id)) return json_response(200, out);
  for (const auto& object : objects) {
    if (selected(object)) out.push_back(summary(object));
  }
  return json_response(200, out);
}

}  // namespace

ServerResponse VcenterFront::Impl::list_vms(const ServerRequest& req) {
  const auto vms = req.query_params("vms");
  const auto names = req.query_params("names");
  const auto folders = req.query_params("folders");
  const auto datacenters = req.query_params("datacenters");
  const auto hosts = req.query_params("hosts");
  const auto clusters = req.query_params("clusters");
  const auto pools = req.query_params("resource_pools");
  const auto power_states = req.query_params("power_states");
  for (const auto& state : power_states) {
    if (state != "POWERED_ON" && state != "POWERED_OFF" && state != "SUSPENDED") {
      return invalid_argument(fmt::format("Invalid value '{}' for power_states.", state));
    }
  }
  if (!in(datacenters, lab.datacenter().id)) return json_response(200, json::array());
  json out = json::array();
  std::size_t matched = 0;
  const auto limit = static_cast<std::size_t>(config().list_limit);
  auto consider = [&](const model::Vm& vm) {
    if (!visible(vm)) return true;
    if (!in(vms, vm.id) || !in(names, vm.name) || !in(folders, vm.folder_id) || !in(hosts, vm.host_id) ||
        !in(clusters, vm.cluster_id) || !in(pools, vm.resource_pool_id) ||
        !in(power_states, model::to_string(vm.power))) {
      return true;
    }
    if (++matched > limit) return false;
    out.push_back(json{{"vm", vm.id},
                       {"name", vm.name},
                       {"power_state", model::to_string(vm.power)},
                       {"cpu_count", vm.cpu_count},
                       {"memory_size_MiB", vm.memory_mb}});
    return true;
  };
  // Lists filtered by id or name (what clients poll with) look those VMs up instead of scanning every VM
  // of the lab: with 10,000 VMs a scan per request would make the front's capacity fall with the lab's
  // size.
  if (!vms.empty() || !names.empty()) {
    std::set<std::string_view> seen;
    std::vector<const model::Vm*> candidates;
    if (!vms.empty()) {
      for (const auto& id : vms) {
        const model::Vm* vm = lab.find_vm(id);
        if (vm && vm->id == id && seen.insert(vm->id).second) candidates.push_back(vm);
      }
    } else {
      for (const auto& name : names) {
        const model::Vm* vm = lab.find_vm_by_name(name);
        if (vm && seen.insert(vm->id).second) candidates.push_back(vm);
      }
    }
    // The order of a full scan (creation order: ids are vm-<n>).
    std::sort(candidates.begin(), candidates.end(), [](const model::Vm* a, const model::Vm* b) {
      return a->id.size() != b->id.size() ? a->id.size() < b->id.size() : a->id < b->id;
    });
    for (const model::Vm* vm : candidates) {
      if (!consider(*vm)) break;
    }
  } else {
    lab.for_each_vm(consider);
  }
  if (matched > limit) {
    return api_error(500, "UNABLE_TO_ALLOCATE_RESOURCE", "com.vmware.api.vcenter.vm.list.limit_exceeded",
                     fmt::format("Too many virtual machines. Add more filter criteria to reduce the number "
                                 "(the limit is {}).",
                                 limit),
                     {std::to_string(limit)});
  }
  return json_response(200, out);
}

json VcenterFront::Impl::vm_info(const model::Vm& vm) const {
  const model::GuestProfile* profile = lab.find_profile(vm.profile);
  const double disk_gb = profile ? profile->disk_gb : 40;
  const model::Datastore* ds = lab.find_datastore(vm.datastore_id);
  const std::string ds_name = ds ? ds->spec.name : "datastore";
  json disks{{"2000", json{{"label", "Hard disk 1"},
                           {"type", "SCSI"},
                           {"scsi", json{{"bus", 0}, {"unit", 0}}},
                           {"backing",
                            json{{"type", "VMDK_FILE"},
                                 {"vmdk_file", fmt::format("[{}] {}/{}.vmdk", ds_name, vm.name, vm.name)}}},
                           {"capacity", static_cast<std::int64_t>(disk_gb * 1024 * 1024 * 1024)}}}};
  json nics{
      {"4000",
       json{{"label", "Network adapter 1"},
            {"type", "VMXNET3"},
            {"upt_compatibility_enabled", true},
            {"mac_type", "GENERATED"},
            {"mac_address", mac_for(vm.id)},
            {"pci_slot_number", 192},
            {"wake_on_lan_enabled", false},
            {"backing",
             json{{"type", "STANDARD_PORTGROUP"}, {"network", "network-1"}, {"network_name", "VM Network"}}},
            {"state", vm.power == model::PowerState::powered_on ? "CONNECTED" : "NOT_CONNECTED"},
            {"start_connected", true},
            {"allow_guest_control", true}}}};
  json scsi{{"1000", json{{"label", "SCSI controller 0"},
                          {"type", "PVSCSI"},
                          {"scsi", json{{"bus", 0}, {"unit", 7}}},
                          {"pci_slot_number", 160},
                          {"sharing", "NONE"}}}};
  return json{
      {"guest_OS", vm.guest_os},
      {"name", vm.name},
      {"identity", json{{"name", vm.name},
                        {"bios_uuid", fmt::format("4210{:028x}", std::hash<std::string>{}(vm.id))},
                        {"instance_uuid", fmt::format("5010{:028x}", std::hash<std::string>{}(vm.name))}}},
      {"power_state", model::to_string(vm.power)},
      {"instant_clone_frozen", false},
      {"hardware", json{{"version", "VMX_19"}, {"upgrade_policy", "NEVER"}, {"upgrade_status", "NONE"}}},
      {"boot", json{{"type", "EFI"},
                    {"efi_legacy_boot", false},
                    {"delay", 0},
                    {"retry", false},
                    {"retry_delay", 10000},
                    {"enter_setup_mode", false}}},
      {"boot_devices", json::array()},
      {"cpu", json{{"count", vm.cpu_count},
                   {"cores_per_socket", 1},
                   {"hot_add_enabled", false},
                   {"hot_remove_enabled", false}}},
      {"memory", json{{"size_MiB", vm.memory_mb}, {"hot_add_enabled", false}}},
      {"disks", disks},
      {"nics", nics},
      {"cdroms", json::object()},
      {"floppies", json::object()},
      {"parallel_ports", json::object()},
      {"serial_ports", json::object()},
      {"sata_adapters", json::object()},
      {"scsi_adapters", scsi}};
}

ServerResponse VcenterFront::Impl::list_hosts(const ServerRequest& req) {
  const auto ids = req.query_params("hosts");
  const auto names = req.query_params("names");
  const auto folders = req.query_params("folders");
  const auto clusters = req.query_params("clusters");
  const auto states = req.query_params("connection_states");
  const auto standalone = req.query_param("standalone");
  return datacenter_list(
      lab, req, lab.hosts(),
      [&](const model::Host& h) {
        if (h.spec.inventory != "vcenter") return false;
        if (!in(ids, h.id) || !in(names, h.spec.name) || !in(folders, lab.datacenter().host_folder_id) ||
            !in(clusters, h.cluster_id) || !in(states, h.connection_state)) {
          return false;
        }
        return !(standalone && (*standalone == "true") != h.cluster_id.empty());
      },
      [](const model::Host& h) {
        return json{{"host", h.id},
                    {"name", h.spec.name},
                    {"connection_state", h.connection_state},
                    {"power_state", h.power_state}};
      });
}

ServerResponse VcenterFront::Impl::list_datastores(const ServerRequest& req) {
  const auto ids = req.query_params("datastores");
  const auto names = req.query_params("names");
  const auto types = req.query_params("types");
  const auto folders = req.query_params("folders");
  return datacenter_list(
      lab, req, lab.datastores(),
      [&](const model::Datastore& d) {
        return in(ids, d.id) && in(names, d.spec.name) && in(types, "VMFS") &&
               in(folders, lab.datacenter().datastore_folder_id);
      },
      [](const model::Datastore& d) {
        const double gib = 1024.0 * 1024 * 1024;
        return json{
            {"datastore", d.id},
            {"name", d.spec.name},
            {"type", "VMFS"},
            {"free_space", static_cast<std::int64_t>(std::max(0.0, d.spec.capacity_gb - d.used_gb) * gib)},
            {"capacity", static_cast<std::int64_t>(d.spec.capacity_gb * gib)}};
      });
}

ServerResponse VcenterFront::Impl::list_clusters(const ServerRequest& req) {
  const auto ids = req.query_params("clusters");
  const auto names = req.query_params("names");
  const auto folders = req.query_params("folders");
  return datacenter_list(
      lab, req, lab.clusters(),
      [&](const model::Cluster& c) {
        return in(ids, c.id) && in(names, c.name) && in(folders, lab.datacenter().host_folder_id);
      },
      [](const model::Cluster& c) {
        return json{{"cluster", c.id}, {"name", c.name}, {"ha_enabled", true}, {"drs_enabled", true}};
      });
}

std::string VcenterFront::Impl::parent_folder_of(const model::Folder& f) const {
  // Extra VM folders live in the datacenter's "vm" folder; the datacenter's own folders have the
  // datacenter (not a folder) as parent; the root "Datacenters" folder has none.
  if (f.type == "VIRTUAL_MACHINE" && f.id != lab.datacenter().vm_folder_id)
    return lab.datacenter().vm_folder_id;
  return {};
}

ServerResponse VcenterFront::Impl::list_folders(const ServerRequest& req) {
  const auto ids = req.query_params("folders");
  const auto names = req.query_params("names");
  const auto type = req.query_param("type");
  const auto parents = req.query_params("parent_folders");
  const auto datacenters = req.query_params("datacenters");
  if (type && *type != "DATACENTER" && *type != "DATASTORE" && *type != "HOST" && *type != "NETWORK" &&
      *type != "VIRTUAL_MACHINE") {
    return invalid_argument(fmt::format("Invalid value '{}' for type.", *type));
  }
  json out = json::array();
  for (const auto& f : lab.folders()) {
    if (!in(ids, f.id) || !in(names, f.name) || (type && *type != f.type)) continue;
    if (!parents.empty() && !in(parents, parent_folder_of(f))) continue;
    if (!datacenters.empty() && (f.type == "DATACENTER" || !in(datacenters, lab.datacenter().id))) continue;
    out.push_back(json{{"folder", f.id}, {"name", f.name}, {"type", f.type}});
  }
  return json_response(200, out);
}

ServerResponse VcenterFront::Impl::list_resource_pools(const ServerRequest& req) {
  const auto ids = req.query_params("resource_pools");
  const auto names = req.query_params("names");
  const auto parents = req.query_params("parent_resource_pools");
  const auto hosts = req.query_params("hosts");
  const auto clusters = req.query_params("clusters");
  return datacenter_list(
      lab, req, lab.resource_pools(),
      [&](const model::ResourcePool& p) {
        if (!in(ids, p.id) || !in(names, p.name) || !in(clusters, p.cluster_id)) return false;
        if (!parents.empty()) {
          std::string parent;
          if (p.name != "Resources") {
            for (const auto& c : lab.clusters()) {
              if (c.id == p.cluster_id) parent = c.resource_pool_id;
            }
          }
          if (!in(parents, parent)) return false;
        }
        if (!hosts.empty()) {
          bool on_host = false;
          for (const auto& h : lab.hosts()) {
            if (in(hosts, h.id) && !h.cluster_id.empty() && h.cluster_id == p.cluster_id) on_host = true;
          }
          if (!on_host) return false;
        }
        return true;
      },
      [](const model::ResourcePool& p) {
        return json{{"resource_pool", p.id}, {"name", p.name}};
      });
}

ServerResponse VcenterFront::Impl::list_datacenters(const ServerRequest& req) {
  const auto ids = req.query_params("datacenters");
  const auto names = req.query_params("names");
  json out = json::array();
  const auto& dc = lab.datacenter();
  if (in(ids, dc.id) && in(names, dc.name)) out.push_back(json{{"datacenter", dc.id}, {"name", dc.name}});
  return json_response(200, out);
}

}  // namespace bootstorm::sim::vcenter
