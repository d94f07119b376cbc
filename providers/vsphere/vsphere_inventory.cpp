// VsphereProvider::check_inventory: the plan's hosts, golden VM and datastore exist in vCenter and can take
// the clones (host state, instant-clone placement, free space).
#include <algorithm>
#include <boost/asio/use_awaitable.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "providers/vsphere/detail/json_fields.hpp"
#include "providers/vsphere/vsphere_provider.hpp"

namespace bootstorm::vsphere {

namespace asio = boost::asio;
using json = nlohmann::json;
using detail::str_field;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string join_names(std::vector<std::string> names, std::size_t limit = 30) {
  std::sort(names.begin(), names.end());
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < limit; ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  if (names.size() > limit) out += ", ... (" + std::to_string(names.size() - limit) + " more)";
  if (names.empty()) out = "(none)";
  return out;
}

// "[lab-ds01] golden/golden.vmdk" -> "lab-ds01" for the first disk that has a VMDK backing ("" if none).
std::string datastore_of_first_disk(const json& info) {
  if (!info.is_object() || !info.contains("disks")) return {};
  std::vector<const json*> disks;
  const auto& d = info["disks"];
  if (d.is_object())
    for (const auto& [key, disk] : d.items()) disks.push_back(&disk);
  else if (d.is_array())  // /rest: maps are arrays of {key, value}
    for (const auto& kv : d)
      if (kv.is_object() && kv.contains("value")) disks.push_back(&kv["value"]);
  for (const json* disk : disks) {
    if (!disk->is_object() || !disk->contains("backing")) continue;
    const auto file = str_field((*disk)["backing"], "vmdk_file");
    if (file.size() > 2 && file.front() == '[') {
      auto close = file.find(']');
      if (close != std::string::npos) return file.substr(1, close - 1);
    }
  }
  return {};
}

}  // namespace

double VsphereProvider::estimated_clone_bytes(const json& info) const {
  double disks = 0;
  if (info.is_object() && info.contains("disks")) {
    const auto& d = info["disks"];
    auto add = [&](const json& disk) {
      if (disk.is_object() && disk.contains("capacity") && disk["capacity"].is_number())
        disks += disk["capacity"].get<double>();
    };
    if (d.is_object()) {
      for (const auto& [key, disk] : d.items()) add(disk);
    } else if (d.is_array()) {  // /rest: maps are arrays of {key, value}
      for (const auto& kv : d)
        if (kv.is_object() && kv.contains("value")) add(kv["value"]);
    }
  }
  double memory = 0;
  if (info.is_object() && info.contains("memory") && info["memory"].is_object() &&
      info["memory"].contains("size_MiB") && info["memory"]["size_MiB"].is_number())
    memory = info["memory"]["size_MiB"].get<double>() * 1024 * 1024;
  // Full clones copy every disk and get a swap file the size of memory; instant clones share the parent's
  // disks and memory and grow delta disks, bounded here by 1 GiB each.
  if (instant()) return 1.0 * kGiB;
  return disks + memory;
}

