// The lab's vim25 PropertyCollector reads and views: CreateContainerView / CreateListView / DestroyView, and
// RetrievePropertiesEx / ContinueRetrievePropertiesEx over the lab's inventory (the root folder, the
// datacenter, its folders, clusters, hosts, datastores, resource pools and vCenter VMs). An object set is its
// objects themselves (unless skipped) and, through a TraversalSpec with path "view", the objects of a view.
// Property values carry their vim25 xsi:type (`all: true`: the properties this front knows). An unknown
// property is the InvalidProperty fault; a traversal path this front does not follow is the InvalidArgument
// fault naming it.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/rfc3339.hpp"
#include "common/xml_text.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/xml_writer.hpp"
#include "simulator/vcenter/detail/sdk_faults.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

using http::ServerRequest;
using http::ServerResponse;
namespace vim25 = vsphere::vim25;

namespace {

// RetrievePropertiesEx results waiting for ContinueRetrievePropertiesEx, at most.
constexpr std::size_t kPagesKept = 1000;

std::string esc(std::string_view s) {
  return escape_xml(s);
}
std::string val(std::string_view xsi_type, std::string_view text) {
  return fmt::format(R"(<val xsi:type="{}">{}</val>)", xsi_type, esc(text));
}
std::string moref_val(const vim25::MoRef& ref) {
  return fmt::format(R"(<val type="{}" xsi:type="ManagedObjectReference">{}</val>)", esc(ref.type),
                     esc(ref.value));
}
std::string moref_array(const std::vector<vim25::MoRef>& refs) {
  std::string out = R"(<val xsi:type="ArrayOfManagedObjectReference">)";
  for (const auto& r : refs)
    out += fmt::format(
        R"(<ManagedObjectReference type="{}" xsi:type="ManagedObjectReference">{}</ManagedObjectReference>)",
        esc(r.type), esc(r.value));
  return out + "</val>";
}

// What `all: true` returns: the properties this front knows of a type.
std::vector<std::string> known_properties(const std::string& type) {
  if (type == "VirtualMachine")
    return {"name",
            "parent",
            "resourcePool",
            "datastore",
            "runtime.powerState",
            "runtime.host",
            "runtime.bootTime",
            "guest.toolsRunningStatus",
            "guest.toolsVersionStatus2",
            "config.tools.toolsVersion",
            "summary.storage.committed",
            "guest.ipAddress",
            "guest.net",
            "snapshot",
            "customValue"};
  if (type == "Task") return {"info"};
  if (type == "ServiceInstance") return {"content"};
  if (type == "ContainerView" || type == "ListView") return {"view"};
  if (type == "VirtualMachineSnapshot") return {"vm", "childSnapshot"};
  if (type == "CustomFieldsManager") return {"field"};
  if (type == "PerformanceManager") return {"description", "historicalInterval", "perfCounter"};
  if (type == "HostSystem")
    return {"name",
            "parent",
            "runtime.connectionState",
            "runtime.powerState",
            "runtime.inMaintenanceMode",
            "hardware.memorySize",
            "vm"};
  if (type == "Datastore")
    return {"name", "parent", "summary.capacity", "summary.freeSpace", "summary.accessible", "summary.url"};
  if (type == "Datacenter")
    return {"name", "parent", "vmFolder", "hostFolder", "datastoreFolder", "networkFolder"};
  if (type == "ClusterComputeResource") return {"name", "parent", "host", "resourcePool"};
  if (type == "Folder") return {"name", "childEntity"};
  return {"name"};
}

}  // namespace

// ---- the inventory as managed objects ----

