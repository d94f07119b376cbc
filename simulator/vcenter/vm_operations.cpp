// Clone and power, as vCenter runs them: blocking calls (the response comes when the operation is done),
// admitted against the concurrency and per-host cost limits, with vCenter's errors for what cannot run.
#include <fmt/format.h>

#include <set>

#include "simulator/vcenter/detail/awaitable_callback.hpp"
#include "simulator/vcenter/detail/vapi_responses.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

namespace asio = boost::asio;
using http::ServerRequest;
using http::ServerResponse;

asio::awaitable<ServerResponse> VcenterFront::Impl::clone(const ServerRequest& req, bool instant) {
  const json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    co_return invalid_argument("The request body is not a JSON object.");
  const std::set<std::string> allowed = instant ? std::set<std::string>{"source",
                                                                        "name",
                                                                        "placement",
                                                                        "nics_to_update",
                                                                        "disconnect_all_nics",
                                                                        "parallel_ports_to_update",
                                                                        "serial_ports_to_update",
                                                                        "bios_uuid"}
                                                : std::set<std::string>{"source",
                                                                        "name",
                                                                        "placement",
                                                                        "disks_to_remove",
                                                                        "disks_to_update",
                                                                        "power_on",
                                                                        "guest_customization_spec"};
  for (const auto& [key, value] : body.items()) {
    if (!allowed.count(key))
      co_return invalid_argument(fmt::format("Unexpected field '{}' in the clone spec.", key));
  }
  if (!body.contains("source") || !body["source"].is_string())
    co_return invalid_argument("'source' is required.");
  if (!body.contains("name") || !body["name"].is_string() || body["name"].get<std::string>().empty()) {
    co_return invalid_argument("'name' is required.");
  }
  const std::string source_id = body["source"];
  const std::string name = body["name"];
  const model::Vm* source = lab.find_vm(source_id);
  if (!source || !visible(*source)) co_return not_found("virtual machine", source_id);
  if (lab.find_vm_by_name(name)) {
    co_return api_error(400, "ALREADY_EXISTS", "com.vmware.api.vcenter.vm.already_exists",
                        fmt::format("A virtual machine named '{}' already exists.", name), {name});
  }
  if (instant && source->power != model::PowerState::powered_on) {
    co_return api_error(
        400, "NOT_ALLOWED_IN_CURRENT_STATE", "com.vmware.api.vcenter.vm.instant_clone.source_off",
        fmt::format("Instant clone needs a powered-on source; '{}' is powered off.", source_id), {source_id});
  }
  model::CloneRequest request;
  request.kind = instant
                     ? model::CloneKind::instant
                     : (config().clone_kind == "linked" ? model::CloneKind::linked : model::CloneKind::full);
  request.source_vm_id = source_id;
  request.name = name;
  request.created_by_front = "vcenter";
  if (!instant && body.contains("power_on")) {
    if (!body["power_on"].is_boolean()) co_return invalid_argument("'power_on' must be a boolean.");
    request.power_on = body["power_on"].get<bool>();
  }
  if (body.contains("placement")) {
    const json& placement = body["placement"];
    if (!placement.is_object()) co_return invalid_argument("'placement' must be an object.");
    for (const auto& [key, value] : placement.items()) {
      if (!value.is_string())
        co_return invalid_argument(fmt::format("'placement.{}' must be a string.", key));
      const std::string id = value;
      if (key == "folder") {
        const model::Folder* f = lab.find_folder(id);
        if (!f || f->id != id || f->type != "VIRTUAL_MACHINE") co_return not_found("folder", id);
        request.folder_id = id;
      } else if (key == "resource_pool") {
        const model::ResourcePool* p = lab.find_resource_pool(id);
        if (!p || p->id != id) co_return not_found("resource pool", id);
        request.resource_pool_id = id;
      } else if (key == "host" && !instant) {
        const model::Host* h = lab.find_host(id);
        if (!h || h->id != id || h->spec.inventory != "vcenter") co_return not_found("host", id);
        request.host_id = id;
      } else if (key == "cluster" && !instant) {
        const model::Cluster* c = lab.find_cluster(id);
        if (!c || c->id != id) co_return not_found("cluster", id);
        request.cluster_id = id;
      } else if (key == "datastore") {
        const model::Datastore* d = lab.find_datastore(id);
        if (!d || d->id != id) co_return not_found("datastore", id);
        request.datastore_id = id;
      } else {
        co_return invalid_argument(fmt::format("Unexpected field 'placement.{}'.", key));
      }
    }
  }
  // The privileges the call needs (the API reference's list), on where the clone goes: what the placement
  // names, else the source's own folder, pool and datastore.
  const std::string user = session_of(req) ? session_of(req)->user : std::string();
  const std::string folder = request.folder_id.empty() ? source->folder_id : request.folder_id;
  const std::string pool =
      request.resource_pool_id.empty() ? source->resource_pool_id : request.resource_pool_id;
  const std::string datastore = request.datastore_id.empty() ? source->datastore_id : request.datastore_id;
  std::vector<std::pair<const char*, std::string>> needed{{"VirtualMachine.Provisioning.Clone", source_id}};
  if (instant) {
    needed.emplace_back("VirtualMachine.Inventory.CreateFromExisting", source_id);
    needed.emplace_back("VirtualMachine.Interact.PowerOn", folder);
  } else {
    needed.emplace_back("VirtualMachine.Inventory.CreateFromExisting", folder);
  }
  needed.emplace_back("Resource.AssignVMToPool", pool);
  needed.emplace_back("Datastore.AllocateSpace", datastore);
  for (const auto& [privilege, entity] : needed) {
    if (entity.empty()) continue;
    if (auto denied = rest_denied(user, privilege, entity)) co_return *denied;
  }
  // Admission on the destination host (the source's when placement names none, or any host of a cluster).
  const std::string cost_host = !request.host_id.empty()     ? request.host_id
                                : request.cluster_id.empty() ? source->host_id
                                                             : std::string();
  auto slot = co_await admit(cost_host, config().clone_cost);
  auto cloned = callback_state<Expected<std::string>>(executor);
  if (auto started = lab.clone_vm(request, cloned->callback()); !started) cloned->callback()(started.error());
  auto result = co_await wait_for(cloned);
  if (!result) {
    const Error& e = result.error();
    if (e.kind == ErrorKind::conflict) {
      co_return api_error(400, "ALREADY_EXISTS", "com.vmware.api.vcenter.vm.already_exists", e.message,
                          {name});
    }
    if (e.kind == ErrorKind::not_found) co_return not_found("object", source_id);
    co_return api_error(500, "ERROR", "com.vmware.api.vcenter.vm.clone.failed", e.message);
  }
  co_return json_response(200, json(*result));
}

