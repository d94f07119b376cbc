// The lab's vim25 tasks: every *_Task method answers a Task reference at once; the task is queued, admitted
// against the same operation limits as the REST API's blocking calls (operation_admission.cpp), runs, and
// ends in success with a result or in error with a fault. Its TaskInfo changes are pushed to the
// PropertyCollector's filters. Here: the task machinery, the power operations (PowerOnVM, PowerOnMultiVM,
// PowerOffVM) and Destroy.
#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "common/rfc3339.hpp"
#include "common/xml_text.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/xml_writer.hpp"
#include "simulator/vcenter/detail/awaitable_callback.hpp"
#include "simulator/vcenter/detail/sdk_faults.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

namespace asio = boost::asio;
using http::ServerResponse;
namespace vim25 = vsphere::vim25;

namespace {

// Finished tasks kept for their TaskInfo (vCenter keeps recent tasks too); the oldest go first.
constexpr std::size_t kTasksKept = 50000;

std::string timestamp(double unix_seconds) {
  return format_rfc3339(from_unix_seconds(unix_seconds));
}

const char* power_state_name(model::PowerState state) {
  switch (state) {
    case model::PowerState::powered_on:
      return "poweredOn";
    case model::PowerState::suspended:
      return "suspended";
    case model::PowerState::powered_off:
      break;
  }
  return "poweredOff";
}

SdkFaultInfo invalid_power_state(const model::Vm& vm, std::string_view requested) {
  return {"InvalidPowerState",
          fmt::format("The attempted operation cannot be performed in the current state ({}).",
                      vm.power == model::PowerState::powered_on ? "Powered on" : "Powered off"),
          fmt::format("<requestedState>{}</requestedState><existingState>{}</existingState>", requested,
                      power_state_name(vm.power))};
}

// A model error that ended a task, as the fault vCenter would give.
SdkFaultInfo fault_of(const Error& e, const vim25::MoRef& entity) {
  if (e.kind == ErrorKind::not_found) return object_not_found_fault(entity);
  if (e.kind == ErrorKind::conflict) return {"InvalidState", e.message, {}};
  return {"SystemError", e.message, "<reason>" + escape_xml(e.message) + "</reason>"};
}

std::string render_result(std::string_view element, const SdkTaskResult& r) {
  return fmt::format(R"(<{0}{1} xsi:type="{2}">{3}</{0}>)", element, r.attributes, r.xsi_type, r.content);
}

}  // namespace

// ---- the task machinery ----

vim25::MoRef VcenterFront::Impl::sdk_start_task(std::string description_id, const vim25::MoRef& entity,
                                                std::string entity_name, std::string user,
                                                std::string cost_host, int cost, TaskBody body) {
  SdkTask task;
  task.id = "task-" + std::to_string(++sdk_task_counter);
  task.description_id = std::move(description_id);
  task.entity = entity;
  task.entity_name = std::move(entity_name);
  task.user = std::move(user);
  task.queue_time = lab.now();
  const std::string id = task.id;
  sdk_tasks.emplace(id, std::move(task));
  sdk_task_order.push_back(id);
  while (sdk_task_order.size() > kTasksKept) {
    auto oldest = sdk_tasks.find(sdk_task_order.front());
    if (oldest != sdk_tasks.end() && !oldest->second.complete_time) break;  // still running: keep it
    if (oldest != sdk_tasks.end()) sdk_tasks.erase(oldest);
    sdk_task_order.pop_front();
  }
  asio::co_spawn(executor, sdk_run_task(id, std::move(cost_host), cost, std::move(body)), asio::detached);
  return {"Task", id};
}

asio::awaitable<void> VcenterFront::Impl::sdk_run_task(std::string task_id, std::string cost_host, int cost,
                                                       TaskBody body) {
  auto self = shared_from_this();
  std::unique_ptr<OperationSlot> slot;
  if (cost > 0) slot = co_await admit(cost_host, cost);
  if (auto it = sdk_tasks.find(task_id); it != sdk_tasks.end()) {
    it->second.state = "running";
    it->second.start_time = lab.now();
    sdk_changed(task_id);
  }
  auto ended = callback_state<SdkTaskOutcome>(executor);
  body(ended->callback());
  SdkTaskOutcome outcome = co_await wait_for(ended);
  slot.reset();
  if (auto it = sdk_tasks.find(task_id); it != sdk_tasks.end()) {
    SdkTask& task = it->second;
    task.state = outcome.fault ? "error" : "success";
    task.result = std::move(outcome.result);
    task.error = std::move(outcome.fault);
    task.complete_time = lab.now();
    sdk_changed(task_id);
  }
}