std::string VcenterFront::Impl::sdk_type_of(std::string_view id) const {
  if (id == kRootFolderId) return "Folder";
  if (id.starts_with("task-")) return sdk_tasks.count(std::string(id)) ? "Task" : "";
  if (id.starts_with("snapshot-"))
    return sdk_snapshots.count(std::string(id)) ? "VirtualMachineSnapshot" : "";
  if (id == "CustomFieldsManager") return "CustomFieldsManager";
  if (id == "ServiceInstance") return "ServiceInstance";
  if (id == "PerfMgr") return "PerformanceManager";
  if (auto view = sdk_views.find(std::string(id)); view != sdk_views.end())
    return view->second.list ? "ListView" : "ContainerView";
  if (id == lab.datacenter().id) return "Datacenter";
  if (lab.find_folder(id)) return "Folder";
  if (lab.find_cluster(id)) return "ClusterComputeResource";
  if (const model::Host* h = lab.find_host(id); h && h->id == id && h->spec.inventory == "vcenter")
    return "HostSystem";
  if (lab.find_datastore(id)) return "Datastore";
  if (lab.find_resource_pool(id)) return "ResourcePool";
  if (const model::Vm* vm = lab.find_vm(id); vm && visible(*vm)) return "VirtualMachine";
  return {};
}

std::vector<vim25::MoRef> VcenterFront::Impl::sdk_children(const vim25::MoRef& obj) const {
  std::vector<vim25::MoRef> out;
  const model::Datacenter& dc = lab.datacenter();
  if (obj.value == kRootFolderId) return {{"Datacenter", dc.id}};
  if (obj.type == "Datacenter") {
    for (const auto& f : {dc.vm_folder_id, dc.host_folder_id, dc.datastore_folder_id, dc.network_folder_id})
      if (!f.empty()) out.push_back({"Folder", f});
    return out;
  }
  if (obj.type == "Folder") {
    if (obj.value == dc.host_folder_id) {
      for (const auto& c : lab.clusters()) out.push_back({"ClusterComputeResource", c.id});
      for (const auto& h : lab.hosts())
        if (h.cluster_id.empty() && h.spec.inventory == "vcenter") out.push_back({"HostSystem", h.id});
    } else if (obj.value == dc.datastore_folder_id) {
      for (const auto& d : lab.datastores()) out.push_back({"Datastore", d.id});
    } else if (obj.value == dc.vm_folder_id) {
      for (const auto& f : lab.folders())
        if (f.type == "VIRTUAL_MACHINE" && f.id != dc.vm_folder_id) out.push_back({"Folder", f.id});
    }
    lab.for_each_vm([&](const model::Vm& vm) {
      if (visible(vm) && vm.folder_id == obj.value) out.push_back({"VirtualMachine", vm.id});
      return true;
    });
    return out;
  }
  if (obj.type == "ClusterComputeResource") {
    const model::Cluster* c = lab.find_cluster(obj.value);
    for (const auto& h : lab.hosts())
      if (h.cluster_id == obj.value && h.spec.inventory == "vcenter") out.push_back({"HostSystem", h.id});
    if (c) out.push_back({"ResourcePool", c->resource_pool_id});
    return out;
  }
  if (obj.type == "HostSystem" || obj.type == "ResourcePool") {
    lab.for_each_vm([&](const model::Vm& vm) {
      if (visible(vm) && (obj.type == "HostSystem" ? vm.host_id : vm.resource_pool_id) == obj.value)
        out.push_back({"VirtualMachine", vm.id});
      return true;
    });
  }
  return out;
}

std::vector<vim25::MoRef> VcenterFront::Impl::sdk_contents(const vim25::MoRef& container,
                                                           const std::vector<std::string>& types,
                                                           bool recursive) const {
  std::vector<vim25::MoRef> out, frontier = sdk_children(container);
  std::unordered_set<std::string> seen;
  while (!frontier.empty()) {
    std::vector<vim25::MoRef> next;
    for (const auto& obj : frontier) {
      if (!seen.insert(obj.value).second) continue;
      if (types.empty() || std::find(types.begin(), types.end(), obj.type) != types.end()) out.push_back(obj);
      if (recursive) {
        for (auto& c : sdk_children(obj)) next.push_back(std::move(c));
      }
    }
    frontier = std::move(next);
  }
  return out;
}

