// Vim25Provider::check, `bootstorm check` on vSphere's SOAP API: the API and its build, the inventory (hosts
// connected and out of maintenance, the golden VM and the snapshot linked clones need, the datastore), the
// user's privileges (HasPrivilegeOnEntities), and the hosts' memory for their share of the clones.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "providers/vsphere/vim25_provider/vim25_provider.hpp"

namespace bootstorm::vsphere::vim25 {

boost::asio::awaitable<api::CheckResult> Vim25Provider::check_host_memory(const api::CheckRequest& request) {
  std::vector<MoRef> hosts;
  for (const auto& [name, host] : hosts_) hosts.push_back({"HostSystem", host.id});
  const std::vector<MoRef> golden{golden_};
  const std::string host_type = "HostSystem", vm_type = "VirtualMachine";
  const std::vector<std::string> host_paths{"name", "hardware.memorySize"},
      vm_paths{"config.hardware.memoryMB"};
  auto memory = co_await read(hosts, host_type, host_paths);
  auto sizing = co_await read(golden, vm_type, vm_paths);
  if (!memory || !sizing || sizing->empty() || !sizing->front().prop("config.hardware.memoryMB")) {
    co_return api::check_result("host memory", api::CheckStatus::unknown,
                                "the hosts' memory or the golden VM's size could not be read",
                                "check the hosts' memory against the placement yourself");
  }
  const double vm_mb = std::atof(sizing->front().prop("config.hardware.memoryMB")->text.c_str());
  std::vector<std::string> over;
  std::string fullest;
  double fullest_share = -1;
  for (const auto& h : *memory) {
    const Value* n = h.prop("name");
    const Value* m = h.prop("hardware.memorySize");
    if (!n || !m) continue;
    auto share = request.vms_per_host.find(n->text);
    if (share == request.vms_per_host.end()) continue;
    const double host_mb = std::atof(m->text.c_str()) / (1024.0 * 1024);
    if (host_mb <= 0) continue;
    const double wanted_mb = share->second * vm_mb;
    if (wanted_mb > host_mb)
      over.push_back(fmt::format("{}: {} VMs x {:.0f} MB = {:.0f} GB configured, {:.0f} GB of memory",
                                 n->text, share->second, vm_mb, wanted_mb / 1024, host_mb / 1024));
    if (wanted_mb / host_mb > fullest_share) {
      fullest_share = wanted_mb / host_mb;
      fullest =
          fmt::format("the fullest, {}, gets {:.0f} of {:.0f} GB", n->text, wanted_mb / 1024, host_mb / 1024);
    }
  }
  if (!over.empty()) {
    // ESXi overcommits memory: the VMs power on, then balloon and swap; the storm measures that, not the
    // boot.
    co_return api::check_result(
        "host memory", api::CheckStatus::warn,
        fmt::format("memory is overcommitted: {}", fmt::join(over, "; ")),
        "expect ballooning and swapping during the storm; place fewer VMs on those hosts to measure "
        "boots alone");
  }
  co_return api::check_result("host memory", api::CheckStatus::pass,
                              fullest.empty() ? std::string("every host has memory for its VMs")
                                              : "every host has memory for its VMs; " + fullest);
}

boost::asio::awaitable<std::vector<api::CheckResult>> Vim25Provider::check(const api::CheckRequest& request) {
  std::vector<api::CheckResult> out;
  out.push_back(api::check_result(
      "API", api::CheckStatus::pass,
      "answered: " + api::describe(facts_) + ", vim25 API " + session_.service_content().about.api_version));
  api::InventoryRequest inventory;
  for (const auto& [host, vms] : request.vms_per_host) inventory.hosts.push_back(host);
  inventory.total_vms = request.total_vms;
  auto resolved = co_await resolve_inventory(inventory);
  if (!resolved) {
    out.push_back(api::failed_check("inventory", resolved.error()));
    co_return out;
  }
  std::string golden = "golden VM " + config_.golden_vm;
  if (config_.clone_type == "linked")
    golden += config_.golden_snapshot.empty() ? " (the run takes its own snapshot for linked clones)"
                                              : " with snapshot " + config_.golden_snapshot;
  out.push_back(api::check_result("inventory", api::CheckStatus::pass,
                                  fmt::format("{} host{} connected and out of maintenance; {}", hosts_.size(),
                                              hosts_.size() == 1 ? "" : "s", golden)));
  auto privileges = co_await check_privileges();
  if (!privileges) {
    out.push_back(api::failed_check("privileges", privileges.error()));
  } else if (!privileges->asked) {
    out.push_back(
        api::check_result("privileges", api::CheckStatus::unknown, privileges->why_not,
                          "a missing privilege will fail the first call that needs it; README lists the "
                          "role a run needs"));
  } else {
    out.push_back(api::check_result(
        "privileges", api::CheckStatus::pass,
        fmt::format("the user holds all {} privileges the run uses, on the objects it uses them on",
                    privileges->privileges)));
  }
  co_await learn_hosts();
  auto memory = co_await check_host_memory(request);
  out.push_back(std::move(memory));
  if (api::worst(out) != api::CheckStatus::fail) {
    inventory_checked_ = true;
    checked_request_ = inventory;
  }
  co_return out;
}

}  // namespace bootstorm::vsphere::vim25
