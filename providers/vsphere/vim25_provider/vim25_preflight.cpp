// Vim25Provider::check, `bootstorm check` on vSphere's SOAP API: the API and its build, the inventory (hosts
// connected and out of maintenance, the golden VM and the snapshot linked clones need, the datastore), the
// user's privileges (HasPrivilegeOnEntities), the golden VM's VMware Tools, the datastore's free space for
// the clones, and the hosts' memory for their share of them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>

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

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// A number property (xsd:long, xsd:int) of `object`; nullopt when unset.
std::optional<double> number_of(const ObjectContent& object, const std::string& path) {
  const Value* v = object.prop(path);
  if (!v || v->text.empty()) return std::nullopt;
  return std::atof(v->text.c_str());
}

}  // namespace

boost::asio::awaitable<std::vector<api::CheckResult>> Vim25Provider::check_golden_and_datastore(
    const api::CheckRequest& request) {
  std::vector<api::CheckResult> out;
  const std::vector<MoRef> golden{golden_}, datastore{datastore_};
  const std::string vm_type = "VirtualMachine", datastore_type = "Datastore";
  const std::vector<std::string> vm_paths{"guest.toolsVersionStatus2", "summary.config.memorySizeMB",
                                          "summary.storage.committed"},
      datastore_paths{"name", "summary.freeSpace", "summary.capacity"};
  auto vm = co_await read(golden, vm_type, vm_paths);
  if (!vm || vm->empty()) {
    out.push_back(api::check_result("golden VM Tools", api::CheckStatus::unknown,
                                    "the golden VM " + settings_.vm + " could not be read",
                                    vm ? std::string() : vm.error().what()));
    out.push_back(
        api::check_result("datastore space", api::CheckStatus::unknown, "the golden VM's size is unknown"));
    co_return out;
  }
  const ObjectContent& g = vm->front();

  // VMware Tools: vCenter remembers the installed version of a powered-off VM.
  const Value* tools = g.prop("guest.toolsVersionStatus2");
  const bool needs_tools = request.ready_signal == "guest_agent" || request.ready_signal == "ip_assigned";
  if (!tools || tools->text.empty()) {
    out.push_back(api::check_result(
        "golden VM Tools", api::CheckStatus::unknown,
        "vCenter does not say whether VMware Tools are installed in " + settings_.vm,
        needs_tools ? "without them no clone reaches " + request.ready_signal : std::string()));
  } else if (tools->text == "guestToolsNotInstalled") {
    const std::string finding = settings_.vm + " has no VMware Tools (" + tools->text +
                                "): its clones will report no guest_agent and no IP address";
    out.push_back(needs_tools
                      ? api::check_result("golden VM Tools", api::CheckStatus::fail, finding,
                                          "install VMware Tools (open-vm-tools) in the golden VM, or "
                                          "make ready.signal beacon or running")
                      : api::check_result("golden VM Tools", api::CheckStatus::warn, finding,
                                          "ready.signal " + request.ready_signal +
                                              " does not need them; guest milestones will be missing"));
  } else {
    out.push_back(api::check_result("golden VM Tools", api::CheckStatus::pass,
                                    settings_.vm + ": VMware Tools installed (" + tools->text + ")"));
  }

  // Free space: a full clone copies the golden VM's disks; every clone but an instant one gets a swap file
  // the size of its memory; a linked or instant clone's delta disk grows with the guest's writes, bounded
  // here by 1 GiB.
  auto ds = co_await read(datastore, datastore_type, datastore_paths);
  const std::optional<double> free =
      ds && !ds->empty() ? number_of(ds->front(), "summary.freeSpace") : std::nullopt;
  const std::optional<double> capacity =
      ds && !ds->empty() ? number_of(ds->front(), "summary.capacity") : std::nullopt;
  const std::string ds_name =
      ds && !ds->empty() && ds->front().prop("name") ? ds->front().prop("name")->text : datastore_.value;
  const std::optional<double> memory_mb = number_of(g, "summary.config.memorySizeMB");
  const std::optional<double> committed = number_of(g, "summary.storage.committed");
  std::optional<double> per_clone;
  if (settings_.clone == "instant") {
    per_clone = 1.0 * kGiB;
  } else if (memory_mb && settings_.clone == "linked") {
    per_clone = *memory_mb * 1024 * 1024 + 1.0 * kGiB;
  } else if (memory_mb && committed) {
    per_clone = *memory_mb * 1024 * 1024 + *committed;
  }
  if (!free || !per_clone) {
    out.push_back(api::check_result("datastore space", api::CheckStatus::unknown,
                                    !free ? "datastore " + ds_name + " did not say how much space it has free"
                                          : "the size of " + settings_.vm + "'s clones could not be read",
                                    "check that datastore " + ds_name + " has room for the clones yourself"));
    co_return out;
  }
  const auto n = static_cast<double>(request.total_vms);
  const double need = *per_clone * n;
  const std::string finding =
      fmt::format("datastore {} has {:.1f} GiB free{}; {} {} clone{} need about {:.1f} GiB", ds_name,
                  *free / kGiB, capacity ? fmt::format(" of {:.1f} GiB", *capacity / kGiB) : std::string(),
                  request.total_vms, settings_.clone, request.total_vms == 1 ? "" : "s", need / kGiB);
  if (need > *free) {
    out.push_back(
        api::check_result("datastore space", api::CheckStatus::fail, finding,
                          "free space, name a larger datastore (golden.datastore), or run fewer VMs"));
  } else if (need > 0.9 * *free) {
    out.push_back(api::check_result("datastore space", api::CheckStatus::warn, finding,
                                    "the clones would leave the datastore nearly full; a full datastore "
                                    "stops every VM on it"));
  } else {
    out.push_back(api::check_result("datastore space", api::CheckStatus::pass, finding));
  }
  co_return out;
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
  std::string golden = "golden VM " + settings_.vm;
  if (settings_.clone == "linked")
    golden += settings_.snapshot.empty() ? " (the run takes its own snapshot for linked clones)"
                                         : " with snapshot " + settings_.snapshot;
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
  auto golden_and_datastore = co_await check_golden_and_datastore(request);
  for (auto& r : golden_and_datastore) out.push_back(std::move(r));
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