namespace {

// A VirtualMachine's property (the paths bootstorm, pyVmomi's samples and govc read); nullopt: not served.
std::optional<std::string> vm_property(const VcenterFront::Impl& front, const model::Vm& vm,
                                       std::string_view path) {
  if (path == "name" || path == "config.name" || path == "summary.config.name")
    return val("xsd:string", vm.name);
  if (path == "parent") return moref_val({"Folder", vm.folder_id});
  if (path == "resourcePool") return moref_val({"ResourcePool", vm.resource_pool_id});
  if (path == "datastore") return moref_array({{"Datastore", vm.datastore_id}});
  if (path == "config.template" || path == "summary.config.template") return val("xsd:boolean", "false");
  if (path == "config.hardware.numCPU" || path == "summary.config.numCpu")
    return val("xsd:int", std::to_string(vm.cpu_count));
  if (path == "config.hardware.memoryMB" || path == "summary.config.memorySizeMB")
    return val("xsd:int", std::to_string(vm.memory_mb));
  if (path == "runtime.powerState") {
    const char* state = vm.power == model::PowerState::powered_on  ? "poweredOn"
                        : vm.power == model::PowerState::suspended ? "suspended"
                                                                   : "poweredOff";
    return val("VirtualMachinePowerState", state);
  }
  if (path == "runtime.host") return moref_val({"HostSystem", vm.host_id});
  if (path == "runtime.bootTime") {
    // When the VM last powered on; unset while it is off.
    const auto& running = vm.milestone(model::Milestone::running);
    if (vm.power != model::PowerState::powered_on || !running) return std::string();
    return val("xsd:dateTime", format_rfc3339(from_unix_seconds(*running)));
  }
  if (path == "runtime.connectionState") return val("VirtualMachineConnectionState", "connected");
  if (path == "guest.toolsRunningStatus")
    return val("xsd:string",
               vm.tools == model::ToolsState::running ? "guestToolsRunning" : "guestToolsNotRunning");
  // Installed Tools of the image: open-vm-tools 12.3.5 (build number 12357) and current, or none.
  if (path == "guest.toolsVersionStatus2")
    return val("xsd:string", vm.tools_installed ? "guestToolsCurrent" : "guestToolsNotInstalled");
  if (path == "config.tools.toolsVersion") return val("xsd:int", vm.tools_installed ? "12357" : "0");
  // The space its files take: the image's used disk, or a linked or instant clone's delta disk.
  if (path == "summary.storage.committed") {
    const model::GuestProfile* profile = front.lab.find_profile(vm.profile);
    const double mb = !profile                       ? 0.0
                      : vm.base_datastore_id.empty() ? profile->disk_used_gb * 1000
                                                     : profile->linked_delta_mb;
    return val("xsd:long", std::to_string(static_cast<std::int64_t>(mb * 1024 * 1024)));
  }
  if (path == "guest.ipAddress") {
    if (vm.ip.empty()) return std::string();  // unset: the property is listed without a value
    return val("xsd:string", vm.ip);
  }
  if (path == "guest.net") {
    std::string out = R"(<val xsi:type="ArrayOfGuestNicInfo">)";
    if (vm.power == model::PowerState::powered_on) {
      out += fmt::format(
          R"(<GuestNicInfo xsi:type="GuestNicInfo"><network>VM Network</network>{}<connected>true</connected>)"
          R"(<deviceConfigId>4000</deviceConfigId></GuestNicInfo>)",
          vm.ip.empty() ? std::string() : "<ipAddress>" + esc(vm.ip) + "</ipAddress>");
    }
    return out + "</val>";
  }
  if (path == "customValue" || path == "summary.customValue") return front.sdk_custom_values(vm.id);
  if (path == "config.extraConfig") {
    std::string out = R"(<val xsi:type="ArrayOfOptionValue">)";
    for (const auto& [key, value] : vm.guestinfo) {
      out += R"(<OptionValue xsi:type="OptionValue"><key>)" + esc(key) +
             R"(</key><value xsi:type="xsd:string">)" + esc(value) + "</value></OptionValue>";
    }
    return out + "</val>";
  }
  if (path == "availableField") return front.sdk_field_defs("VirtualMachine");
  if (path == "snapshot") {
    const auto chain = front.sdk_snapshots_of(vm.id);
    if (chain.empty()) return std::string();  // no snapshot: unset
    return fmt::format(
        R"(<val xsi:type="VirtualMachineSnapshotInfo"><currentSnapshot type="VirtualMachineSnapshot">{}</currentSnapshot>)"
        R"(<rootSnapshotList>{}</rootSnapshotList></val>)",
        esc(chain.back()->id), front.sdk_snapshot_tree(chain, 0));
  }
  if (path == "rootSnapshot") {
    const auto chain = front.sdk_snapshots_of(vm.id);
    if (chain.empty()) return moref_array({});
    return moref_array({{"VirtualMachineSnapshot", chain.front()->id}});
  }
  return std::nullopt;
}

// ---- data objects composed from the paths beneath them ----

// vim25 answers a property that holds a data object (`runtime`, `guest`, `summary.storage`) with the whole
// object; the front serves values by path, so it composes such an object from the paths it serves beneath it.
// Fields in the order of the vim25 XSD's sequences; a nested data object is a shape of its own.
struct DataObjectShape {
  std::string_view owner, path, type;
  std::vector<std::string_view> fields;
};

const std::vector<DataObjectShape>& data_object_shapes() {
  static const std::vector<DataObjectShape> shapes{
      {"VirtualMachine",
       "runtime",
       "VirtualMachineRuntimeInfo",
       {"host", "connectionState", "powerState", "bootTime"}},
      {"VirtualMachine",
       "guest",
       "GuestInfo",
       {"toolsVersionStatus2", "toolsRunningStatus", "ipAddress", "net"}},
      {"VirtualMachine",
       "config",
       "VirtualMachineConfigInfo",
       {"name", "template", "hardware", "tools", "extraConfig"}},
      {"VirtualMachine", "config.hardware", "VirtualHardware", {"numCPU", "memoryMB"}},
      {"VirtualMachine", "config.tools", "ToolsConfigInfo", {"toolsVersion"}},
      {"VirtualMachine", "summary", "VirtualMachineSummary", {"config", "storage", "customValue"}},
      {"VirtualMachine",
       "summary.config",
       "VirtualMachineConfigSummary",
       {"name", "template", "memorySizeMB", "numCpu"}},
      {"VirtualMachine", "summary.storage", "VirtualMachineStorageSummary", {"committed"}},
      {"HostSystem", "runtime", "HostRuntimeInfo", {"connectionState", "powerState", "inMaintenanceMode"}},
      {"HostSystem", "hardware", "HostHardwareInfo", {"memorySize"}},
      {"HostSystem", "summary", "HostListSummary", {"hardware", "config"}},
      {"HostSystem", "summary.hardware", "HostHardwareSummary", {"cpuModel", "memorySize", "numCpuCores"}},
      {"HostSystem", "summary.config", "HostConfigSummary", {"product"}},
      {"HostSystem", "summary.config.product", "AboutInfo", {"fullName"}},
      {"Datastore", "summary", "DatastoreSummary", {"capacity", "freeSpace", "accessible"}},
  };
  return shapes;
}

// The element `<tag...>` that starts at `from` of `xml` (escaped text, elements only at its top): where it
// ends.
std::size_t element_end(std::string_view xml, std::size_t from) {
  int depth = 0;
  for (std::size_t at = from; at < xml.size();) {
    const std::size_t close = xml.find('>', at);
    if (close == std::string_view::npos) return xml.size();
    if (xml[at + 1] == '/') {
      --depth;
    } else if (xml[close - 1] != '/') {
      ++depth;
    }
    at = close + 1;
    if (depth == 0) return at;
    at = xml.find('<', at);
    if (at == std::string_view::npos) return xml.size();
  }
  return xml.size();
}

// `<name...>` for the element `<old...>` that `element` is (its opening and closing tags renamed).
std::string renamed(std::string_view element, std::string_view name) {
  const std::size_t name_end = element.find_first_of(" />", 1);
  std::string out = "<" + std::string(name) + std::string(element.substr(name_end));
  if (!element.ends_with("/>")) {
    out.resize(out.size() - (element.size() - element.rfind("</")));
    out += "</" + std::string(name) + ">";
  }
  return out;
}

// A property's `<val ...>` as the field `name` of a data object: an array's items each become one `<name>`
// element (vim25 repeats an array field's element), any other value is the element renamed.
std::string as_field(std::string_view value, std::string_view name) {
  const std::size_t open_end = value.find('>');
  const bool array = value.substr(0, open_end).find(R"(xsi:type="ArrayOf)") != std::string_view::npos;
  if (!array || value.ends_with("/>")) return array ? std::string() : renamed(value, name);
  const std::string_view items =
      value.substr(open_end + 1, value.size() - open_end - 1 - std::string_view("</val>").size());
  std::string out;
  for (std::size_t at = items.find('<'); at != std::string_view::npos && at < items.size();) {
    const std::size_t end = element_end(items, at);
    out += renamed(items.substr(at, end - at), name);
    at = items.find('<', end);
  }
  return out;
}

}  // namespace

