// Ground truth: what really happened to every started VM (true, visible and delivered milestone times), what
// held the boots back, served as /_lab/truth with the fronts' own sections.

#include <nlohmann/json.hpp>

#include "simulator/model/detail/lab_impl.hpp"

namespace bootstorm::sim::model {

namespace {

nlohmann::json samples_json(const IoHistory& history) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : history.samples) {
    const IoCounters& c = s.total;
    out.push_back(nlohmann::json::array(
        {s.at, c.read_bytes, c.write_bytes, c.read_ios, c.write_ios, c.read_seconds, c.write_seconds}));
  }
  return out;
}

}  // namespace

nlohmann::json Lab::Impl::storage_truth_json(const StorageTelemetry& t) const {
  nlohmann::json host_list = nlohmann::json::array();
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    nlohmann::json per_datastore = nlohmann::json::object();
    for (std::size_t d = 0; d < datastores.size(); ++d) {
      const IoHistory& pair = t.host_datastores[h * datastores.size() + d];
      if (!pair.samples.empty()) per_datastore[datastores[d].spec.name] = samples_json(pair);
    }
    host_list.push_back({{"name", hosts[h].spec.name},
                         {"id", hosts[h].id},
                         {"linkMBps", hosts[h].spec.link_mbps},
                         {"link", samples_json(t.host_links[h])},
                         {"datastores", std::move(per_datastore)}});
  }
  nlohmann::json datastore_list = nlohmann::json::array();
  for (std::size_t d = 0; d < datastores.size(); ++d) {
    datastore_list.push_back({{"name", datastores[d].spec.name},
                              {"id", datastores[d].id},
                              {"samples", samples_json(t.datastores[d])}});
  }
  nlohmann::json vm_list = nlohmann::json::array();
  for (const auto& series : t.vms) {
    nlohmann::json entry{{"name", series.name},
                         {"id", series.vm_id},
                         {"begin", series.begin},
                         {"deleted", series.deleted},
                         {"samples", samples_json(series.history)}};
    if (series.end) entry["end"] = *series.end;
    if (!series.namespace_.empty()) entry["namespace"] = series.namespace_;
    if (!series.node.empty()) entry["node"] = series.node;
    if (const std::size_t h = host_index(series.host_id); h < hosts.size())
      entry["host"] = hosts[h].spec.name;
    if (const std::size_t d = datastore_index(series.datastore_id); d < datastores.size()) {
      entry["datastore"] = datastores[d].spec.name;
    }
    vm_list.push_back(std::move(entry));
  }
  return {
      {"step", t.step},
      {"sampledUntil", t.sampled_until},
      {"columns", {"at", "readBytes", "writeBytes", "readIOs", "writeIOs", "readSeconds", "writeSeconds"}},
      {"hosts", std::move(host_list)},
      {"datastores", std::move(datastore_list)},
      {"vms", std::move(vm_list)}};
}

