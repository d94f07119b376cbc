// Users, roles and privileges, as vCenter checks them (simulator/README.md, "Users and privileges"): who may
// log in, whether a user holds a privilege on an object, the refusals of both APIs (REST 403, SOAP
// NoPermission naming the privilege), and AuthorizationManager.HasPrivilegeOnEntities / HasPrivilegeOnEntity.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/xml_text.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/xml_writer.hpp"
#include "simulator/vcenter/detail/sdk_faults.hpp"
#include "simulator/vcenter/detail/vapi_responses.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

namespace vim25 = vsphere::vim25;
using http::ServerResponse;

namespace {

constexpr std::string_view kDenied = "Permission to perform this operation was denied.";

// vCenter gives every role these, so that whoever holds any role can see the objects it applies to.
bool system_privilege(std::string_view privilege) {
  return privilege == "System.Anonymous" || privilege == "System.View" || privilege == "System.Read";
}

}  // namespace

bool VcenterFront::Impl::authenticate(const std::string& user, const std::string& password) const {
  if (user == config().username) return password == config().password;
  return std::any_of(config().users.begin(), config().users.end(),
                     [&](const model::VcenterUser& u) { return u.name == user && u.password == password; });
}

std::string VcenterFront::Impl::entity_id_of(const std::string& name) const {
  if (name == "/") return std::string(kRootFolderId);
  const model::Datacenter& dc = lab.datacenter();
  if (name == dc.name || name == dc.id) return dc.id;
  if (const model::Folder* f = lab.find_folder(name)) return f->id;
  if (const model::Cluster* c = lab.find_cluster(name)) return c->id;
  if (const model::Host* h = lab.find_host(name)) return h->id;
  if (const model::ResourcePool* p = lab.find_resource_pool(name)) return p->id;
  if (const model::Datastore* d = lab.find_datastore(name)) return d->id;
  if (const model::Vm* vm = lab.find_vm_by_name(name); vm && visible(*vm)) return vm->id;
  if (const model::Vm* vm = lab.find_vm(name); vm && visible(*vm)) return vm->id;
  return {};
}

std::vector<std::string> VcenterFront::Impl::permission_chain(const std::string& entity_id) const {
  const model::Datacenter& dc = lab.datacenter();
  std::vector<std::string> chain;
  auto add = [&](const std::string& id) {
    if (!id.empty() && std::find(chain.begin(), chain.end(), id) == chain.end()) chain.push_back(id);
  };
  auto add_folder = [&](const std::string& folder_id) {
    add(folder_id);
    if (const model::Folder* f = lab.find_folder(folder_id)) add(parent_folder_of(*f));
  };
  auto add_pool = [&](const std::string& pool_id) {
    add(pool_id);
    if (const model::ResourcePool* p = lab.find_resource_pool(pool_id)) add(p->cluster_id);
  };
  if (auto snapshot = sdk_snapshots.find(entity_id); snapshot != sdk_snapshots.end()) {
    // A snapshot's permissions are its VM's.
    return permission_chain(snapshot->second.vm_id);
  }
  if (const model::Vm* vm = lab.find_vm(entity_id); vm && vm->id == entity_id) {
    // A VM inherits from its folder and from its pool, host and cluster at once.
    add(vm->id);
    add_folder(vm->folder_id);
    add_pool(vm->resource_pool_id);
    add(vm->host_id);
    add(vm->cluster_id);
  } else if (const model::Host* h = lab.find_host(entity_id); h && h->id == entity_id) {
    add(h->id);
    add(h->cluster_id);
  } else if (const model::ResourcePool* p = lab.find_resource_pool(entity_id); p && p->id == entity_id) {
    add_pool(p->id);
  } else if (const model::Folder* f = lab.find_folder(entity_id); f && f->id == entity_id) {
    if (f->id == kRootFolderId) return {f->id};
    add_folder(f->id);
  } else {
    add(entity_id);  // a cluster, datastore, the datacenter, or a manager object
  }
  add(dc.id);
  add(std::string(kRootFolderId));
  return chain;
}