std::optional<std::string> VcenterFront::Impl::sdk_task_property(const SdkTask& task,
                                                                 std::string_view path) const {
  if (path == "info.state") return typed_element("val", "TaskInfoState", task.state);
  if (path == "info.result")
    return task.result.xsi_type.empty() ? std::string() : render_result("val", task.result);
  if (path == "info.error") {
    if (!task.error) return std::string();
    return R"(<val xsi:type="LocalizedMethodFault">)" + localized_fault(*task.error) + "</val>";
  }
  if (path == "info.progress") return std::string();
  if (path == "info.entity") return moref_element("val", task.entity);
  if (path == "info.descriptionId") return typed_element("val", "xsd:string", task.description_id);
  if (path != "info") return std::nullopt;
  // TaskInfo, its fields in the schema's order.
  std::string out = R"(<val xsi:type="TaskInfo">)";
  out += "<key>" + task.id + "</key>" + moref_element("task", {"Task", task.id});
  out += "<descriptionId>" + escape_xml(task.description_id) + "</descriptionId>";
  out += moref_element("entity", task.entity);
  out += "<entityName>" + escape_xml(task.entity_name) + "</entityName>";
  out += "<state>" + task.state + "</state><cancelled>false</cancelled><cancelable>false</cancelable>";
  if (task.error) out += "<error>" + localized_fault(*task.error) + "</error>";
  if (!task.result.xsi_type.empty()) out += render_result("result", task.result);
  out += R"(<reason xsi:type="TaskReasonUser"><userName>)" + escape_xml(task.user) + "</userName></reason>";
  out += "<queueTime>" + timestamp(task.queue_time) + "</queueTime>";
  if (task.start_time) out += "<startTime>" + timestamp(*task.start_time) + "</startTime>";
  if (task.complete_time) out += "<completeTime>" + timestamp(*task.complete_time) + "</completeTime>";
  out += "<eventChainId>" + task.id.substr(5) + "</eventChainId>";
  return out + "</val>";
}

// ---- power ----

VcenterFront::Impl::TaskBody VcenterFront::Impl::sdk_vm_task_body(const vim25::MoRef& vm, VmTaskAct act) {
  std::weak_ptr<Impl> weak = weak_from_this();
  return [weak, vm, act = std::move(act)](std::function<void(SdkTaskOutcome)> done) {
    auto impl = weak.lock();
    if (!impl) return;
    const model::Vm* current = impl->lab.find_vm(vm.value);
    if (!current) return done({{}, object_not_found_fault(vm)});
    act(*impl, *current, std::move(done));
  };
}

VcenterFront::Impl::TaskBody VcenterFront::Impl::sdk_power_on_body(std::string vm_id) {
  const vim25::MoRef ref{"VirtualMachine", vm_id};
  return sdk_vm_task_body(ref, [ref](Impl& self, const model::Vm& vm,
                                     std::function<void(SdkTaskOutcome)> done) {
    if (vm.power == model::PowerState::powered_on) return done({{}, invalid_power_state(vm, "poweredOn")});
    const model::Host* host = self.lab.find_host(vm.host_id);
    if (host && !self.lab.admit_memory(ref.value)) {
      return done({{},
                   SdkFaultInfo{"InsufficientMemoryResourcesFault",
                                fmt::format("The available Memory resources on host '{}' are insufficient "
                                            "to power on '{}'.",
                                            host->spec.name, vm.name),
                                fmt::format("<unreserved>{}</unreserved><requested>{}</requested>",
                                            static_cast<std::int64_t>(host->spec.memory_gb * 1024 -
                                                                      host->memory_used_mb) *
                                                1024 * 1024,
                                            static_cast<std::int64_t>(vm.memory_mb) * 1024 * 1024)}});
    }
    self.begin_customization(ref.value);
    auto on_running = [done, ref](Expected<void> running) {
      done(running ? SdkTaskOutcome{} : SdkTaskOutcome{{}, fault_of(running.error(), ref)});
    };
    if (auto started = self.lab.power_on(ref.value, on_running); !started) on_running(started.error());
  });
}

ServerResponse VcenterFront::Impl::sdk_power_on(const vim25::MoRef& vm, const std::string& user) {
  const model::Vm* target = lab.find_vm(vm.value);
  return task_response("PowerOnVM_Task",
                       sdk_start_task("VirtualMachine.powerOn", vm, target->name, user, target->host_id,
                                      config().power_cost, sdk_power_on_body(vm.value)));
}