std::string Lab::truth_json() {
  nlohmann::json vms = nlohmann::json::array();
  for (const auto& [number, vm] : impl_->vms) {
    if (!vm.start_received) continue;
    nlohmann::json milestones = nlohmann::json::object();
    for (std::size_t i = 0; i < kMilestoneCount; ++i) {
      if (vm.milestones[i]) milestones[to_string(static_cast<Milestone>(i))] = *vm.milestones[i];
    }
    nlohmann::json visible = nlohmann::json::object();
    nlohmann::json visible_since = nlohmann::json::object();
    nlohmann::json visible_version = nlohmann::json::object();
    nlohmann::json delivered = nlohmann::json::object();
    nlohmann::json written = nlohmann::json::object();
    for (std::size_t i = 0; i < kMilestoneCount; ++i) {
      if (vm.visible[i]) visible[to_string(static_cast<Milestone>(i))] = *vm.visible[i];
      if (vm.visible_since[i]) visible_since[to_string(static_cast<Milestone>(i))] = *vm.visible_since[i];
      if (!vm.visible_version[i].empty())
        visible_version[to_string(static_cast<Milestone>(i))] = vm.visible_version[i];
      if (vm.delivered[i]) delivered[to_string(static_cast<Milestone>(i))] = *vm.delivered[i];
      if (vm.written[i]) written[to_string(static_cast<Milestone>(i))] = *vm.written[i];
    }
    nlohmann::json entry{{"name", vm.name},
                         {"id", vm.id},
                         {"startReceived", *vm.start_received},
                         {"milestones", std::move(milestones)},
                         {"visible", std::move(visible)}};
    if (!visible_since.empty()) entry["visibleSince"] = std::move(visible_since);
    if (!visible_version.empty()) entry["visibleVersion"] = std::move(visible_version);
    if (!delivered.empty()) entry["delivered"] = std::move(delivered);
    if (!written.empty()) entry["written"] = std::move(written);
    if (!vm.namespace_.empty()) entry["namespace"] = vm.namespace_;
    if (const Host* host = find_host(vm.host_id)) entry["host"] = host->spec.name;
    if (!vm.node.empty()) entry["node"] = vm.node;
    vms.push_back(std::move(entry));
  }
  nlohmann::json clones = nlohmann::json::array();
  for (const auto& c : impl_->clone_records) {
    nlohmann::json entry{{"name", c.name},
                         {"kind", to_string(c.kind)},
                         {"datastoreMB", c.datastore_mb},
                         {"linkMB", c.link_mb},
                         {"requested", c.requested}};
    if (c.completed) entry["completed"] = *c.completed;
    if (c.failed) entry["failed"] = true;
    clones.push_back(std::move(entry));
  }
  const BootLimits limits = boot_limits();
  nlohmann::json limit_list = nlohmann::json::array();
  for (const auto& l : limits.limits) {
    nlohmann::json entry{{"kind", std::string(to_string(l.kind))}, {"flowSeconds", l.flow_seconds}};
    if (!l.on.empty()) {
      entry["on"] = l.on;
      entry["capacity"] = l.capacity;
      entry["peakUtilisation"] = l.peak_utilisation;
    }
    limit_list.push_back(std::move(entry));
  }
  nlohmann::json truth{{"vms", std::move(vms)},
                       {"clones", std::move(clones)},
                       {"storage", impl_->storage_truth_json(storage_telemetry())},
                       {"bootLimits",
                        {{"since", limits.since},
                         {"limits", std::move(limit_list)},
                         {"memoryRefusals", limits.memory_refusals}}}};
  for (const auto& [key, section] : impl_->truth_sections) {
    nlohmann::json value = nlohmann::json::parse(section(), nullptr, /*allow_exceptions=*/false);
    if (!value.is_discarded()) truth[key] = std::move(value);
  }
  return truth.dump();
}

void Lab::note_milestone_visible(std::string_view id, Milestone m, double since, double at,
                                 std::string server_version) {
  Vm* vm = impl_->vm_ptr(id);
  if (!vm || !vm->milestones[static_cast<std::size_t>(m)]) return;
  auto& slot = vm->visible[static_cast<std::size_t>(m)];
  if (slot) return;
  slot = at;
  vm->visible_since[static_cast<std::size_t>(m)] = since;
  vm->visible_version[static_cast<std::size_t>(m)] = std::move(server_version);
}

void Lab::note_milestone_delivered(std::string_view id, Milestone m, double at) {
  Vm* vm = impl_->vm_ptr(id);
  if (!vm || !vm->milestones[static_cast<std::size_t>(m)]) return;
  auto& slot = vm->delivered[static_cast<std::size_t>(m)];
  if (!slot) slot = at;
}

void Lab::note_milestone_written(std::string_view id, Milestone m, double at) {
  Vm* vm = impl_->vm_ptr(id);
  if (!vm || !vm->delivered[static_cast<std::size_t>(m)]) return;
  auto& slot = vm->written[static_cast<std::size_t>(m)];
  if (!slot) slot = at;
}

void Lab::set_truth_section(const std::string& key, std::function<std::string()> json_text) {
  if (json_text) {
    impl_->truth_sections[key] = std::move(json_text);
  } else {
    impl_->truth_sections.erase(key);
  }
}

}  // namespace bootstorm::sim::model
