// The lab's vim25 provisioning tasks: CreateSnapshot / RemoveSnapshot, CloneVM (a full copy, or a linked
// clone: a child disk of a snapshot, diskMoveType createNewChildDiskBacking), InstantClone (a running
// child of a running VM), and ReconfigVM's extraConfig. Clones are priced by the model's physics
// (simulator/model/cloning.cpp); a linked clone's boot reads go to its shared base disk.
#include <fmt/format.h>

#include <algorithm>

#include "common/rfc3339.hpp"
#include "common/xml_text.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/xml_writer.hpp"
#include "simulator/vcenter/detail/sdk_faults.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

using http::ServerResponse;
namespace vim25 = vsphere::vim25;

namespace {

// How long the lab takes to take a snapshot (a disk-only snapshot is a metadata operation).
constexpr double kSnapshotSeconds = 0.5;

SdkFaultInfo invalid_argument(std::string message, std::string_view property) {
  return {"InvalidArgument", std::move(message),
          "<invalidProperty>" + escape_xml(property) + "</invalidProperty>"};
}

SdkTaskResult vm_result(const std::string& vm_id) {
  return {"ManagedObjectReference", R"( type="VirtualMachine")", escape_xml(vm_id)};
}

// OptionValue elements (extraConfig, an instant clone's config) as key -> value.
std::vector<std::pair<std::string, std::string>> option_values(const vim25::XmlNode& parent,
                                                               std::string_view element) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& o : parent.children(element))
    out.emplace_back(o.child_text("key").value_or(""), o.child_text("value").value_or(""));
  return out;
}

}  // namespace

// ---- snapshots ----

std::vector<const SdkSnapshot*> VcenterFront::Impl::sdk_snapshots_of(const std::string& vm_id) const {
  std::vector<const SdkSnapshot*> chain;
  for (const auto& [id, snapshot] : sdk_snapshots)
    if (snapshot.vm_id == vm_id) chain.push_back(&snapshot);
  std::sort(chain.begin(), chain.end(),
            [](const SdkSnapshot* a, const SdkSnapshot* b) { return a->number < b->number; });
  return chain;
}

std::string VcenterFront::Impl::sdk_snapshot_tree(const std::vector<const SdkSnapshot*>& chain,
                                                  std::size_t from) const {
  if (from >= chain.size()) return {};
  const SdkSnapshot& s = *chain[from];
  std::string out = moref_element("snapshot", {"VirtualMachineSnapshot", s.id}) +
                    moref_element("vm", {"VirtualMachine", s.vm_id}) + "<name>" + escape_xml(s.name) +
                    "</name><description>" + escape_xml(s.description) + "</description>" +
                    fmt::format("<id>{}</id>", s.number) + "<createTime>" +
                    format_rfc3339(from_unix_seconds(s.created)) + "</createTime><state>" + s.power_state +
                    "</state><quiesced>" + (s.quiesced ? "true" : "false") + "</quiesced>";
  if (from + 1 < chain.size())
    out += "<childSnapshotList>" + sdk_snapshot_tree(chain, from + 1) + "</childSnapshotList>";
  return out;
}