std::optional<std::string> VcenterFront::Impl::sdk_data_object(const vim25::MoRef& obj,
                                                               std::string_view path) const {
  for (const auto& shape : data_object_shapes()) {
    if (shape.owner != obj.type || shape.path != path) continue;
    std::string fields;
    bool known = false;  // a gone or hidden object serves none of its paths
    for (const auto field : shape.fields) {
      const auto value = sdk_property(obj, std::string(path) + "." + std::string(field));
      known = known || value.has_value();
      if (value && !value->empty()) fields += as_field(*value, field);
    }
    if (!known) return std::nullopt;
    return fmt::format(R"(<val xsi:type="{}">{}</val>)", shape.type, fields);
  }
  return std::nullopt;
}

std::optional<std::string> VcenterFront::Impl::sdk_property(const vim25::MoRef& obj,
                                                            std::string_view path) const {
  // A path served as such first: the composition is only for what no path serves (not on every read).
  if (auto value = sdk_path_property(obj, path)) return value;
  return sdk_data_object(obj, path);
}

std::optional<std::string> VcenterFront::Impl::sdk_path_property(const vim25::MoRef& obj,
                                                                 std::string_view path) const {
  const model::Datacenter& dc = lab.datacenter();
  if (auto perf = sdk_perf_property(obj, path)) return perf;  // sdk_performance.cpp
  if (obj.type == "Task") {
    auto task = sdk_tasks.find(obj.value);
    if (task == sdk_tasks.end()) return std::nullopt;
    return sdk_task_property(task->second, path);
  }
  if (obj.type == "VirtualMachineSnapshot") {
    auto snapshot = sdk_snapshots.find(obj.value);
    if (snapshot == sdk_snapshots.end()) return std::nullopt;
    if (path == "vm") return moref_val({"VirtualMachine", snapshot->second.vm_id});
    if (path == "childSnapshot") {
      const auto chain = sdk_snapshots_of(snapshot->second.vm_id);
      std::vector<vim25::MoRef> children;
      for (std::size_t i = 0; i + 1 < chain.size(); ++i)
        if (chain[i]->id == obj.value) children.push_back({"VirtualMachineSnapshot", chain[i + 1]->id});
      return moref_array(children);
    }
    return std::nullopt;
  }
  if (obj.type == "ContainerView" || obj.type == "ListView") {
    auto view = sdk_views.find(obj.value);
    if (view == sdk_views.end()) return std::nullopt;
    const SdkView& v = view->second;
    if (path == "view") {
      std::vector<vim25::MoRef> present;
      for (auto& o : v.list ? v.objects : sdk_contents(v.container, v.types, v.recursive))
        if (!sdk_type_of(o.value).empty()) present.push_back(std::move(o));
      return moref_array(present);
    }
    if (path == "container" && !v.list) return moref_val(v.container);
    return std::nullopt;
  }
  if (obj.type == "ServiceInstance") {
    if (path == "content") return sdk_service_content("val", "ServiceContent");
    return std::nullopt;
  }
  if (obj.type == "CustomFieldsManager") {
    if (path == "field") return sdk_field_defs("");
    return std::nullopt;
  }
  if (obj.value == kRootFolderId) {
    if (path == "name") return val("xsd:string", "Datacenters");
    if (path == "childEntity") return moref_array(sdk_children(obj));
    return std::nullopt;
  }
  if (obj.type == "Datacenter") {
    if (path == "name") return val("xsd:string", dc.name);
    if (path == "parent") return moref_val({"Folder", std::string(kRootFolderId)});
    if (path == "vmFolder") return moref_val({"Folder", dc.vm_folder_id});
    if (path == "hostFolder") return moref_val({"Folder", dc.host_folder_id});
    if (path == "datastoreFolder") return moref_val({"Folder", dc.datastore_folder_id});
    if (path == "networkFolder") return moref_val({"Folder", dc.network_folder_id});
    if (path == "datastore")
      return moref_array(sdk_contents({"Folder", dc.datastore_folder_id}, {"Datastore"}, false));
    return std::nullopt;
  }
  if (obj.type == "Folder") {
    const model::Folder* f = lab.find_folder(obj.value);
    if (path == "name") return val("xsd:string", f ? f->name : obj.value);
    if (path == "childEntity") return moref_array(sdk_children(obj));
    if (path == "parent") return moref_val({"Datacenter", dc.id});
    return std::nullopt;
  }
  if (obj.type == "ClusterComputeResource") {
    const model::Cluster* c = lab.find_cluster(obj.value);
    if (!c) return std::nullopt;
    if (path == "name") return val("xsd:string", c->name);
    if (path == "parent") return moref_val({"Folder", dc.host_folder_id});
    if (path == "host") return moref_array(sdk_contents(obj, {"HostSystem"}, false));
    if (path == "resourcePool") return moref_val({"ResourcePool", c->resource_pool_id});
    return std::nullopt;
  }
  if (obj.type == "ResourcePool") {
    const model::ResourcePool* p = lab.find_resource_pool(obj.value);
    if (!p) return std::nullopt;
    if (path == "name") return val("xsd:string", p->name);
    if (path == "parent" && !p->cluster_id.empty())
      return moref_val({"ClusterComputeResource", p->cluster_id});
    return std::nullopt;
  }
  if (obj.type == "HostSystem") {
    const model::Host* h = lab.find_host(obj.value);
    if (!h) return std::nullopt;
    if (path == "name") return val("xsd:string", h->spec.name);
    if (path == "parent")
      return h->cluster_id.empty() ? moref_val({"Folder", dc.host_folder_id})
                                   : moref_val({"ClusterComputeResource", h->cluster_id});
    if (path == "runtime.connectionState")
      return val("HostSystemConnectionState",
                 h->connection_state == "CONNECTED" ? "connected" : "disconnected");
    if (path == "runtime.powerState")
      return val("HostSystemPowerState", h->power_state == "POWERED_ON" ? "poweredOn" : "poweredOff");
    if (path == "runtime.inMaintenanceMode")
      return val("xsd:boolean", h->spec.maintenance ? "true" : "false");
    if (path == "hardware.memorySize" || path == "summary.hardware.memorySize")
      return val("xsd:long",
                 std::to_string(static_cast<std::int64_t>(h->spec.memory_gb * 1024.0 * 1024 * 1024)));
    if (path == "summary.hardware.numCpuCores") return val("xsd:short", std::to_string(h->spec.cores));
    if (path == "summary.hardware.cpuModel") return val("xsd:string", h->spec.cpu_model);
    if (path == "summary.config.product.fullName") return val("xsd:string", h->spec.esxi);
    if (path == "vm") return moref_array(sdk_children(obj));
    return std::nullopt;
  }
  if (obj.type == "Datastore") {
    const model::Datastore* d = lab.find_datastore(obj.value);
    if (!d) return std::nullopt;
    const double gb = 1024.0 * 1024 * 1024;
    if (path == "name" || path == "summary.name") return val("xsd:string", d->spec.name);
    if (path == "parent") return moref_val({"Folder", dc.datastore_folder_id});
    if (path == "summary.capacity")
      return val("xsd:long", std::to_string(static_cast<std::int64_t>(d->spec.capacity_gb * gb)));
    if (path == "summary.freeSpace")
      return val(
          "xsd:long",
          std::to_string(static_cast<std::int64_t>(std::max(0.0, d->spec.capacity_gb - d->used_gb) * gb)));
    if (path == "summary.accessible") return val("xsd:boolean", "true");
    return std::nullopt;
  }
  if (obj.type == "VirtualMachine") {
    const model::Vm* vm = lab.find_vm(obj.value);
    if (!vm || !visible(*vm)) return std::nullopt;
    return vm_property(*this, *vm, path);
  }
  return std::nullopt;
}

