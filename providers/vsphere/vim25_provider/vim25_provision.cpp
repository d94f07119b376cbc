// Vim25Provider's provisioning: the run's custom attribute and snapshot (once, at the first clone), the
// clones (full, linked or instant) bounded per host and overall, each tagged with the run id, and the run's
// snapshot removed at cleanup.
#include <spdlog/spdlog.h>

#include <chrono>

#include "common/async/sleep.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"

namespace bootstorm::vsphere::vim25 {

namespace asio = boost::asio;

namespace {

std::string run_snapshot_name(const std::string& run_id) {
  return "bs-" + run_id + "-base";
}

// The clone's extraConfig: the run id (kRunKey, written with the clone itself, so that a clone whose run died
// before tagging it still proves its run), and the guestinfo keys the guest agents read (deploy/guest): the
// beacon's URL, the VM's token and name.
std::vector<std::pair<std::string, std::string>> clone_config(const api::ProviderConfig& config,
                                                              const std::string& vm_name) {
  std::vector<std::pair<std::string, std::string>> out{{std::string(kRunKey), config.run_id}};
  if (config.beacon_url.empty()) return out;
  out.push_back({"guestinfo.bootstorm.url", config.beacon_url});
  out.push_back(
      {"guestinfo.bootstorm.token", config.beacon_token ? config.beacon_token(vm_name) : std::string()});
  out.push_back({"guestinfo.bootstorm.vm", vm_name});
  return out;
}

}  // namespace

asio::awaitable<Expected<int>> Vim25Provider::find_field_key() {
  if (field_key_ >= 0) co_return field_key_;
  const std::vector<MoRef> manager{session_.service_content().custom_fields_manager};
  const std::string type = "CustomFieldsManager";
  const std::vector<std::string> paths{"field"};
  auto fields = co_await read(manager, type, paths);
  if (!fields) co_return fields.error();
  for (const auto& o : *fields) {
    if (const Value* defs = o.prop("field")) {
      for (const Value* def : defs->all("CustomFieldDef")) {
        if (def->field_text("name") == kRunField) {
          field_key_ = std::stoi(def->field_text("key"));
          co_return field_key_;
        }
      }
    }
  }
  co_return -1;
}

asio::awaitable<Expected<void>> Vim25Provider::prepare_clones() {
  auto permit = co_await async::acquire(prepare_mutex_);
  if (prepared_) co_return Expected<void>{};
  const MoRef& cfm = session_.service_content().custom_fields_manager;
  auto key = co_await find_field_key();
  if (!key) co_return key.error();
  if (*key < 0) {
    const std::string method = "AddCustomFieldDef";
    const std::string element = add_custom_field_def(cfm, std::string(kRunField), "VirtualMachine");
    if (config_.dry_run) {
      log_dry_run(method, std::string(kRunField));
      field_key_ = 0;
    } else {
      auto def = co_await session_.call(method, element);
      if (!def) {
        Error e = def.error();
        e.message = "creating the custom attribute " + std::string(kRunField) + ": " + e.message;
        co_return e;
      }
      field_key_ = std::stoi(def->returnval().child_text("key").value_or("-1"));
      spdlog::info("created the custom attribute {} (key {}) in vCenter {}", kRunField, field_key_,
                   config_.endpoint);
    }
  }
  if (settings_.clone == "linked" && snapshot_.empty()) {
    const std::string name = run_snapshot_name(config_.run_id);
    const std::string method = "CreateSnapshot_Task";
    const std::string element = create_snapshot_task(
        golden_, name, "bootstorm run " + config_.run_id + ": the base of its linked clones", false, false);
    if (config_.dry_run) {
      log_dry_run(method, name + " of " + settings_.vm);
      snapshot_ = {"VirtualMachineSnapshot", "dry-run"};
    } else {
      auto taken = co_await run_task(method, element, "taking snapshot " + name + " of " + settings_.vm);
      if (!taken) co_return taken.error();
      if (taken->error) co_return *taken->error;
      if (!taken->result) {
        co_return make_error(ErrorKind::protocol, "vCenter " + config_.endpoint +
                                                      " answered CreateSnapshot_Task without the snapshot");
      }
      snapshot_ = taken->result->moref();
      spdlog::info("took snapshot {} ({}) of {}: the base of the linked clones", name, snapshot_.value,
                   settings_.vm);
    }
  }
  prepared_ = true;
  co_return Expected<void>{};
}

asio::awaitable<Expected<void>> Vim25Provider::tag(const MoRef& vm, const std::string& name) {
  const std::string method = "SetField";
  const std::string element =
      set_field(session_.service_content().custom_fields_manager, vm, field_key_, config_.run_id);
  Expected<SoapReply> reply = make_error(ErrorKind::internal, "not sent");
  for (int attempt = 1; attempt <= 3; ++attempt) {
    reply = co_await session_.call(method, element);
    if (reply) co_return Expected<void>{};
    co_await async::sleep_for(std::chrono::milliseconds(200) * attempt);
  }
  Error e = reply.error();
  e.message = "tagging " + name + " with " + std::string(kRunField) + "=" + config_.run_id + ": " + e.message;
  co_return e;
}

asio::awaitable<Expected<void>> Vim25Provider::power_off(const MoRef& vm, const std::string& name) {
  const std::string method = "PowerOffVM_Task";
  const std::string element = power_off_vm_task(vm);
  auto off = co_await run_task(method, element, "power off of " + name);
  if (!off) co_return off.error();
  // Already off is what was wanted.
  if (off->error && off->error->kind != ErrorKind::conflict) co_return *off->error;
  co_return Expected<void>{};
}

asio::awaitable<Expected<api::VmHandle>> Vim25Provider::provision(const api::VmSpec& spec) {
  if (auto refused = api::refuse_unnamed_create(spec.name, config_.run_id)) co_return *refused;
  if (!inventory_checked_ || !hosts_.count(spec.host)) {
    api::InventoryRequest single;
    single.hosts.push_back(spec.host);
    auto r = co_await check_inventory(single);
    if (!r) co_return r.error();
  }
  auto prepared = co_await prepare_clones();
  if (!prepared) co_return prepared.error();
  const Host& host = hosts_.at(spec.host);
  const bool instant = settings_.clone == "instant";
  const std::string what =
      settings_.clone + " clone of " + settings_.vm + " to " + spec.name + " on host " + spec.host;
  std::string method, element;
  if (instant) {
    InstantCloneSpec clone;
    clone.name = spec.name;
    clone.location.datastore = datastore_;
    if (!host.pool.empty()) clone.location.pool = MoRef{"ResourcePool", host.pool};
    clone.config = clone_config(config_, spec.name);
    method = "InstantClone_Task";
    element = instant_clone_task(golden_, clone);
  } else {
    CloneSpec clone;
    clone.location.datastore = datastore_;
    clone.location.host = MoRef{"HostSystem", host.id};
    if (!host.pool.empty()) clone.location.pool = MoRef{"ResourcePool", host.pool};
    if (settings_.clone == "linked") {
      clone.location.disk_move_type = "createNewChildDiskBacking";
      clone.snapshot = snapshot_;
    }
    clone.extra_config = clone_config(config_, spec.name);
    method = "CloneVM_Task";
    element = clone_vm_task(golden_, vm_folder_, spec.name, clone);
  }
  api::VmHandle handle{spec.name, {}, spec.host, spec.scenario};
  if (config_.dry_run) {
    log_dry_run(method, what);
    handle.id = "dry-run:" + spec.name;
    co_return handle;
  }
  // Narrowest limit first, so that a clone queued behind a busy host holds no overall slot.
  auto host_permit = co_await async::acquire(host_clone_slots_.of(instant ? golden_host_id_ : host.id));
  auto overall = co_await async::acquire(clone_slots_);
  auto cloned = co_await run_task(method, element, what);
  if (!cloned) co_return cloned.error();
  if (cloned->error) co_return *cloned->error;
  if (!cloned->result || cloned->result->moref().empty()) {
    co_return make_error(ErrorKind::protocol,
                         what + ": vCenter " + config_.endpoint + " ended the clone task without the new VM");
  }
  const MoRef vm = cloned->result->moref();
  handle.id = vm.value;
  // The proof cleanup checks. Without it nothing could remove the clone: remove it now.
  auto tagged = co_await tag(vm, spec.name);
  if (!tagged) {
    spdlog::error("{}; deleting the untagged clone {} ({})", tagged.error().what(), spec.name, vm.value);
    const std::string destroy_method = "Destroy_Task";
    const std::string destroy_element = destroy_task(vm);
    (void)co_await run_task(destroy_method, destroy_element, "deleting the untagged clone " + spec.name);
    co_return tagged.error();
  }
  // An instant clone is born running (it forks the golden VM's memory): the storm must power it on.
  if (instant) {
    auto off = co_await power_off(vm, spec.name);
    if (!off) co_return off.error();
  }
  co_return handle;
}

asio::awaitable<Expected<void>> Vim25Provider::wait_startable(const api::VmHandle& vm,
                                                              std::chrono::milliseconds timeout) {
  if (config_.dry_run) co_return Expected<void>{};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::vector<MoRef> refs{{"VirtualMachine", vm.id}};
  const std::string type = "VirtualMachine";
  const std::vector<std::string> paths{"runtime.powerState"};
  std::string state;
  for (;;) {
    auto read_state = co_await read(refs, type, paths);
    if (!read_state) co_return read_state.error();
    state = read_state->empty() || !read_state->front().prop("runtime.powerState")
                ? std::string("gone")
                : read_state->front().prop("runtime.powerState")->text;
    if (state == "poweredOff") co_return Expected<void>{};
    if (std::chrono::steady_clock::now() >= deadline) {
      co_return make_error(ErrorKind::timeout,
                           "VM " + vm.name + " in vCenter " + config_.endpoint + " is still " + state +
                               " after " + std::to_string(timeout.count()) +
                               " ms; it cannot be storm-started",
                           "power it off or remove it");
    }
    co_await async::sleep_for(std::chrono::milliseconds(500));
  }
}

asio::awaitable<Expected<void>> Vim25Provider::remove_run_artifacts(const std::string& run_id) {
  // The run's snapshot of the golden VM (any VM: the golden VM may have been renamed since).
  const std::string type = "VirtualMachine";
  const std::vector<std::string> paths{"name", "snapshot"};
  auto vms = co_await read_all(type, paths);
  if (!vms) co_return vms.error();
  const std::string name = run_snapshot_name(run_id);
  for (const auto& vm : *vms) {
    const Value* info = vm.prop("snapshot");
    if (!info) continue;
    for (const auto& [snapshot_name, snapshot] : snapshots_of(*info)) {
      if (snapshot_name != name) continue;
      const std::string vm_name = vm.prop("name") ? vm.prop("name")->text : vm.obj.value;
      if (config_.dry_run) {
        log_dry_run("RemoveSnapshot_Task", name + " of " + vm_name);
        continue;
      }
      const std::string method = "RemoveSnapshot_Task";
      const std::string element = remove_snapshot_task(snapshot, false);
      auto removed = co_await run_task(method, element, "removing snapshot " + name + " of " + vm_name);
      if (!removed) co_return removed.error();
      if (removed->error && removed->error->kind != ErrorKind::not_found) co_return *removed->error;
      spdlog::info("removed snapshot {} of {}", name, vm_name);
    }
  }
  co_return Expected<void>{};
}

}  // namespace bootstorm::vsphere::vim25