asio::awaitable<Expected<void>> VsphereProvider::check_inventory(const api::InventoryRequest& request) {
  if (inventory_checked_ && checked_request_.hosts == request.hosts &&
      checked_request_.total_vms == request.total_vms)
    co_return Expected<void>{};  // check() asked
  const std::string& url = config_.endpoint;
  // Hosts: exist, connected, powered on.
  auto hosts = co_await get_json(session_.paths().host_list(), "listing hosts");
  if (!hosts) co_return hosts.error();
  std::map<std::string, json> by_name;
  std::vector<std::string> all_hosts;
  if (hosts->is_array())
    for (const auto& h : *hosts) {
      by_name[str_field(h, "name")] = h;
      all_hosts.push_back(str_field(h, "name"));
    }
  std::vector<std::string> missing;
  std::set<std::string> wanted(request.hosts.begin(), request.hosts.end());
  for (const auto& name : wanted) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      missing.push_back(name);
      continue;
    }
    const auto conn = str_field(it->second, "connection_state");
    const auto power = str_field(it->second, "power_state");
    if (conn != "CONNECTED" || (!power.empty() && power != "POWERED_ON"))
      co_return make_error(ErrorKind::invalid_input,
                           "host " + name + " in vCenter " + url + " cannot take VMs: connection_state " +
                               conn + (power.empty() ? "" : ", power_state " + power),
                           "reconnect / power on the host or remove it from the plan's placement");
    host_ids_[name] = str_field(it->second, "host");
  }
  if (!missing.empty())
    co_return make_error(ErrorKind::not_found,
                         std::string(missing.size() == 1 ? "host " : "hosts ") + join_names(missing) +
                             " not found in vCenter " + url + "; hosts: " + join_names(all_hosts),
                         "fix the plan's placement host names");

  // Golden VM: exists, in the right power state for the clone type.
  if (settings_.vm.empty())
    co_return make_error(ErrorKind::invalid_input, "the plan names no golden VM (golden.vm)");
  const std::string golden_target = session_.paths().vm_list(ListFilter{{"names", {settings_.vm}}});
  auto golden = co_await get_json(golden_target, "looking up golden VM");
  if (!golden) co_return golden.error();
  if (!golden->is_array() || golden->empty()) {
    std::string listing;
    auto all = co_await get_json(session_.paths().vm_list(), "listing VMs");
    if (all && all->is_array()) {
      std::vector<std::string> names;
      for (const auto& v : *all) names.push_back(str_field(v, "name"));
      listing = "; VMs: " + join_names(names);
    }
    co_return make_error(ErrorKind::not_found,
                         "golden VM " + settings_.vm + " not found in vCenter " + url + listing,
                         "fix golden.vm in the plan");
  }
  if (golden->size() > 1)
    co_return make_error(ErrorKind::invalid_input,
                         "golden VM name " + settings_.vm + " is ambiguous in vCenter " + url + ": " +
                             std::to_string(golden->size()) + " VMs carry it",
                         "rename the duplicates or name a unique golden VM");
  golden_id_ = str_field((*golden)[0], "vm");
  const auto golden_power = str_field((*golden)[0], "power_state");
  if (instant() && golden_power != "POWERED_ON")
    co_return make_error(ErrorKind::invalid_input,
                         "golden VM " + settings_.vm + " is " + golden_power + " in vCenter " + url +
                             "; instant clones need a powered-on source",
                         "power the golden VM on, or use golden.clone: full");
  if (instant()) {
    // Instant clones run on the source's host: every placement host must be the golden VM's host.
    for (const auto& name : wanted) {
      const std::string target =
          session_.paths().vm_list(ListFilter{{"names", {settings_.vm}}, {"hosts", {host_ids_[name]}}});
      auto on_host = co_await get_json(target, "locating the golden VM's host");
      if (!on_host) co_return on_host.error();
      if (!on_host->is_array() || on_host->empty())
        co_return make_error(ErrorKind::invalid_input,
                             "instant clones of " + settings_.vm + " cannot be placed on host " + name +
                                 ": the vCenter REST instant-clone spec has no host placement, so clones run "
                                 "on the golden VM's host, and " +
                                 settings_.vm + " is not on " + name,
                             "place the scenario on the golden VM's host or use golden.clone: full");
    }
  }
  if (settings_.clone == "linked" && !warned_linked_) {
    warned_linked_ = true;
    spdlog::warn(
        "golden.clone: linked — the vCenter REST API has no linked-clone option (VM.CloneSpec); "
        "bootstorm makes full clones (POST /api/vcenter/vm?action=clone). Use the SOAP API or "
        "golden.clone: instant for shared-disk clones.");
  }

  // Datastore: the named one, else the golden VM's (from its first disk's "[datastore] path" backing), else
  // the first one vCenter lists; then room for the clones.
  auto golden_info = co_await get_json(session_.paths().vm(golden_id_), "reading the golden VM");
  if (golden_info) golden_guest_os_ = str_field(*golden_info, "guest_OS");
  std::string wanted_store = settings_.datastore;
  if (wanted_store.empty() && golden_info) wanted_store = datastore_of_first_disk(*golden_info);
  auto stores = co_await get_json(session_.paths().datastore_list(), "listing datastores");
  if (!stores) co_return stores.error();
  std::vector<std::string> all_stores;
  const json* chosen = nullptr;
  if (stores->is_array()) {
    for (const auto& d : *stores) {
      all_stores.push_back(str_field(d, "name"));
      if (!chosen && (wanted_store.empty() || str_field(d, "name") == wanted_store)) chosen = &d;
    }
    if (!chosen && settings_.datastore.empty() && !stores->empty()) chosen = &(*stores)[0];
  }
  if (!chosen)
    co_return make_error(ErrorKind::not_found,
                         (settings_.datastore.empty() ? std::string("no datastore found")
                                                      : "datastore " + settings_.datastore + " not found") +
                             " in vCenter " + url + "; datastores: " + join_names(all_stores),
                         "fix golden.datastore in the plan");
  datastore_id_ = str_field(*chosen, "datastore");
  datastore_name_ = str_field(*chosen, "name");
  if (chosen->contains("free_space") && (*chosen)["free_space"].is_number() && request.total_vms > 0) {
    const double free = (*chosen)["free_space"].get<double>();
    const auto& info = golden_info;
    if (!info) {
      spdlog::warn("could not size the clones of {} ({}); checking only that datastore {} has free space",
                   settings_.vm, info.error().what(), datastore_name_);
      if (free <= 0)
        co_return make_error(ErrorKind::invalid_input,
                             "datastore " + datastore_name_ + " in vCenter " + url + " has no free space");
    } else {
      const double need = estimated_clone_bytes(*info) * static_cast<double>(request.total_vms);
      if (need > free)
        co_return make_error(
            ErrorKind::invalid_input,
            fmt::format(
                "datastore {} in vCenter {} has {:.1f} GiB free; {} {} clones of {} need about {:.1f} GiB",
                datastore_name_, url, free / kGiB, request.total_vms, instant() ? "instant" : "full",
                settings_.vm, need / kGiB),
            "free space, name a larger datastore (golden.datastore) or run fewer VMs");
    }
  }
  inventory_checked_ = true;
  checked_request_ = request;
  spdlog::info("vCenter inventory ok: {} host(s), golden VM {} ({}, {}), datastore {}", wanted.size(),
               settings_.vm, golden_id_, golden_power, datastore_name_);
  co_return Expected<void>{};
}

}  // namespace bootstorm::vsphere