// ---- the calls ----

ServerResponse VcenterFront::Impl::sdk_create_view(const vim25::XmlNode& call,
                                                   const std::string& session_key) {
  SdkView view;
  view.list = call.name() == "CreateListView";
  if (view.list) {
    for (const auto& o : call.children("obj")) view.objects.push_back(vim25::decode_moref(o));
  } else {
    view.container = vim25::decode_moref(call.child("container"));
    if (sdk_type_of(view.container.value).empty()) return sdk_object_not_found(view.container);
    for (const auto& t : call.children("type")) view.types.push_back(t.text());
    view.recursive = call.child_text("recursive").value_or("false") == "true";
  }
  const std::string id = fmt::format("session[{}]{}-{}", session_key.substr(0, 8),
                                     view.list ? "listview" : "view", ++sdk_view_counter);
  const bool list = view.list;
  sdk_views[id] = std::move(view);
  vim25::XmlWriter w(std::string(call.name()) + "Response");
  w.moref("returnval", {list ? "ListView" : "ContainerView", id});
  return sdk_ok(w.finish());
}

ServerResponse VcenterFront::Impl::sdk_destroy_view(const vim25::MoRef& self) {
  if (sdk_views.erase(self.value) == 0) return sdk_object_not_found(self);
  return sdk_ok(vim25::XmlWriter("DestroyViewResponse").finish());
}