ServerResponse VcenterFront::Impl::sdk_create_snapshot(const vim25::XmlNode& call, const vim25::MoRef& vm,
                                                       const std::string& user) {
  const std::string name = call.child_text("name").value_or("");
  if (name.empty()) return sdk_fault(invalid_argument("A snapshot needs a name.", "name"));
  SdkSnapshot snapshot;
  snapshot.vm_id = vm.value;
  snapshot.name = name;
  snapshot.description = call.child_text("description").value_or("");
  snapshot.memory = call.child_text("memory").value_or("false") == "true";
  snapshot.quiesced = call.child_text("quiesce").value_or("false") == "true";
  std::weak_ptr<Impl> weak = weak_from_this();
  auto body = [weak, snapshot](std::function<void(SdkTaskOutcome)> done) mutable {
    auto impl = weak.lock();
    if (!impl) return;
    impl->lab.schedule(kSnapshotSeconds, [weak, snapshot, done]() mutable {
      auto later = weak.lock();
      if (!later) return;
      const model::Vm* current = later->lab.find_vm(snapshot.vm_id);
      if (!current) return done({{}, object_not_found_fault({"VirtualMachine", snapshot.vm_id})});
      snapshot.number = static_cast<int>(++later->sdk_snapshot_counter);
      snapshot.id = "snapshot-" + std::to_string(snapshot.number);
      snapshot.created = later->lab.now();
      snapshot.power_state = current->power == model::PowerState::powered_on ? "poweredOn" : "poweredOff";
      const std::string id = snapshot.id;
      later->sdk_snapshots.emplace(id, std::move(snapshot));
      later->sdk_changed(current->id);
      done({{"ManagedObjectReference", R"( type="VirtualMachineSnapshot")", id}, std::nullopt});
    });
  };
  const model::Vm* target = lab.find_vm(vm.value);
  return task_response("CreateSnapshot_Task",
                       sdk_start_task("VirtualMachine.createSnapshot", vm, target->name, user,
                                      target->host_id, config().power_cost, std::move(body)));
}

ServerResponse VcenterFront::Impl::sdk_remove_snapshot(const vim25::XmlNode& call,
                                                       const vim25::MoRef& snapshot,
                                                       const std::string& user) {
  auto it = sdk_snapshots.find(snapshot.value);
  if (snapshot.type != "VirtualMachineSnapshot" || it == sdk_snapshots.end())
    return sdk_object_not_found(snapshot);
  const bool remove_children = call.child_text("removeChildren").value_or("false") == "true";
  const std::string vm_id = it->second.vm_id;
  const model::Vm* vm = lab.find_vm(vm_id);
  std::weak_ptr<Impl> weak = weak_from_this();
  auto body = [weak, snapshot, remove_children](std::function<void(SdkTaskOutcome)> done) {
    auto impl = weak.lock();
    if (!impl) return;
    auto found = impl->sdk_snapshots.find(snapshot.value);
    if (found == impl->sdk_snapshots.end()) return done({{}, object_not_found_fault(snapshot)});
    const std::string owner = found->second.vm_id;
    const int number = found->second.number;
    // Without removeChildren the later snapshots stay, now children of the removed one's parent.
    std::erase_if(impl->sdk_snapshots, [&](const auto& entry) {
      const SdkSnapshot& s = entry.second;
      return s.vm_id == owner && (s.number == number || (remove_children && s.number > number));
    });
    impl->sdk_changed(owner);
    done({});
  };
  return task_response(
      "RemoveSnapshot_Task",
      sdk_start_task("vm.Snapshot.remove", {"VirtualMachine", vm_id}, vm ? vm->name : vm_id, user,
                     vm ? vm->host_id : std::string(), config().power_cost, std::move(body)));
}

// ---- clones ----

