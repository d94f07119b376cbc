// Vim25Provider's power calls: the storm's starts (PowerOnMultiVM_Task for the starts that arrive together,
// or one PowerOnVM_Task each), power-off and destroy behind the run-id proof, and the run's VMs listed for
// cleanup.
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "common/async/sleep.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/fault.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/vim25/updates.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"

namespace bootstorm::vsphere::vim25 {

namespace asio = boost::asio;
using steady = std::chrono::steady_clock;
using wall = std::chrono::system_clock;

namespace {
// How long the starts that arrive together are gathered into one PowerOnMultiVM_Task after the last one came.
constexpr auto kGatherQuiet = std::chrono::milliseconds(2);
// How long the storm waits at most for its observation to be in place (see prepare_storm).
constexpr auto kArmTimeout = std::chrono::seconds(10);
}  // namespace

asio::awaitable<Expected<void>> Vim25Provider::prepare_storm(std::size_t expected_starts) {
  starts_requested_ = 0;  // a new storm: none of its starts has been asked for
  if (!session_.logged_in()) {
    auto r = co_await session_.login();
    if (!r) co_return r;
  }
  // The observation spawned before the barrier: its filter and first answer first, so that every change of
  // the storm reaches a wait already on vCenter. Bounded: a slow vCenter delays the storm, never stops it.
  if (observations_arming_ > 0) {
    const auto began = steady::now();
    const auto deadline = began + std::min<steady::duration>(config_.request_timeout, kArmTimeout);
    while (observations_arming_ > 0 && steady::now() < deadline) {
      observation_armed_.expires_at(deadline);
      boost::system::error_code ec;
      co_await observation_armed_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    if (observations_arming_ > 0) {
      spdlog::warn(
          "the VMs' filter at vCenter {} was not in place after {:.1f} s: starting anyway; the first "
          "milestones are seen when it is",
          config_.endpoint, std::chrono::duration<double>(steady::now() - began).count());
    }
  }
  expected_starts_ = expected_starts;
  // `multi` sends one call; `each` one call per VM, concurrently.
  const std::size_t connections = settings_.power_on == "multi" ? 2 : expected_starts;
  co_return co_await open_storm_connections(*transport_, connections, config_.endpoint);
}

asio::awaitable<Expected<api::StartResult>> Vim25Provider::start(const api::VmHandle& vm) {
  if (!api::name_carries_run_id(vm.name, config_.run_id))
    co_return refuse_foreign("start", vm.name, "its name does not carry run id " + config_.run_id);
  ++starts_requested_;
  if (config_.dry_run) {
    log_dry_run(settings_.power_on == "multi" ? "PowerOnMultiVM_Task" : "PowerOnVM_Task", vm.name);
    api::StartResult r;
    r.written_mono = r.acknowledged_mono = steady::now();
    r.written_wall = r.acknowledged_wall = wall::now();
    co_return r;
  }
  Ack& ack = ack_of(vm.id);
  if (settings_.power_on == "multi") {
    multi_batch_.push_back(vm.id);
    if (!multi_flush_scheduled_) {
      multi_flush_scheduled_ = true;
      asio::co_spawn(executor_, flush_multi(), asio::detached);
    }
  } else {
    const std::string method = "PowerOnVM_Task";
    const std::string element = power_on_vm_task({"VirtualMachine", vm.id});
    CallOptions options;
    options.urgent = true;  // the storm's starts are never throttled (but charged to the budget)
    const auto handed_over = steady::now();
    const auto handed_over_wall = wall::now();
    auto reply = co_await session_.call(method, element, options);
    if (!reply) {
      Error e = reply.error();
      e.message = "power on of " + vm.name + ": " + e.message;
      start_call_failed(vm.id, e, handed_over, handed_over_wall);
    } else {
      ack.written = reply->timing.written_at;
      ack.written_wall = reply->timing.written_at_wall;
      start_written_[vm.id] = ack.written;
      const MoRef task = decode_moref(reply->returnval());
      const std::string id = vm.id;
      auto on_end = [this, id](const TaskOutcome& o) {
        if (o.state == "success") acknowledge(id, steady::now(), wall::now());
      };
      auto followed =
          co_await watcher_->wait(task, config_.request_timeout * 10, "power on of " + vm.name, on_end);
      if (!followed) refuse_start(vm.id, followed.error());
      if (followed && followed->error) refuse_start(vm.id, *followed->error);
    }
  }
  // The acknowledgement: the power-on task's success or the pushed power state, whichever comes first. The
  // pushed state may come before the call's answer (govmomi's simulator powers 200 VMs on before it answers
  // PowerOnMultiVM): the start counts once the moment its request was written is known too.
  const auto limit = std::chrono::duration_cast<std::chrono::seconds>(config_.request_timeout * 10);
  ack.timer.expires_after(limit);
  const auto complete = [&ack] { return ack.error || (ack.at && ack.written != steady::time_point{}); };
  boost::system::error_code ec;
  while (!complete()) {
    co_await ack.timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (!ec && !complete()) {
      ack.error = make_error(ErrorKind::timeout,
                             "power on of " + vm.name + ": vCenter " + config_.endpoint +
                                 (ack.at ? " powered it on but never answered the power-on call"
                                         : " confirmed neither the task nor the power state") +
                                 " within " + std::to_string(limit.count()) + " s",
                             "see Recent Tasks in the vSphere Client");
    }
  }
  if (ack.error) {
    Error e = *ack.error;
    acks_.erase(vm.id);
    co_return e;
  }
  api::StartResult result;
  result.written_mono = ack.written;
  result.written_wall = ack.written_wall;
  result.acknowledged_mono = std::max(*ack.at, ack.written);
  result.acknowledged_wall = ack.at_wall;
  acks_.erase(vm.id);
  co_return result;
}

asio::awaitable<void> Vim25Provider::flush_multi() {
  // Gather the starts that arrive together (the StartBarrier releases them at once): until every expected
  // start is in, or none came for a moment.
  std::size_t seen = 0;
  while (multi_batch_.size() != seen && multi_batch_.size() < expected_starts_) {
    seen = multi_batch_.size();
    co_await async::sleep_for(kGatherQuiet);
  }
  std::vector<std::string> batch = std::move(multi_batch_);
  multi_batch_.clear();
  multi_flush_scheduled_ = false;
  expected_starts_ = expected_starts_ > batch.size() ? expected_starts_ - batch.size() : 0;
  std::vector<MoRef> vms;
  for (const auto& id : batch) vms.push_back({"VirtualMachine", id});
  const std::string method = "PowerOnMultiVM_Task";
  const std::string element = power_on_multi_vm_task(datacenter_, vms);
  CallOptions options;
  options.urgent = true;
  const std::string what = "power on of " + std::to_string(batch.size()) + " VMs (PowerOnMultiVM_Task)";
  const auto handed_over = steady::now();
  const auto handed_over_wall = wall::now();
  auto reply = co_await session_.call(method, element, options);
  if (!reply) {
    for (const auto& id : batch) start_call_failed(id, reply.error(), handed_over, handed_over_wall);
    co_return;
  }
  for (const auto& id : batch) {
    Ack& ack = ack_of(id);
    ack.written = reply->timing.written_at;
    ack.written_wall = reply->timing.written_at_wall;
    start_written_[id] = ack.written;
    ack.timer.cancel();  // a pushed power state may have come first
  }
  const MoRef multi_task = decode_moref(reply->returnval());
  auto multi = co_await watcher_->wait(multi_task, config_.request_timeout * 10, what);
  if (!multi || multi->error) {
    const Error e = !multi ? multi.error() : *multi->error;
    for (const auto& id : batch) refuse_start(id, e);
    co_return;
  }
  const bool per_vm = multi->result && !(multi->result->all("attempted").empty() &&
                                         multi->result->all("notAttempted").empty());
  if (!per_vm && multi->result && !multi->result->all("recommendations").empty()) {
    // Recommendations only: a DRS cluster in manual mode powers nothing on by itself.
    for (const auto& id : batch) {
      refuse_start(id, make_error(ErrorKind::api,
                                  what + " started nothing: vCenter answered with DRS recommendations only "
                                         "(a cluster in manual mode)",
                                  "set the cluster's DRS to fully automated, or use storm.powerOn: each"));
    }
    co_return;
  }
  if (!per_vm) {
    // No per-VM result at all (govmomi's simulator answers so): the pushed power state confirms each start.
    spdlog::warn("{}: vCenter {} gave no per-VM result; each start is confirmed by its pushed power state",
                 what, config_.endpoint);
    co_return;
  }
  // Not attempted: the reason vCenter gave, per VM. Attempted: each VM's own PowerOnVM task, followed.
  nlohmann::json note = {{"call", method},
                         {"task", multi_task.value},
                         {"vms", batch.size()},
                         {"attempted", nlohmann::json::array()},
                         {"notAttempted", nlohmann::json::array()}};
  for (const Value* skipped : multi->result->all("notAttempted")) {
    const std::string id = skipped->field("vm") ? skipped->field("vm")->text : std::string();
    const Value* fault = skipped->field("fault");
    Error e = fault ? fault_error(fault_of(*fault), "PowerOnMultiVM_Task did not attempt to power on " + id)
                    : make_error(ErrorKind::api, "PowerOnMultiVM_Task did not attempt to power on " + id);
    spdlog::warn("{}", e.what());
    note["notAttempted"].push_back({{"id", id}, {"reason", e.what()}});
    refuse_start(id, e);
  }
  const auto attempted = multi->result->all("attempted");
  for (const Value* a : attempted)
    if (const Value* vm = a->field("vm")) note["attempted"].push_back(vm->text);
  if (config_.note) config_.note(api::kNotePowerOnBatch, note.dump());
  // The attempted VMs' own PowerOnVM tasks, followed together through one filter.
  std::vector<MoRef> tasks;
  std::map<std::string, std::string> vm_of_task;
  for (const Value* a : attempted) {
    const Value* vm = a->field("vm");
    const Value* task = a->field("task");
    if (!vm || !task) continue;  // no task to follow: the pushed power state acknowledges it
    tasks.push_back(task->moref());
    vm_of_task[task->text] = vm->text;
  }
  auto on_end = [this, vm_of_task](const TaskOutcome& o) {
    auto it = vm_of_task.find(o.task.value);
    if (it != vm_of_task.end() && o.state == "success") acknowledge(it->second, steady::now(), wall::now());
  };
  auto followed = co_await watcher_->wait_all(tasks, config_.request_timeout * 10, "power on", on_end);
  if (!followed) {
    for (const auto& [task, vm] : vm_of_task) refuse_start(vm, followed.error());
    co_return;
  }
  for (const auto& o : *followed) {
    auto it = vm_of_task.find(o.task.value);
    if (it != vm_of_task.end() && o.error) refuse_start(it->second, *o.error);
  }
}

std::string Vim25Provider::unproven(const Ownership& own) const {
  if (own.found.empty()) {
    return "neither its custom attribute " + std::string(kRunField) + " nor its extraConfig " +
           std::string(kRunKey) + " is " + config_.run_id;
  }
  return "its custom attribute " + std::string(kRunField) + " is '" + own.found + "', not " + config_.run_id;
}

asio::awaitable<Expected<void>> Vim25Provider::stop(const api::VmHandle& vm) {
  if (!api::name_carries_run_id(vm.name, config_.run_id))
    co_return refuse_foreign("power off", vm.name, "its name does not carry run id " + config_.run_id);
  auto own = co_await ownership(vm);
  if (!own) co_return own.error();
  if (own->id.empty()) co_return Expected<void>{};  // gone already
  if (!own->proven) {
    co_return refuse_foreign("power off", vm.name, unproven(*own));
  }
  if (own->power_state == "poweredOff") co_return Expected<void>{};
  if (config_.dry_run) {
    log_dry_run("PowerOffVM_Task", vm.name);
    co_return Expected<void>{};
  }
  const MoRef ref{"VirtualMachine", own->id};
  co_return co_await power_off(ref, vm.name);
}

asio::awaitable<Expected<void>> Vim25Provider::destroy(const api::VmHandle& vm) {
  if (!api::name_carries_run_id(vm.name, config_.run_id))
    co_return refuse_foreign("delete", vm.name, "its name does not carry run id " + config_.run_id);
  auto own = co_await ownership(vm);
  if (!own) co_return own.error();
  if (own->id.empty()) co_return Expected<void>{};  // no VM of that name: nothing to delete
  if (!own->proven) {
    co_return refuse_foreign("delete", vm.name, unproven(*own));
  }
  const MoRef ref{"VirtualMachine", own->id};
  if (config_.dry_run) {
    log_dry_run("Destroy_Task", vm.name);
    co_return Expected<void>{};
  }
  if (own->power_state != "poweredOff") {
    auto off = co_await power_off(ref, vm.name);
    if (!off) co_return off;
  }
  const std::string method = "Destroy_Task";
  const std::string element = destroy_task(ref);
  auto gone = co_await run_task(method, element, "deleting " + vm.name);
  if (!gone)
    co_return gone.error().kind == ErrorKind::not_found ? Expected<void>{} : Expected<void>(gone.error());
  if (gone->error && gone->error->kind != ErrorKind::not_found) co_return *gone->error;
  co_return Expected<void>{};
}

asio::awaitable<Expected<std::vector<api::VmHandle>>> Vim25Provider::list_run_vms(const std::string& run_id) {
  auto key = co_await find_field_key();
  if (!key) co_return key.error();
  const std::string vm_type = "VirtualMachine", host_type = "HostSystem";
  const std::vector<std::string> vm_paths{"name", "runtime.host", "customValue"}, host_paths{"name"};
  auto vms = co_await read_all(vm_type, vm_paths);
  if (!vms) co_return vms.error();
  if (host_names_.empty()) {
    auto hosts = co_await read_all(host_type, host_paths);
    if (hosts) {
      for (const auto& h : *hosts)
        if (const Value* n = h.prop("name")) host_names_[h.obj.value] = n->text;
    }
  }
  std::vector<api::VmHandle> out;
  for (const auto& vm : *vms) {
    const std::string name = vm.prop("name") ? vm.prop("name")->text : std::string();
    bool tagged = false;
    if (const Value* values = vm.prop("customValue")) {
      for (const Value* v : values->all("CustomFieldValue"))
        tagged |=
            *key >= 0 && v->field_text("key") == std::to_string(*key) && v->field_text("value") == run_id;
    }
    if (!api::name_carries_run_id(name, run_id) && !tagged) continue;
    api::VmHandle h;
    h.name = name;
    h.id = vm.obj.value;
    if (const Value* host = vm.prop("runtime.host"))
      h.host = host_names_.count(host->text) ? host_names_[host->text] : host->text;
    out.push_back(std::move(h));
  }
  co_return out;
}

}  // namespace bootstorm::vsphere::vim25