std::vector<std::string> VcenterFront::Impl::sdk_paths_of(const vim25::PropertySpec& prop_spec) {
  return prop_spec.all ? known_properties(prop_spec.type) : prop_spec.paths;
}

std::optional<ServerResponse> VcenterFront::Impl::sdk_spec_objects(const vim25::PropertyFilterSpec& spec,
                                                                   std::vector<vim25::MoRef>& out) const {
  std::unordered_set<std::string> listed;
  auto add = [&](const vim25::MoRef& obj) {
    if (listed.insert(obj.value).second) out.push_back(obj);
  };
  for (const auto& os : spec.object_set) {
    if (!os.skip) add(os.obj);
    for (const auto& sel : os.select_set) {
      if (sel.path != "view") {
        return sdk_fault(
            "InvalidArgument",
            "The simulated lab's PropertyCollector follows only the path 'view' of a ContainerView "
            "or ListView, not '" +
                sel.path + "'.",
            "<invalidProperty>selectSet</invalidProperty>");
      }
      auto it = sdk_views.find(os.obj.value);
      if (it == sdk_views.end()) return sdk_object_not_found(os.obj);
      const SdkView& view = it->second;
      for (const auto& o :
           view.list ? view.objects : sdk_contents(view.container, view.types, view.recursive))
        add(o);
    }
  }
  return std::nullopt;
}