ServerResponse VcenterFront::Impl::sdk_clone(const vim25::XmlNode& call, const vim25::MoRef& vm,
                                             const std::string& user) {
  const model::Vm* source = lab.find_vm(vm.value);
  const vim25::MoRef folder = vim25::decode_moref(call.child("folder"));
  const model::Folder* target_folder = lab.find_folder(folder.value);
  if (folder.type != "Folder" || !target_folder || target_folder->id != folder.value ||
      target_folder->type != "VIRTUAL_MACHINE") {
    return sdk_object_not_found(folder);
  }
  const std::string name = call.child_text("name").value_or("");
  if (name.empty() || name.size() > 80)
    return sdk_fault(invalid_argument("A clone needs a name of 1 to 80 characters.", "name"));
  const vim25::XmlNode spec = call.child("spec");
  const vim25::XmlNode location = spec.child("location");
  if (spec.child_text("template").value_or("false") == "true")
    return sdk_fault("NotSupported", "The simulated lab does not clone to templates.");

  model::CloneRequest request;
  request.kind = model::CloneKind::full;
  request.source_vm_id = source->id;
  request.name = name;
  request.folder_id = target_folder->id;
  request.created_by_front = "vcenter";
  request.power_on = spec.child_text("powerOn").value_or("false") == "true";
  if (auto fault = sdk_relocation(location, request)) return std::move(*fault);

  const std::string disk_move = location.child_text("diskMoveType").value_or("");
  const vim25::XmlNode snapshot_node = spec.child("snapshot");
  if (snapshot_node) {
    const vim25::MoRef snapshot = vim25::decode_moref(snapshot_node);
    auto it = sdk_snapshots.find(snapshot.value);
    if (it == sdk_snapshots.end()) return sdk_object_not_found(snapshot);
    if (it->second.vm_id != source->id) {
      return sdk_fault(invalid_argument(
          fmt::format("Snapshot '{}' is not a snapshot of '{}'.", snapshot.value, source->name), "snapshot"));
    }
  }
  if (disk_move == "createNewChildDiskBacking") {
    if (!snapshot_node) {
      return sdk_fault(invalid_argument(
          "A linked clone (diskMoveType createNewChildDiskBacking) needs spec.snapshot.", "diskMoveType"));
    }
    request.kind = model::CloneKind::linked;
  } else if (!disk_move.empty() && disk_move != "moveAllDiskBackingsAndDisallowSharing" &&
             disk_move != "moveAllDiskBackingsAndAllowSharing" &&
             disk_move != "moveAllDiskBackingsAndConsolidate" && disk_move != "moveChildMostDiskBacking") {
    return sdk_fault(invalid_argument(fmt::format("Unknown diskMoveType '{}'.", disk_move), "diskMoveType"));
  }
  for (const auto& [key, value] : option_values(spec.child("config"), "extraConfig"))
    request.guestinfo[key] = value;

  const std::string cost_host = request.host_id.empty() ? source->host_id : request.host_id;
  return task_response("CloneVM_Task",
                       sdk_start_task("VirtualMachine.clone", vm, source->name, user, cost_host,
                                      config().clone_cost, sdk_clone_body(std::move(request))));
}

ServerResponse VcenterFront::Impl::sdk_instant_clone(const vim25::XmlNode& call, const vim25::MoRef& vm,
                                                     const std::string& user) {
  const model::Vm* source = lab.find_vm(vm.value);
  const vim25::XmlNode spec = call.child("spec");
  const std::string name = spec.child_text("name").value_or("");
  if (name.empty() || name.size() > 80)
    return sdk_fault(invalid_argument("An instant clone needs a name of 1 to 80 characters.", "name"));
  model::CloneRequest request;
  request.kind = model::CloneKind::instant;
  request.source_vm_id = source->id;
  request.name = name;
  request.folder_id = source->folder_id;
  request.created_by_front = "vcenter";
  if (auto fault = sdk_relocation(spec.child("location"), request)) return std::move(*fault);
  // An instant clone runs on its source's host: the child shares the parent's memory.
  request.host_id = source->host_id;
  request.cluster_id.clear();
  for (const auto& [key, value] : option_values(spec, "config")) request.guestinfo[key] = value;
  return task_response("InstantClone_Task",
                       sdk_start_task("VirtualMachine.instantClone", vm, source->name, user, source->host_id,
                                      config().clone_cost, sdk_clone_body(std::move(request))));
}

std::optional<ServerResponse> VcenterFront::Impl::sdk_relocation(const vim25::XmlNode& location,
                                                                 model::CloneRequest& request) const {
  if (const vim25::XmlNode node = location.child("datastore")) {
    const vim25::MoRef ref = vim25::decode_moref(node);
    const model::Datastore* d = lab.find_datastore(ref.value);
    if (ref.type != "Datastore" || !d || d->id != ref.value) return sdk_object_not_found(ref);
    request.datastore_id = d->id;
  }
  if (const vim25::XmlNode node = location.child("pool")) {
    const vim25::MoRef ref = vim25::decode_moref(node);
    const model::ResourcePool* p = lab.find_resource_pool(ref.value);
    if (ref.type != "ResourcePool" || !p || p->id != ref.value) return sdk_object_not_found(ref);
    request.resource_pool_id = p->id;
    // A cluster's pool without a host: vCenter places the clone on one of the cluster's hosts.
    request.cluster_id = p->cluster_id;
  }
  if (const vim25::XmlNode node = location.child("host")) {
    const vim25::MoRef ref = vim25::decode_moref(node);
    const model::Host* h = lab.find_host(ref.value);
    if (ref.type != "HostSystem" || !h || h->id != ref.value || h->spec.inventory != "vcenter")
      return sdk_object_not_found(ref);
    request.host_id = h->id;
    request.cluster_id.clear();
  }
  return std::nullopt;
}

