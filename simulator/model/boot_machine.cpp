// The boot state machine of a VM: power-on (kube: scheduling first), running, the guest's boot phases as
// flows and timers, the milestones they reach, power-off and the resume of an instant clone.

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "simulator/model/detail/keyed_random.hpp"
#include "simulator/model/detail/lab_impl.hpp"

namespace bootstorm::sim::model {

void Lab::Impl::cancel_boot(std::uint64_t number, const char* why) {
  auto it = boots.find(number);
  if (it == boots.end()) return;
  Boot boot = std::move(it->second);
  boots.erase(it);
  if (boot.memory_host != kNoIndex) {
    if (auto vm = vms.find(number); vm != vms.end())
      hosts[boot.memory_host].memory_used_mb -= vm->second.memory_mb;
  }
  for (auto f : boot.flows) remove_flow(f);
  for (auto t : boot.timers) cancel_event(t);
  if (boot.on_running) boot.on_running(make_error(ErrorKind::cancelled, why));
  if (boot.on_off) boot.on_off(make_error(ErrorKind::cancelled, why));
}

void Lab::Impl::forget_id(std::vector<std::uint64_t>& ids, std::uint64_t id) {
  auto it = std::find(ids.begin(), ids.end(), id);
  if (it != ids.end()) ids.erase(it);
}

void Lab::Impl::boot_timer(std::uint64_t number, double delay, std::function<void()> fn) {
  Boot& boot = boot_of(number);
  const std::uint64_t generation = boot.generation;
  auto holder = std::make_shared<std::uint64_t>(0);
  *holder = schedule_at(now_ + delay, [this, number, generation, holder, fn = std::move(fn)] {
    auto it = boots.find(number);
    if (it == boots.end() || it->second.generation != generation) return;
    forget_id(it->second.timers, *holder);
    fn();
  });
  boot.timers.push_back(*holder);
}

void Lab::Impl::set_milestone(Vm& vm, Milestone m) {
  vm.milestones[static_cast<std::size_t>(m)] = now_;
  if (options.visible_at_model_time)
    vm.visible[static_cast<std::size_t>(m)] = virtual_mode ? now_ : std::max(now_, real_now());
  changed(vm, m);
}

std::string Lab::Impl::guest_ip(std::uint64_t number) const {
  return fmt::format("10.{}.{}.{}", (number / 62500) % 250 + 1, (number / 250) % 250, number % 250 + 2);
}

void Lab::Impl::reach_running(std::uint64_t number, bool boot_guest) {
  Vm& vm = vms.at(number);
  Boot& boot = boot_of(number);
  boot.powering_on = false;
  vm.power = PowerState::powered_on;
  const std::size_t h = host_index(vm.host_id);
  if (h < hosts.size()) {
    if (boot.memory_host == kNoIndex) {
      hosts[h].memory_used_mb += vm.memory_mb;
    } else if (boot.memory_host != h) {  // held on another host than it runs on
      hosts[boot.memory_host].memory_used_mb -= vm.memory_mb;
      hosts[h].memory_used_mb += vm.memory_mb;
    }
    ++hosts[h].running_vms;
  } else if (boot.memory_host != kNoIndex) {
    hosts[boot.memory_host].memory_used_mb -= vm.memory_mb;
  }
  boot.memory_host = kNoIndex;
  for (auto& n : nodes) {
    if (!vm.node.empty() && n.spec.name == vm.node) ++n.running_vms;
  }
  vm.current_phase = vm.never_boots ? "firmware" : "";
  vm.guest_address = guest_ip(number);
  meter_vm_running(number);
  set_milestone(vm, Milestone::running);
  if (auto cb = std::move(boot.on_running)) {
    boot.on_running = nullptr;
    cb(Expected<void>{});
  }
  if (!vms.count(number) || !boots.count(number)) return;  // the callback deleted or stopped it
  if (vm.never_boots || !boot_guest) return;  // never_boots: hangs in firmware, no phase ever completes
  start_phase(number, 0);
}

void Lab::Impl::start_phase(std::uint64_t number, std::size_t index) {
  Vm& vm = vms.at(number);
  const GuestProfile* profile = find_profile(vm.profile);
  Boot& boot = boot_of(number);
  if (index >= profile->phases.size()) {
    vm.current_phase.clear();
    set_milestone(vm, Milestone::beacon);
    if (beacon_hook && vm.guestinfo.count(std::string(kBeaconUrlKey))) beacon_hook(vm);
    return;
  }
  const PhaseSpec& phase = profile->phases[index];
  boot.phase = index;
  vm.current_phase = phase.name;
  double scale = 1.0;
  if (phase.jitter > 0) {
    scale = std::max(
        0.2,
        1.0 + phase.jitter * keyed_normal(seed, vm.name, static_cast<std::uint64_t>(vm.boot_count), index));
  }
  const std::size_t h = host_index(vm.host_id);
  // Boot data is read from the disk that holds it: a linked or instant clone's shared base disk.
  const std::size_t d =
      datastore_index(vm.base_datastore_id.empty() ? vm.datastore_id : vm.base_datastore_id);
  const std::uint64_t generation = boot.generation;
  auto part_done = [this, number, generation, index] {
    auto it = boots.find(number);
    if (it == boots.end() || it->second.generation != generation) return;
    if (--it->second.pending_parts == 0) end_phase(number, index);
  };
  boot.pending_parts = 1;  // guard: the phase cannot end while its parts are being added
  const double mb = phase.mb_read * scale;
  if (mb > 0 && h < hosts.size() && d < datastores.size()) {
    const HostSpec& hs = hosts[h].spec;
    const DatastoreSpec& ds = datastores[d].spec;
    const double io_mb = profile->io_size_kb / 1000.0;
    // Little's law on the guest's queue: rate <= outstanding I/Os x I/O size / per-I/O latency.
    const double cap = profile->outstanding_ios * io_mb / ((hs.io_latency_ms + ds.latency_ms) / 1000.0);
    const int cls =
        class_for({{link_res(h), 1.0}, {bus_res(h), 1.0}, {ds_bw_res(d), 1.0}, {ds_iops_res(d), 1.0 / io_mb}},
                  cap, {IoPath{h, d, /*write=*/false, 1.0, io_mb, profile->outstanding_ios}}, /*boot=*/true);
    ++boot.pending_parts;
    auto holder = std::make_shared<std::uint64_t>(0);
    *holder = add_flow(cls, mb, [this, number, holder, part_done] {
      if (auto it = boots.find(number); it != boots.end()) forget_id(it->second.flows, *holder);
      part_done();
    });
    meter_vm_flow(*holder, number, mb);
    boot.flows.push_back(*holder);
  }
  const double cpu = phase.cpu_core_s * scale;
  if (cpu > 0 && h < hosts.size()) {
    const double cap = vm.cpu_count * hosts[h].spec.core_speed;
    const int cls = class_for({{cpu_res(h), 1.0}}, cap, {}, /*boot=*/true);
    ++boot.pending_parts;
    auto holder = std::make_shared<std::uint64_t>(0);
    *holder = add_flow(cls, cpu, [this, number, holder, part_done] {
      if (auto it = boots.find(number); it != boots.end()) forget_id(it->second.flows, *holder);
      part_done();
    });
    boot.flows.push_back(*holder);
  }
  const double fixed = phase.fixed_s * scale;
  if (fixed > 0) {
    ++boot.pending_parts;
    boot_timer(number, fixed, part_done);
  }
  part_done();  // release the guard; ends the phase at once when it had no parts
}

void Lab::Impl::end_phase(std::uint64_t number, std::size_t index) {
  Vm& vm = vms.at(number);
  const GuestProfile* profile = find_profile(vm.profile);
  const PhaseSpec& phase = profile->phases[index];
  if (phase.name == profile->agent_phase && !vm.agent_never_starts && vm.tools_installed) {
    vm.tools = ToolsState::running;
    set_milestone(vm, Milestone::guest_agent);
    boot_timer(number, profile->ip_delay_s, [this, number] {
      Vm& v = vms.at(number);
      v.ip = guest_ip(number);
      v.host_name = v.name;
      set_milestone(v, Milestone::ip_assigned);
    });
  }
  if (phase.name == profile->port_phase) {
    boot_timer(number, profile->port_delay_s,
               [this, number] { set_milestone(vms.at(number), Milestone::port_open); });
  }
  if (!vms.count(number) || !boots.count(number)) return;
  start_phase(number, index + 1);
}

bool Lab::Impl::memory_fits(std::size_t h, const Vm& vm) {
  if (hosts[h].memory_used_mb + vm.memory_mb <= hosts[h].spec.memory_gb * 1024) return true;
  ++memory_refusals[hosts[h].spec.name];
  return false;
}

void Lab::Impl::release_host(Vm& vm) {
  if (vm.power != PowerState::powered_on) return;
  const std::size_t h = host_index(vm.host_id);
  if (h < hosts.size()) {
    hosts[h].memory_used_mb -= vm.memory_mb;
    --hosts[h].running_vms;
  }
  for (auto& n : nodes) {
    if (!vm.node.empty() && n.spec.name == vm.node) --n.running_vms;
  }
}

Expected<void> Lab::Impl::power_on(std::uint64_t number, DoneCallback on_running,
                                   const PowerOnOptions& options) {
  Vm& vm = vms.at(number);
  auto existing = boots.find(number);
  if (existing != boots.end() && existing->second.powering_off) {
    return make_error(ErrorKind::conflict, fmt::format("VM '{}' is powering off.", vm.name));
  }
  if (vm.power == PowerState::powered_on || (existing != boots.end() && existing->second.powering_on)) {
    return make_error(ErrorKind::conflict, fmt::format("VM '{}' is already powered on.", vm.name));
  }
  const GuestProfile* profile = find_profile(vm.profile);
  const bool kube = is_kube_vm(vm);
  const Node* node = nullptr;
  if (kube) {
    if (!options.node.empty()) {
      for (const auto& n : nodes) {
        if (n.spec.name == options.node) node = &n;
      }
      if (!node) return make_error(ErrorKind::not_found, fmt::format("Node '{}' not found.", options.node));
    } else {
      node = least_loaded_node();
    }
    if (!node) return make_error(ErrorKind::conflict, "The lab has no Kubernetes node to schedule on.");
  }
  const std::string host_id = kube ? node->host_id : vm.host_id;
  const std::size_t h = host_index(host_id);
  if (h >= hosts.size()) {
    return make_error(ErrorKind::invalid_input, fmt::format("VM '{}' has no host to run on.", vm.name));
  }
  if (!memory_fits(h, vm)) {
    return make_error(
        ErrorKind::conflict,
        fmt::format("Host '{}' has not enough free memory to power on '{}'.", hosts[h].spec.name, vm.name));
  }
  ++vm.boot_count;
  vm.start_received = now_;
  vm.milestones = {};
  vm.visible = {};
  vm.visible_since = {};
  vm.visible_version = {};
  vm.delivered = {};
  vm.written = {};
  vm.current_phase.clear();
  const auto boot_index = static_cast<std::uint64_t>(vm.boot_count);
  vm.never_boots = listed(faults.never_boot_vms, vm.name) ||
                   (faults.never_boot_rate > 0 &&
                    keyed_uniform(seed, vm.name, boot_index, 0xB007) < faults.never_boot_rate);
  vm.agent_never_starts = listed(faults.agent_never_starts_vms, vm.name) ||
                          (faults.agent_never_starts_rate > 0 &&
                           keyed_uniform(seed, vm.name, boot_index, 0xA6E7) < faults.agent_never_starts_rate);
  Boot& boot = boot_of(number);
  boot = Boot{};
  boot.generation = next_generation++;
  boot.powering_on = true;
  boot.on_running = std::move(on_running);
  hosts[h].memory_used_mb += vm.memory_mb;
  boot.memory_host = h;
  changed(vm);
  if (kube) {
    const std::string node_name = node->spec.name;
    const double wait_s = std::max(0.0, options.control_plane_wait_s) + spec.kube.schedule_delay_s;
    boot_timer(number, wait_s, [this, number, node_name, host_id] {
      Vm& v = vms.at(number);
      v.node = node_name;
      v.host_id = host_id;
      v.cluster_id = hosts[host_index(host_id)].cluster_id;
      set_milestone(v, Milestone::scheduled);
      boot_timer(number, spec.kube.launcher_start_s, [this, number] { reach_running(number); });
    });
  } else {
    boot_timer(number, profile->power_on_s, [this, number] { reach_running(number); });
  }
  return {};
}

void Lab::Impl::resume_instant_clone(std::uint64_t number) {
  Vm& vm = vms.at(number);
  ++vm.boot_count;
  vm.start_received = now_;
  Boot& boot = boot_of(number);
  boot = Boot{};
  boot.generation = next_generation++;
  boot.powering_on = true;
  reach_running(number, /*boot_guest=*/false);
  const GuestProfile* profile = find_profile(vm.profile);
  boot_timer(number, profile->instant_resume_s, [this, number] {
    Vm& v = vms.at(number);
    v.current_phase.clear();
    v.tools = ToolsState::running;
    set_milestone(v, Milestone::guest_agent);
    v.ip = guest_ip(number);
    v.host_name = v.name;
    set_milestone(v, Milestone::ip_assigned);
    set_milestone(v, Milestone::port_open);
    set_milestone(v, Milestone::beacon);
    if (beacon_hook && v.guestinfo.count(std::string(kBeaconUrlKey))) beacon_hook(v);
  });
}

Expected<void> Lab::power_on(std::string_view id, DoneCallback on_running, PowerOnOptions options) {
  Impl& m = *impl_;
  m.catch_up();
  const auto number = vm_number(id);
  if (!number || !m.vms.count(*number)) {
    return make_error(ErrorKind::not_found, fmt::format("VM '{}' not found.", id));
  }
  auto result = m.power_on(*number, std::move(on_running), options);
  m.after_mutation();
  return result;
}

bool Lab::admit_memory(std::string_view vm_id) {
  Impl& m = *impl_;
  m.catch_up();
  const Vm* vm = m.vm_ptr(vm_id);
  if (!vm) return true;
  // Already powering on: its memory is held (power_on answers that it is already starting).
  if (auto boot = m.boots.find(vm_number(vm->id).value_or(0));
      boot != m.boots.end() && boot->second.memory_host != kNoIndex)
    return true;
  const std::size_t h = m.host_index(vm->host_id);
  return h >= m.hosts.size() || m.memory_fits(h, *vm);
}

Expected<void> Lab::power_off(std::string_view id, DoneCallback on_off) {
  Impl& m = *impl_;
  m.catch_up();
  const auto number = vm_number(id);
  if (!number || !m.vms.count(*number)) {
    return make_error(ErrorKind::not_found, fmt::format("VM '{}' not found.", id));
  }
  Vm& vm = m.vms.at(*number);
  auto it = m.boots.find(*number);
  const bool starting = it != m.boots.end() && it->second.powering_on;
  const bool stopping = it != m.boots.end() && it->second.powering_off;
  if (stopping)
    return make_error(ErrorKind::conflict, fmt::format("VM '{}' is already powering off.", vm.name));
  if (vm.power == PowerState::powered_off && !starting) {
    return make_error(ErrorKind::conflict, fmt::format("VM '{}' is already powered off.", vm.name));
  }
  m.cancel_boot(*number, "powered off before the operation completed");
  Impl::Boot& boot = m.boot_of(*number);
  boot.generation = m.next_generation++;
  boot.powering_off = true;
  boot.on_off = std::move(on_off);
  const GuestProfile* profile = m.find_profile(vm.profile);
  const std::uint64_t n = *number;
  m.boot_timer(n, profile->power_off_s, [&m, n] {
    Vm& v = m.vms.at(n);
    m.release_host(v);
    m.meter_vm_stopped(n, /*deleted=*/false);
    v.power = PowerState::powered_off;
    v.tools = ToolsState::not_running;
    v.ip.clear();
    v.guest_address.clear();
    v.current_phase.clear();
    auto done = std::move(m.boots.at(n).on_off);
    m.boots.erase(n);
    m.changed(v);
    if (done) done(Expected<void>{});
  });
  m.after_mutation();
  return {};
}

}  // namespace bootstorm::sim::model