ServerResponse VcenterFront::Impl::sdk_retrieve(const vim25::XmlNode& call, bool paged) {
  // The objects and properties of every spec, in order; an object listed twice is reported once.
  struct Content {
    vim25::MoRef obj;
    std::vector<std::pair<std::string, std::string>> props;  // path, <val> ("" : no value)
  };
  std::vector<Content> contents;
  for (const auto& spec_node : call.children("specSet")) {
    const vim25::PropertyFilterSpec spec = vim25::decode_filter_spec(spec_node);
    std::vector<vim25::MoRef> objects;
    if (auto fault = sdk_spec_objects(spec, objects)) return std::move(*fault);
    for (const auto& obj : objects) {
      const std::string type = sdk_type_of(obj.value);
      if (type.empty()) continue;
      for (const auto& ps : spec.prop_set) {
        if (ps.type != type) continue;
        auto existing = std::find_if(contents.begin(), contents.end(),
                                     [&](const Content& c) { return c.obj.value == obj.value; });
        if (existing == contents.end()) {
          contents.push_back({{type, obj.value}, {}});
          existing = contents.end() - 1;
        }
        for (const auto& path : sdk_paths_of(ps)) {
          auto value = sdk_property({type, obj.value}, path);
          if (!value) return sdk_invalid_property(path, type);
          if (std::none_of(existing->props.begin(), existing->props.end(),
                           [&](const auto& p) { return p.first == path; }))
            existing->props.emplace_back(path, *value);
        }
      }
    }
  }
  // RetrieveProperties (the call before RetrievePropertiesEx, which pyVmomi's property accessors still use):
  // every object at once, each a <returnval>.
  if (!paged) {
    std::string out;
    for (const auto& c : contents) {
      out += "<returnval>" + moref_element("obj", c.obj);
      for (const auto& [path, value] : c.props)
        out += "<propSet><name>" + esc(path) + "</name>" + value + "</propSet>";
      out += "</returnval>";
    }
    return sdk_ok(response_element("RetrievePropertiesResponse", out));
  }
  // Pages of maxObjects (default: all); the rest waits under a token for ContinueRetrievePropertiesEx.
  std::size_t page = contents.size();
  if (auto max = call.child("options").child_text("maxObjects"); max && !max->empty()) {
    char* end = nullptr;
    const long n = std::strtol(max->c_str(), &end, 10);
    if (end == max->c_str() || *end != '\0') {
      return sdk_fault("InvalidArgument", "maxObjects '" + *max + "' is not a number.",
                       "<invalidProperty>maxObjects</invalidProperty>");
    }
    page = static_cast<std::size_t>(std::max(1L, n));
  }
  std::vector<std::string> rendered;
  for (const auto& c : contents) {
    std::string o = "<objects>" + moref_element("obj", c.obj);
    for (const auto& [path, value] : c.props) {
      o += "<propSet><name>" + esc(path) + "</name>" + value + "</propSet>";
    }
    rendered.push_back(o + "</objects>");
  }
  return sdk_result_page("RetrievePropertiesExResponse", std::move(rendered), page);
}