VcenterFront::Impl::TaskBody VcenterFront::Impl::sdk_clone_body(model::CloneRequest request) {
  std::weak_ptr<Impl> weak = weak_from_this();
  return [weak, request](std::function<void(SdkTaskOutcome)> done) {
    auto impl = weak.lock();
    if (!impl) return;
    const vim25::MoRef source{"VirtualMachine", request.source_vm_id};
    const model::Vm* vm = impl->lab.find_vm(request.source_vm_id);
    if (!vm) return done({{}, object_not_found_fault(source)});
    if (request.kind == model::CloneKind::instant && vm->power != model::PowerState::powered_on) {
      return done({{},
                   SdkFaultInfo{
                       "InvalidPowerState",
                       fmt::format("Instant clone needs a powered-on source; '{}' is powered off.", vm->name),
                       "<requestedState>poweredOn</requestedState><existingState>poweredOff</"
                       "existingState>"}});
    }
    const std::string folder = request.folder_id;
    const std::string name = request.name;
    auto finished = [done, folder, name, source](Expected<std::string> cloned) {
      if (cloned) return done({vm_result(*cloned), std::nullopt});
      const Error& e = cloned.error();
      if (e.kind == ErrorKind::conflict) {
        return done({{},
                     SdkFaultInfo{"DuplicateName", fmt::format("The name '{}' already exists.", name),
                                  "<name>" + escape_xml(name) + "</name>" +
                                      moref_element("object", {"Folder", folder})}});
      }
      if (e.kind == ErrorKind::not_found) return done({{}, object_not_found_fault(source)});
      done({{}, SdkFaultInfo{"SystemError", e.message, "<reason>" + escape_xml(e.message) + "</reason>"}});
    };
    if (auto started = impl->lab.clone_vm(request, finished); !started) finished(started.error());
  };
}

// ---- reconfiguration ----

ServerResponse VcenterFront::Impl::sdk_reconfigure(const vim25::XmlNode& call, const vim25::MoRef& vm,
                                                   const std::string& user) {
  const vim25::XmlNode spec = call.child("spec");
  for (vim25::XmlNode field = spec.first_child(); field; field = field.next_sibling()) {
    if (field.name() != "extraConfig" && field.name() != "annotation") {
      return sdk_fault("NotSupported", fmt::format("The simulated lab reconfigures only extraConfig and the "
                                                   "annotation, not '{}'.",
                                                   field.name()));
    }
  }
  auto values = option_values(spec, "extraConfig");
  std::weak_ptr<Impl> weak = weak_from_this();
  auto body = [weak, vm, values](std::function<void(SdkTaskOutcome)> done) {
    auto impl = weak.lock();
    if (!impl) return;
    const bool found = impl->lab.modify_vm(vm.value, [&](model::Vm& target) {
      // An empty value removes the key, as on vSphere.
      for (const auto& [key, value] : values) {
        if (value.empty()) {
          target.guestinfo.erase(key);
        } else {
          target.guestinfo[key] = value;
        }
      }
    });
    if (!found) return done({{}, object_not_found_fault(vm)});
    done({});
  };
  const model::Vm* target = lab.find_vm(vm.value);
  return task_response("ReconfigVM_Task",
                       sdk_start_task("VirtualMachine.reconfigure", vm, target->name, user, target->host_id,
                                      config().power_cost, std::move(body)));
}

void VcenterFront::Impl::sdk_forget_vm(const std::string& vm_id) {
  std::erase_if(sdk_snapshots, [&](const auto& entry) { return entry.second.vm_id == vm_id; });
  sdk_field_values.erase(vm_id);
}

}  // namespace bootstorm::sim::vcenter