ServerResponse VcenterFront::Impl::sdk_power_on_multi(const vim25::XmlNode& call, const std::string& user) {
  const vim25::MoRef self = vim25::decode_moref(call.child("_this"));
  if (self.type != "Datacenter" || self.value != lab.datacenter().id) return sdk_object_not_found(self);
  std::vector<vim25::MoRef> vms;
  for (const auto& node : call.children("vm")) vms.push_back(vim25::decode_moref(node));
  // The datacenter's task starts one PowerOnVM task per VM that can be attempted and lists them in its
  // result; it ends once they are started (they are followed on their own).
  std::weak_ptr<Impl> weak = weak_from_this();
  auto body = [weak, vms, user](std::function<void(SdkTaskOutcome)> done) {
    auto impl = weak.lock();
    if (!impl) return;
    std::string attempted, not_attempted;
    for (const auto& ref : vms) {
      const model::Vm* vm = impl->lab.find_vm(ref.value);
      if (ref.type != "VirtualMachine" || !vm || !visible(*vm)) {
        not_attempted += "<notAttempted>" + moref_element("vm", ref) + "<fault>" +
                         localized_fault(object_not_found_fault(ref)) + "</fault></notAttempted>";
        continue;
      }
      if (!impl->granted(user, "VirtualMachine.Interact.PowerOn", ref.value)) {
        ++impl->stats.permission_denials;
        not_attempted += "<notAttempted>" + moref_element("vm", ref) + "<fault>" +
                         localized_fault(no_permission_fault(ref, "VirtualMachine.Interact.PowerOn")) +
                         "</fault></notAttempted>";
        continue;
      }
      if (vm->power == model::PowerState::powered_on) {
        not_attempted += "<notAttempted>" + moref_element("vm", ref) + "<fault>" +
                         localized_fault(invalid_power_state(*vm, "poweredOn")) + "</fault></notAttempted>";
        continue;
      }
      const vim25::MoRef task =
          impl->sdk_start_task("VirtualMachine.powerOn", ref, vm->name, user, vm->host_id,
                               impl->config().power_cost, impl->sdk_power_on_body(ref.value));
      attempted += "<attempted>" + moref_element("vm", ref) + moref_element("task", task) + "</attempted>";
    }
    done({{"ClusterPowerOnVmResult", "", attempted + not_attempted}, std::nullopt});
  };
  return task_response(
      "PowerOnMultiVM_Task",
      sdk_start_task("Datacenter.powerOnVm", self, lab.datacenter().name, user, "", 0, std::move(body)));
}

ServerResponse VcenterFront::Impl::sdk_power_off(const vim25::MoRef& vm, const std::string& user) {
  const model::Vm* target = lab.find_vm(vm.value);
  auto body = sdk_vm_task_body(
      vm, [vm](Impl& impl, const model::Vm& current, std::function<void(SdkTaskOutcome)> done) {
        if (current.power == model::PowerState::powered_off)
          return done({{}, invalid_power_state(current, "poweredOff")});
        auto on_off = [done, vm](Expected<void> off) {
          done(off ? SdkTaskOutcome{} : SdkTaskOutcome{{}, fault_of(off.error(), vm)});
        };
        if (auto started = impl.lab.power_off(vm.value, on_off); !started) on_off(started.error());
      });
  return task_response("PowerOffVM_Task",
                       sdk_start_task("VirtualMachine.powerOff", vm, target->name, user, target->host_id,
                                      config().power_cost, std::move(body)));
}

// ---- destroy ----

ServerResponse VcenterFront::Impl::sdk_destroy(const vim25::MoRef& vm, const std::string& user) {
  const model::Vm* target = lab.find_vm(vm.value);
  auto body = sdk_vm_task_body(
      vm, [vm](Impl& impl, const model::Vm& current, std::function<void(SdkTaskOutcome)> done) {
        if (current.power != model::PowerState::powered_off)
          return done({{}, invalid_power_state(current, "poweredOff")});
        if (auto deleted = impl.lab.delete_vm(vm.value); !deleted)
          return done({{}, fault_of(deleted.error(), vm)});
        impl.customizations.erase(vm.value);
        impl.sdk_forget_vm(vm.value);
        done({});
      });
  return task_response("Destroy_Task", sdk_start_task("VirtualMachine.destroy", vm, target->name, user,
                                                      target->host_id, config().power_cost, std::move(body)));
}

}  // namespace bootstorm::sim::vcenter