bool VcenterFront::Impl::granted(const std::string& user, std::string_view privilege,
                                 const std::string& entity_id) const {
  if (user == config().username) return true;
  auto u = std::find_if(config().users.begin(), config().users.end(),
                        [&](const model::VcenterUser& candidate) { return candidate.name == user; });
  if (u == config().users.end()) return false;
  auto role_has = [&](const std::string& role) {
    if (role == "Admin") return true;
    if (role == "NoAccess") return false;
    if (system_privilege(privilege)) return true;
    if (role == "ReadOnly") return false;
    for (const auto& r : config().roles) {
      if (r.name == role)
        return std::find(r.privileges.begin(), r.privileges.end(), privilege) != r.privileges.end();
    }
    return false;
  };
  // The nearest object with a permission of the user decides: a permission on an object overrides those it
  // would inherit (a NoAccess on a folder hides it from a user who is Admin above it).
  std::vector<std::string> permission_ids;  // each permission's object, resolved once
  for (const auto& p : u->permissions) permission_ids.push_back(entity_id_of(p.entity));
  const std::vector<std::string> chain = permission_chain(entity_id);
  for (std::size_t level = 0; level < chain.size(); ++level) {
    bool any = false, grants = false;
    for (std::size_t i = 0; i < u->permissions.size(); ++i) {
      const auto& p = u->permissions[i];
      if (level > 0 && !p.propagate) continue;
      if (permission_ids[i] != chain[level]) continue;
      any = true;
      grants = grants || role_has(p.role);
    }
    if (any) return grants;
  }
  return false;
}

SdkFaultInfo VcenterFront::Impl::no_permission_fault(const vim25::MoRef& entity, std::string_view privilege) {
  return {"NoPermission", std::string(kDenied),
          moref_element("object", entity) + "<privilegeId>" + escape_xml(std::string(privilege)) +
              "</privilegeId>"};
}

std::optional<ServerResponse> VcenterFront::Impl::sdk_denied(const std::string& user,
                                                             std::string_view privilege,
                                                             const vim25::MoRef& entity) {
  if (granted(user, privilege, entity.value)) return std::nullopt;
  ++stats.permission_denials;
  return sdk_fault(no_permission_fault(entity, privilege));
}

std::optional<ServerResponse> VcenterFront::Impl::rest_denied(const std::string& user,
                                                              std::string_view privilege,
                                                              const std::string& entity_id) {
  if (granted(user, privilege, entity_id)) return std::nullopt;
  ++stats.permission_denials;
  // vCenter's answer names neither the privilege nor the object; the API reference lists what each call
  // needs.
  return api_error(403, "UNAUTHORIZED", "vapi.security.authorization.invalid", std::string(kDenied));
}

