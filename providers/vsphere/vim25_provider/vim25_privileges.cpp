// Vim25Provider::check_privileges: the privileges the run will use, asked of vCenter's AuthorizationManager
// (HasPrivilegeOnEntities) before anything is created, so that a role without one ends the run at once with
// every missing privilege named, instead of a NoPermission fault forty minutes into provisioning.
//
// The clones do not exist yet: what they will need (power on and off, delete, the run's custom attribute) is
// asked of the folder they are created in, from which they inherit their permissions.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"

namespace bootstorm::vsphere::vim25 {

namespace asio = boost::asio;

std::vector<Vim25Provider::NeededPrivilege> Vim25Provider::needed_privileges() const {
  std::vector<NeededPrivilege> needed;
  auto need = [&](const MoRef& entity, std::string what, std::string privilege) {
    if (!entity.empty()) needed.push_back({entity, std::move(what), std::move(privilege)});
  };
  const std::string golden = "golden VM " + settings_.vm;
  const std::string folder = "the clones' folder " + vm_folder_.value + " (they inherit its permissions)";
  need(golden_, golden, "VirtualMachine.Provisioning.Clone");
  if (settings_.clone == "instant") {
    need(golden_, golden, "VirtualMachine.Inventory.CreateFromExisting");
    need(vm_folder_, folder, "VirtualMachine.Interact.PowerOn");
  } else {
    need(vm_folder_, folder, "VirtualMachine.Inventory.CreateFromExisting");
    // The clone spec writes the run id into the new VM's extraConfig.
    need(vm_folder_, folder, "VirtualMachine.Config.AdvancedConfig");
  }
  if (settings_.clone == "linked" && settings_.snapshot.empty()) {
    // The run's own snapshot, taken at the first clone and removed at the end.
    need(golden_, golden, "VirtualMachine.State.CreateSnapshot");
    need(golden_, golden, "VirtualMachine.State.RemoveSnapshot");
  }
  need(datastore_, "datastore " + (settings_.datastore.empty() ? datastore_.value : settings_.datastore),
       "Datastore.AllocateSpace");
  for (const auto& [name, host] : hosts_) {
    if (!host.pool.empty())
      need({"ResourcePool", host.pool}, "the resource pool of host " + name, "Resource.AssignVMToPool");
  }
  for (const char* privilege : {"VirtualMachine.Interact.PowerOn", "VirtualMachine.Interact.PowerOff",
                                "VirtualMachine.Inventory.Delete", "Global.SetCustomField"}) {
    need(vm_folder_, folder, privilege);
  }
  if (field_key_ < 0) {
    // The run's custom attribute is defined once per vCenter.
    need(session_.service_content().root_folder, "the vCenter root folder", "Global.ManageCustomFields");
  }
  return needed;
}

asio::awaitable<Expected<Vim25Provider::PrivilegeAnswer>> Vim25Provider::check_privileges() {
  const std::string& session_id = session_.session_key();
  const MoRef& manager = session_.service_content().authorization_manager;
  PrivilegeAnswer answered;
  if (session_id.empty() || manager.empty()) {
    answered.why_not =
        "vCenter " + config_.endpoint + " did not name the session or its AuthorizationManager";
    co_return answered;
  }
  auto key = co_await find_field_key();
  if (!key) co_return key.error();
  const std::vector<NeededPrivilege> needed = needed_privileges();
  // One call: every entity with every privilege asked of any (the answer says which are held where).
  std::vector<MoRef> entities;
  std::vector<std::string> privileges;
  for (const auto& n : needed) {
    if (std::find(entities.begin(), entities.end(), n.entity) == entities.end()) entities.push_back(n.entity);
    if (std::find(privileges.begin(), privileges.end(), n.privilege) == privileges.end())
      privileges.push_back(n.privilege);
  }
  const std::string method = "HasPrivilegeOnEntities";
  const std::string element = has_privilege_on_entities(manager, entities, session_id, privileges);
  CallOptions options;
  options.idempotent = true;
  auto reply = co_await session_.call(method, element, options);
  if (!reply) {
    if (reply.error().kind == ErrorKind::auth || reply.error().kind == ErrorKind::connect ||
        reply.error().kind == ErrorKind::tls || reply.error().kind == ErrorKind::timeout) {
      co_return reply.error();
    }
    answered.why_not = "vCenter " + config_.endpoint + " did not answer which privileges the user holds (" +
                       reply.error().what() + ")";
    co_return answered;
  }
  auto answer = decode_entity_privileges(reply->response());
  if (!answer) co_return answer.error();
  std::map<std::pair<std::string, std::string>, bool> held;  // (entity id, privilege) -> granted
  for (const auto& e : *answer)
    for (const auto& [privilege, granted] : e.granted) held[{e.entity.value, privilege}] = granted;
  std::string missing;
  std::size_t count = 0;
  bool on_folder = false;
  for (const auto& n : needed) {
    auto it = held.find({n.entity.value, n.privilege});
    if (it != held.end() && it->second) continue;
    ++count;
    missing += (missing.empty() ? "" : "; ") + n.privilege + " on " + n.what;
    on_folder = on_folder || n.entity == vm_folder_;
  }
  if (on_folder) {
    // Name the folder as the vSphere Client shows it (best effort: its id is in the message already).
    const std::vector<MoRef> folder{vm_folder_};
    const std::string type = "Folder";
    const std::vector<std::string> paths{"name"};
    auto named = co_await read(folder, type, paths);
    if (named && !named->empty() && named->front().prop("name"))
      missing += "; folder " + vm_folder_.value + " is \"" + named->front().prop("name")->text + "\"";
  }
  if (count == 0) {
    spdlog::debug("vCenter {}: user {} holds the {} privileges the run uses", config_.endpoint,
                  session_.username(), privileges.size());
    answered.asked = true;
    answered.privileges = privileges.size();
    co_return answered;
  }
  co_return make_error(
      ErrorKind::auth,
      "vCenter " + config_.endpoint + ": user " + session_.username() + " lacks " + std::to_string(count) +
          (count == 1 ? " privilege" : " privileges") + " the run needs (nothing was created): " + missing,
      std::string(count == 1 ? "add it" : "add them") +
          " to the user's role, with a permission on those objects or above them with \"Propagate to "
          "children\" (vSphere Client: Administration > Access Control > Roles), or run as a user who "
          "holds " +
          (count == 1 ? "it" : "them"));
}

}  // namespace bootstorm::vsphere::vim25