asio::awaitable<ServerResponse> VcenterFront::Impl::power(const std::string& vm_id,
                                                          const std::string& action) {
  const model::Vm* vm = lab.find_vm(vm_id);
  if (action != "start" && action != "stop" && action != "reset" && action != "suspend") {
    co_return invalid_argument(fmt::format("Unknown power action '{}'.", action));
  }
  if (action == "suspend") {
    co_return api_error(400, "UNSUPPORTED", "com.vmware.bootstorm.lab.unsupported",
                        "Suspend is not simulated by the lab.");
  }
  const bool on = vm->power == model::PowerState::powered_on;
  if (action == "start" && on) {
    co_return api_error(400, "ALREADY_IN_DESIRED_STATE", "com.vmware.api.vcenter.vm.power.already_powered_on",
                        fmt::format("Virtual machine '{}' is already powered on.", vm_id), {vm_id});
  }
  if (action == "stop" && !on) {
    co_return api_error(400, "ALREADY_IN_DESIRED_STATE",
                        "com.vmware.api.vcenter.vm.power.already_powered_off",
                        fmt::format("Virtual machine '{}' is already powered off.", vm_id), {vm_id});
  }
  if (action == "reset" && !on) {
    co_return api_error(400, "NOT_ALLOWED_IN_CURRENT_STATE", "com.vmware.api.vcenter.vm.power.powered_off",
                        fmt::format("Virtual machine '{}' is powered off.", vm_id), {vm_id});
  }
  auto slot = co_await admit(vm->host_id, config().power_cost);
  if (action == "start") {
    // Asked once admitted: the power-ons ahead of it in the queue hold their memory by now.
    const model::Vm* admitted = lab.find_vm(vm_id);
    const model::Host* host = admitted ? lab.find_host(admitted->host_id) : nullptr;
    if (host && !lab.admit_memory(vm_id)) {
      co_return api_error(
          500, "UNABLE_TO_ALLOCATE_RESOURCE", "com.vmware.api.vcenter.vm.power.insufficient_memory",
          fmt::format("Host '{}' has not enough memory to power on '{}'.", host->spec.name, vm_id));
    }
  }
  if (action == "stop" || action == "reset") {
    auto stopped = callback_state<Expected<void>>(executor);
    if (auto started = lab.power_off(vm_id, stopped->callback()); !started)
      stopped->callback()(started.error());
    auto off = co_await wait_for(stopped);
    if (!off) co_return busy(vm_id, off.error());
    if (action == "stop") co_return no_content();
  }
  begin_customization(vm_id);
  auto on_state = callback_state<Expected<void>>(executor);
  if (auto started = lab.power_on(vm_id, on_state->callback()); !started)
    on_state->callback()(started.error());
  auto running = co_await wait_for(on_state);
  if (!running) co_return busy(vm_id, running.error());
  co_return no_content();
}

ServerResponse VcenterFront::Impl::busy(const std::string& vm_id, const Error& e) {
  if (e.kind == ErrorKind::not_found) return not_found("virtual machine", vm_id);
  return api_error(500, "RESOURCE_BUSY", "com.vmware.api.vcenter.vm.power.busy", e.message, {vm_id});
}

}  // namespace bootstorm::sim::vcenter