std::vector<std::pair<std::string, vim25::MoRef>> VcenterFront::Impl::sdk_privileges_needed(
    const std::string& method, const vim25::XmlNode& call, const vim25::MoRef& vm) const {
  std::vector<std::pair<std::string, vim25::MoRef>> needed;
  if (method == "PowerOnVM_Task") needed.emplace_back("VirtualMachine.Interact.PowerOn", vm);
  if (method == "PowerOffVM_Task") needed.emplace_back("VirtualMachine.Interact.PowerOff", vm);
  if (method == "Destroy_Task") needed.emplace_back("VirtualMachine.Inventory.Delete", vm);
  if (method == "CreateSnapshot_Task") needed.emplace_back("VirtualMachine.State.CreateSnapshot", vm);
  if (method == "ReconfigVM_Task") needed.emplace_back("VirtualMachine.Config.AdvancedConfig", vm);
  if (method != "CloneVM_Task" && method != "InstantClone_Task") return needed;
  // Where the clone goes: what the call names, else the source's own folder, pool and datastore.
  const model::Vm* source = lab.find_vm(vm.value);
  const vim25::XmlNode spec = call.child("spec");
  const vim25::XmlNode location = spec.child("location");
  auto named = [](const vim25::XmlNode& node, const char* type, const std::string& otherwise) {
    vim25::MoRef ref = vim25::decode_moref(node);
    return ref.value.empty() ? vim25::MoRef{type, otherwise} : ref;
  };
  const vim25::MoRef folder =
      named(method == "CloneVM_Task" ? call.child("folder") : location.child("folder"), "Folder",
            source ? source->folder_id : "");
  const vim25::MoRef pool =
      named(location.child("pool"), "ResourcePool", source ? source->resource_pool_id : "");
  const vim25::MoRef datastore =
      named(location.child("datastore"), "Datastore", source ? source->datastore_id : "");
  needed.emplace_back("VirtualMachine.Provisioning.Clone", vm);
  if (method == "CloneVM_Task") {
    needed.emplace_back("VirtualMachine.Inventory.CreateFromExisting", folder);
    // A clone spec that sets the new VM's configuration (its extraConfig) needs what reconfiguring it would.
    if (spec.child("config").child("extraConfig"))
      needed.emplace_back("VirtualMachine.Config.AdvancedConfig", folder);
  } else {
    needed.emplace_back("VirtualMachine.Inventory.CreateFromExisting", vm);
    needed.emplace_back("VirtualMachine.Interact.PowerOn", folder);
  }
  if (!pool.value.empty()) needed.emplace_back("Resource.AssignVMToPool", pool);
  if (!datastore.value.empty()) needed.emplace_back("Datastore.AllocateSpace", datastore);
  return needed;
}

ServerResponse VcenterFront::Impl::sdk_has_privilege(const vim25::XmlNode& call, bool many) {
  const vim25::MoRef self = vim25::decode_moref(call.child("_this"));
  if (self.type != "AuthorizationManager") return sdk_object_not_found(self);
  // The session asked about: this front answers for the caller's own session only.
  const std::string session_id = call.child_text("sessionId").value_or("");
  auto session = sessions.find(session_id);
  if (session == sessions.end()) {
    return sdk_fault("InvalidArgument", "A specified parameter was not correct: sessionId",
                     "<invalidProperty>sessionId</invalidProperty>");
  }
  const std::string& asked_user = session->second.user;
  std::vector<std::string> privileges;
  for (const auto& node : call.children("privId")) privileges.push_back(node.text());
  std::vector<vim25::MoRef> entities;
  for (const auto& node : call.children("entity")) entities.push_back(vim25::decode_moref(node));
  if (entities.empty() || (!many && entities.size() > 1)) {
    return sdk_fault("InvalidArgument", "A specified parameter was not correct: entity",
                     "<invalidProperty>entity</invalidProperty>");
  }
  for (const auto& e : entities) {
    if (sdk_type_of(e.value).empty()) return sdk_object_not_found(e);
  }
  if (!many) {
    // HasPrivilegeOnEntity: one boolean per privilege, in order.
    std::string out;
    for (const auto& p : privileges)
      out += std::string("<returnval>") +
             (granted(asked_user, p, entities.front().value) ? "true" : "false") + "</returnval>";
    return sdk_ok(response_element("HasPrivilegeOnEntityResponse", out));
  }
  std::string out;
  for (const auto& e : entities) {
    out += "<returnval>" + moref_element("entity", e);
    for (const auto& p : privileges) {
      out += "<privAvailability><privId>" + escape_xml(p) + "</privId><isGranted>" +
             (granted(asked_user, p, e.value) ? "true" : "false") + "</isGranted></privAvailability>";
    }
    out += "</returnval>";
  }
  return sdk_ok(response_element("HasPrivilegeOnEntitiesResponse", out));
}

}  // namespace bootstorm::sim::vcenter
