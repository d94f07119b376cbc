// virt-api's start, stop and restart subresources: the request body (dryRun, gracePeriod), the conflicts per
// run strategy worded as virt-api words them, and the change each makes — spec.runStrategy (or spec.running)
// patched like getRunningPatch, or a start/stop request to the VirtualMachine controller.
#include "simulator/kube/detail/vm_subresources.hpp"

#include <optional>
#include <string>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/api_conventions.hpp"
#include "simulator/kube/kube_front_impl.hpp"

namespace bootstorm::sim::kube {

using json = nlohmann::json;

VmSubresources::VmSubresources(ObjectStore& store, ObjectPublisher& publisher, VmController& vms)
    : store_(store), publisher_(publisher), vms_(vms) {}

http::ServerResponse VmSubresources::handle(const Route& route, const http::ServerRequest& request) {
  const std::string& ns = route.ns;
  const std::string& name = route.name;
  const std::string& action = route.subresource;
  json body = json::object();
  if (!request.body.empty()) {
    body = json::parse(request.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      return error_response(bad_request("Can not unmarshal Request body to struct, error: invalid JSON"));
    }
  }
  bool dry_run = body.contains("dryRun") && body["dryRun"].is_array() && !body["dryRun"].empty();
  auto vm = store_.get(Kind::virtual_machines, ns, name);
  if (!vm) {
    return error_response(
        status_error(404, "NotFound", "virtualmachine.kubevirt.io \"" + name + "\" not found",
                     {{"name", name}, {"group", "kubevirt.io"}, {"kind", "virtualmachine"}}));
  }
  if (!vms_.tracks(ns, name)) return error_response(server_fault(500));
  auto vmi = store_.get(Kind::virtual_machine_instances, ns, name);
  std::string phase = vmi ? string_field(vmi->object, {"status", "phase"}) : "";
  bool final = final_phase(phase);
  std::string strategy = run_strategy_of(vm->object);
  bool uses_running = field(vm->object, {"spec", "runStrategy"}).is_null() &&
                      field(vm->object, {"spec", "running"}).is_boolean();

  // Patches spec.runStrategy (or the deprecated spec.running) like virt-api's getRunningPatch.
  auto set_running = [&](bool running) {
    auto before = store_.get(Kind::virtual_machines, ns, name);
    auto after = publisher_.modify(Kind::virtual_machines, ns, name, [&](json& object) {
      if (uses_running) {
        object["spec"]["running"] = running;
      } else {
        object["spec"]["runStrategy"] = running ? "Always" : "Halted";
      }
      object["metadata"]["generation"] = object["metadata"].value("generation", 1) + 1;
    });
    if (after) publisher_.after_update(Kind::virtual_machines, before, after);
  };

  if (action == "start") {
    if (vmi && !final && phase != "Unknown" && !phase.empty()) {
      return error_response(kubevirt_conflict("virtualmachine", name, "VM is already running"));
    }
    if (strategy == "Always" || strategy == "Once") {
      return error_response(
          kubevirt_conflict("virtualmachine", name, strategy + " does not support manual start requests"));
    }
    if (strategy == "RerunOnFailure" && vmi && phase == "Failed") {
      return error_response(kubevirt_conflict(
          "virtualmachine", name, "RerunOnFailure does not support starting VM from failed state"));
    }
    if (!dry_run) {
      if (strategy == "Halted") {
        set_running(true);
      } else {
        vms_.request_start(ns, name);
      }
    }
  } else if (action == "stop") {
    bool has_vmi = vmi != nullptr;
    std::optional<long long> grace;
    if (body.contains("gracePeriod") && body["gracePeriod"].is_number_integer())
      grace = body["gracePeriod"].get<long long>();
    if (strategy == "Halted") {
      if (!has_vmi || final)
        return error_response(kubevirt_conflict("virtualmachine", name, "VM is not running"));
      const json& old_grace = field(vmi->object, {"spec", "terminationGracePeriodSeconds"});
      if (!grace || (old_grace.is_number_integer() && *grace >= old_grace.get<long long>())) {
        return error_response(kubevirt_conflict(
            "virtualmachine", name, "Halted only supports manual stop requests with a shorter graceperiod"));
      }
      if (!dry_run) {
        vms_.request_stop(ns, name);
      }
    } else if (strategy == "RerunOnFailure" || strategy == "Manual") {
      if (!has_vmi || final)
        return error_response(kubevirt_conflict("virtualmachine", name, "VM is not running"));
      if (!dry_run) {
        vms_.request_stop(ns, name);
      }
    } else if (!dry_run) {
      set_running(false);
    }
  } else {  // restart
    if (strategy == "Halted" || strategy == "Once") {
      return error_response(kubevirt_conflict(
          "virtualmachine", name, "RunStategy " + strategy + " does not support manual restart requests"));
    }
    if (!vmi) return error_response(kubevirt_conflict("virtualmachine", name, "VM is not running: Halted"));
    if (!dry_run) {
      vms_.request_restart(ns, name, !final);
    }
  }
  http::ServerResponse response;
  response.status = 202;
  return response;
}

}  // namespace bootstorm::sim::kube