// Fetch is not in the WSDL, but vCenter serves it on every managed object and pyVmomi 8.0.1 and later send it
// for each property accessor (vm.name, view.view). The answer is the property's value as <returnval>,
// typed as RetrieveProperties would type it, and no <returnval> for a property without a value.
ServerResponse VcenterFront::Impl::sdk_fetch(const vim25::XmlNode& call, const vim25::MoRef& self) const {
  const std::string type = sdk_type_of(self.value);
  if (type.empty()) return sdk_object_not_found(self);
  const std::string path = call.child_text("prop").value_or("");
  const auto value = sdk_property({type, self.value}, path);
  if (!value) return sdk_invalid_property(path, type);
  return sdk_ok(
      response_element("FetchResponse", value->empty() ? std::string() : renamed(*value, "returnval")));
}

ServerResponse VcenterFront::Impl::sdk_result_page(const std::string& response,
                                                   std::vector<std::string> objects, std::size_t page) {
  std::string body;
  if (!objects.empty()) {
    body += "<returnval>";
    if (objects.size() > page) {
      const std::string token = std::to_string(++sdk_token_counter);
      sdk_pages[token] = {std::make_move_iterator(objects.begin() + static_cast<std::ptrdiff_t>(page)),
                          std::make_move_iterator(objects.end())};
      sdk_page_sizes[token] = page;
      // A client that never continues leaves its pages here: the oldest go beyond a cap.
      sdk_page_order.push_back(token);
      while (sdk_page_order.size() > kPagesKept) {
        sdk_pages.erase(sdk_page_order.front());
        sdk_page_sizes.erase(sdk_page_order.front());
        sdk_page_order.pop_front();
      }
      objects.resize(page);
      body += "<token>" + token + "</token>";
    }
    for (const auto& o : objects) body += o;
    body += "</returnval>";
  }
  return sdk_ok(response_element(response, body));
}

ServerResponse VcenterFront::Impl::sdk_continue(const vim25::XmlNode& call) {
  const std::string token = call.child_text("token").value_or("");
  auto it = sdk_pages.find(token);
  if (it == sdk_pages.end()) {
    return sdk_fault("InvalidArgument", "Unknown or already used token '" + token + "'.",
                     "<invalidProperty>token</invalidProperty>");
  }
  auto objects = std::move(it->second);
  const std::size_t page = sdk_page_sizes[token];
  sdk_pages.erase(it);
  sdk_page_sizes.erase(token);
  return sdk_result_page("ContinueRetrievePropertiesExResponse", std::move(objects), page);
}

}  // namespace bootstorm::sim::vcenter
