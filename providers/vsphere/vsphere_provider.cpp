#include "providers/vsphere/vsphere_provider.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <set>

#include "common/async/sleep.hpp"
#include "common/async/token_bucket.hpp"
#include "common/log.hpp"
#include "providers/vsphere/milestone_tracker.hpp"
#include "providers/vsphere/vcenter_error.hpp"

namespace bootstorm::vsphere {

namespace asio = boost::asio;
using json = nlohmann::json;
using steady = std::chrono::steady_clock;
using wall = std::chrono::system_clock;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kBudgetHeadroom = 0.95;

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

std::string str_field(const json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return {};
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

// Probe instants of one exchange. `sent` is stamped just before the request is handed to the transport: the
// client's own written_at is stamped when the write completion runs, which under load comes measurably after
// the server already answered, and a late lower bound would understate the resolution. `arrived` is when
// the response headers were read (late rather than early, which only widens the bound). Wall time is
// derived from the steady clock so that both clocks describe the same instant.
Probe probe_of(const http::Response& resp, steady::time_point before) {
  Probe p;
  const auto now_mono = steady::now();
  const auto now_wall = wall::now();
  p.sent = before;
  p.arrived = resp.received_at != steady::time_point{} ? resp.received_at : now_mono;
  p.arrived_wall = now_wall - std::chrono::duration_cast<wall::duration>(now_mono - p.arrived);
  return p;
}

}  // namespace

// Shared state of one observe() call.
struct VsphereProvider::Observation {
  Observation(asio::any_io_executor ex, steady::time_point baseline)
      : tracker({api::Milestone::running, api::Milestone::guest_agent, api::Milestone::ip_assigned},
                baseline),
        wake(ex, steady::time_point::max()) {}
  MilestoneTracker tracker;
  std::map<std::string, std::string> ids;  // name -> vm id
  std::vector<std::string> order;          // names, round-robin order
  api::MilestoneSink sink;
  std::shared_ptr<bool> stopped = std::make_shared<bool>(false);
  asio::steady_timer wake;  // woken when a probe finishes or stop fires
  std::size_t in_flight = 0;
  steady::time_point last_list{};

  void emit(std::vector<api::MilestoneEvent> events) {
    for (auto& e : events) sink(std::move(e));
  }
};

VsphereProvider::VsphereProvider(asio::any_io_executor executor, api::ProviderConfig config,
                                 std::unique_ptr<Transport> transport)
    : executor_(executor),
      config_(std::move(config)),
      transport_(std::move(transport)),
      session_(executor, *transport_, config_.endpoint, config_.username, config_.password,
               config_.request_timeout),
      clone_slots_(executor, static_cast<std::size_t>(std::max(1, config_.max_concurrent))) {
  if (config_.requests_per_second <= 0)
    throw std::invalid_argument("vsphere provider: apiBudget.requestsPerSecond must be > 0");
}

VsphereProvider::~VsphereProvider() = default;

api::Capabilities VsphereProvider::capabilities() const {
  api::Capabilities caps;
  // Typical resolutions: power states come from one list call per round (at least every list_interval),
  // Tools and guest identity from per-VM polls whose period is (pending VMs / budget); quoted here for a
  // storm of up to `requests_per_second` VMs, the actual per-event value is in every MilestoneEvent.
  const double per_round = std::max(1.0 / config_.requests_per_second, 0.001);
  caps.observed[api::Milestone::running] =
      std::min(std::chrono::duration<double>(tuning_.list_interval).count(), 2.0 * per_round);
  caps.observed[api::Milestone::guest_agent] = 1.0;
  caps.observed[api::Milestone::ip_assigned] = 1.0;
  caps.start_blocks_until_powered_on = true;
  return caps;
}

Error VsphereProvider::refuse_foreign(const std::string& verb, const std::string& name) const {
  return make_error(
      ErrorKind::invalid_input,
      "refusing to " + verb + " VM " + name + ": its name does not carry run id " + config_.run_id,
      "bootstorm only touches VMs named bs-<run id>-...");
}

void VsphereProvider::log_dry_run(const std::string& method, const std::string& target,
                                  const std::string& body) const {
  spdlog::info("dry run: would {} {}{}{} on vCenter at {}", method, target, body.empty() ? "" : " ", body,
               config_.endpoint);
}

asio::awaitable<Expected<json>> VsphereProvider::get_json(const std::string& target, const std::string& what,
                                                          CallOptions options) {
  auto resp = co_await session_.call("GET", target, {}, options);
  if (!resp) {
    Error e = resp.error();
    e.message = what + " (GET " + target + ") at " + config_.endpoint + " failed: " + e.message;
    co_return e;
  }
  if (resp->status != 200)
    co_return to_error(parse_vcenter_error(resp->status, resp->body), what + " (GET " + target + ")",
                       config_.endpoint);
  auto body = json::parse(resp->body, nullptr, false);
  if (body.is_discarded())
    co_return make_error(ErrorKind::protocol,
                         what + " (GET " + target + ") at " + config_.endpoint + " returned malformed JSON");
  co_return session_.paths().unwrap(body);
}

asio::awaitable<Expected<void>> VsphereProvider::connect() {
  log::register_secret(config_.password);
  auto r = co_await session_.login();
  if (!r) co_return r;
  spdlog::info("connected to vCenter at {} as {} ({} API)", config_.endpoint, config_.username,
               dialect() == Dialect::api ? "/api" : "legacy /rest");
  co_return Expected<void>{};
}

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
  if (config_.golden_vm.empty())
    co_return make_error(ErrorKind::invalid_input, "the plan names no golden VM (golden.vm)");
  const std::string golden_target = session_.paths().vm_list(ListFilter{{"names", {config_.golden_vm}}});
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
                         "golden VM " + config_.golden_vm + " not found in vCenter " + url + listing,
                         "fix golden.vm in the plan");
  }
  if (golden->size() > 1)
    co_return make_error(ErrorKind::invalid_input,
                         "golden VM name " + config_.golden_vm + " is ambiguous in vCenter " + url + ": " +
                             std::to_string(golden->size()) + " VMs carry it",
                         "rename the duplicates or name a unique golden VM");
  golden_id_ = str_field((*golden)[0], "vm");
  const auto golden_power = str_field((*golden)[0], "power_state");
  if (instant() && golden_power != "POWERED_ON")
    co_return make_error(ErrorKind::invalid_input,
                         "golden VM " + config_.golden_vm + " is " + golden_power + " in vCenter " + url +
                             "; instant clones need a powered-on source",
                         "power the golden VM on, or use golden.clone: full");
  if (instant()) {
    // Instant clones run on the source's host: every placement host must be the golden VM's host.
    for (const auto& name : wanted) {
      const std::string target =
          session_.paths().vm_list(ListFilter{{"names", {config_.golden_vm}}, {"hosts", {host_ids_[name]}}});
      auto on_host = co_await get_json(target, "locating the golden VM's host");
      if (!on_host) co_return on_host.error();
      if (!on_host->is_array() || on_host->empty())
        co_return make_error(ErrorKind::invalid_input,
                             "instant clones of " + config_.golden_vm + " cannot be placed on host " + name +
                                 ": the vCenter REST instant-clone spec has no host placement, so clones run "
                                 "on the golden VM's host, and " +
                                 config_.golden_vm + " is not on " + name,
                             "place the scenario on the golden VM's host or use golden.clone: full");
    }
  }
  if (config_.clone_type == "linked" && !warned_linked_) {
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
  std::string wanted_store = config_.datastore;
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
    if (!chosen && config_.datastore.empty() && !stores->empty()) chosen = &(*stores)[0];
  }
  if (!chosen)
    co_return make_error(ErrorKind::not_found,
                         (config_.datastore.empty() ? std::string("no datastore found")
                                                    : "datastore " + config_.datastore + " not found") +
                             " in vCenter " + url + "; datastores: " + join_names(all_stores),
                         "fix golden.datastore in the plan");
  datastore_id_ = str_field(*chosen, "datastore");
  datastore_name_ = str_field(*chosen, "name");
  if (chosen->contains("free_space") && (*chosen)["free_space"].is_number() && request.total_vms > 0) {
    const double free = (*chosen)["free_space"].get<double>();
    const auto& info = golden_info;
    if (!info) {
      spdlog::warn("could not size the clones of {} ({}); checking only that datastore {} has free space",
                   config_.golden_vm, info.error().what(), datastore_name_);
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
                config_.golden_vm, need / kGiB),
            "free space, name a larger datastore (golden.datastore) or run fewer VMs");
    }
  }
  inventory_checked_ = true;
  spdlog::info("vCenter inventory ok: {} host(s), golden VM {} ({}, {}), datastore {}", wanted.size(),
               config_.golden_vm, golden_id_, golden_power, datastore_name_);
  co_return Expected<void>{};
}

async::AsyncSemaphore& VsphereProvider::host_semaphore(const std::string& host_id) {
  auto& slot = host_clone_slots_[host_id];
  if (!slot) slot = std::make_unique<async::AsyncSemaphore>(executor_, kClonesPerHost);
  return *slot;
}

asio::awaitable<Expected<api::VmHandle>> VsphereProvider::provision(const api::VmSpec& spec) {
  if (!api::name_carries_run_id(spec.name, config_.run_id))
    co_return make_error(ErrorKind::invalid_input, "refusing to create VM " + spec.name +
                                                       ": its name does not carry run id " + config_.run_id +
                                                       ", so cleanup could not find it");
  if (!inventory_checked_ || !host_ids_.count(spec.host)) {
    api::InventoryRequest single;
    single.hosts.push_back(spec.host);
    auto r = co_await check_inventory(single);
    if (!r) co_return r.error();
  }
  const std::string host_id = host_ids_.at(spec.host);

  json spec_body;
  spec_body["source"] = golden_id_;
  spec_body["name"] = spec.name;
  if (instant()) {
    spec_body["placement"] = {{"datastore", datastore_id_}};
  } else {
    spec_body["placement"] = {{"host", host_id}, {"datastore", datastore_id_}};
    spec_body["power_on"] = false;
  }
  const std::string target = session_.paths().clone(instant());
  const std::string body = session_.paths().wrap_spec(spec_body).dump();
  api::VmHandle handle{spec.name, {}, spec.host, spec.scenario};
  if (config_.dry_run) {
    log_dry_run("POST", target, body);
    handle.id = "dry-run:" + spec.name;
    auto handed = co_await hand_over_beacon(handle);
    if (!handed) co_return handed.error();
    co_return handle;
  }

  // Narrowest limit first, so that a clone queued behind a busy host does not hold a datastore or an
  // overall slot that clones to other hosts could use.
  auto host_permit = co_await async::acquire(host_semaphore(host_id));
  if (!datastore_clone_slots_)
    datastore_clone_slots_ = std::make_unique<async::AsyncSemaphore>(
        executor_, std::max<std::size_t>(1, tuning_.clones_per_datastore));
  auto datastore_permit = co_await async::acquire(*datastore_clone_slots_);
  auto overall = co_await async::acquire(clone_slots_);

  CallOptions options;
  options.idempotent = false;
  // A clone call blocks for the whole copy; a deadline shorter than that would abandon a running clone.
  options.timeout = std::max(config_.request_timeout, std::chrono::milliseconds(std::chrono::hours(1)));
  const std::string what = std::string(instant() ? "instant clone" : "clone") + " of " + config_.golden_vm +
                           " to " + spec.name + " on host " + spec.host;
  // A clone is not idempotent, so the HTTP layer does not retry it. A 503 SERVICE_UNAVAILABLE means vCenter
  // did not take the call; retry it a few times with backoff. Before each retry, look the name up: if an
  // earlier attempt did create the clone (the answer was lost), adopt it — the name carries this run's id,
  // so it can only be ours — instead of failing on a duplicate name.
  auto resp = co_await session_.call("POST", target, body, options);
  for (int attempt = 1; attempt < kCloneAttempts && resp && resp->status == 503; ++attempt) {
    asio::steady_timer backoff(executor_, std::chrono::milliseconds(200) * (1 << (attempt - 1)));
    co_await backoff.async_wait(asio::use_awaitable);
    const std::vector<std::string> names{spec.name};
    auto existing = co_await list_vm_ids(names);
    if (existing && existing->count(spec.name) != 0) {
      spdlog::info("{}: an earlier attempt answered 503 but created {}; using it", what, spec.name);
      handle.id = existing->at(spec.name);
      co_return co_await finish_clone(std::move(handle));
    }
    spdlog::debug("{}: vCenter answered 503, retrying (attempt {} of {})", what, attempt + 1, kCloneAttempts);
    resp = co_await session_.call("POST", target, body, options);
  }
  if (!resp) {
    Error e = resp.error();
    e.message = what + " at " + config_.endpoint + " failed: " + e.message;
    co_return e;
  }
  if (resp->status != 200 && resp->status != 201)
    co_return to_error(parse_vcenter_error(resp->status, resp->body), what, config_.endpoint);
  auto id = session_.paths().unwrap(json::parse(resp->body, nullptr, false));
  if (!id.is_string())
    co_return make_error(ErrorKind::protocol, what + " at " + config_.endpoint + " returned no VM id");
  handle.id = id.get<std::string>();
  co_return co_await finish_clone(std::move(handle));
}

asio::awaitable<Expected<api::VmHandle>> VsphereProvider::finish_clone(api::VmHandle handle) {
  // An instant clone comes up running (it forks the parent's memory): stop it so that the storm starts it.
  if (instant()) {
    auto off = co_await power_stop(handle.id, handle.name);
    if (!off) co_return off.error();
  }
  auto handed = co_await hand_over_beacon(handle);
  if (!handed) co_return handed.error();
  co_return handle;
}

std::string beacon_cloud_init_user_data(const std::string& vm_name, const std::string& beacon_url,
                                        const std::string& token) {
  // The same file and unit as the KubeVirt provider's cloud-init (deploy/guest/linux/cloud-init.yaml).
  std::string out = "#cloud-config\n";
  out += "write_files:\n";
  out += "  - path: /etc/bootstorm/beacon.env\n";
  out += "    permissions: \"0600\"\n";
  out += "    content: |\n";
  out += "      BOOTSTORM_BEACON_URL=" + beacon_url + "\n";
  out += "      BOOTSTORM_BEACON_TOKEN=" + token + "\n";
  out += "      BOOTSTORM_VM_NAME=" + vm_name + "\n";
  out += "runcmd:\n";
  out += "  - [systemctl, start, --no-block, bootstorm-beacon.service]\n";
  return out;
}

json beacon_customization_spec(const std::string& vm_name, const std::string& beacon_url,
                               const std::string& token) {
  // guest.CustomizationSpec requires configuration_spec, global_DNS_settings and interfaces; with a cloud
  // configuration the network comes from cloud-init (DHCP by default), so the last two stay empty.
  json cloudinit{{"metadata", "instance-id: " + vm_name + "\nlocal-hostname: " + vm_name + "\n"},
                 {"userdata", beacon_cloud_init_user_data(vm_name, beacon_url, token)}};
  return json{{"spec",
               {{"configuration_spec", {{"cloud_config", {{"type", "CLOUDINIT"}, {"cloudinit", cloudinit}}}}},
                {"global_DNS_settings", json::object()},
                {"interfaces", json::array()}}}};
}

asio::awaitable<Expected<void>> VsphereProvider::hand_over_beacon(const api::VmHandle& vm) {
  if (config_.beacon_url.empty() || !config_.beacon_token) co_return Expected<void>{};
  if (golden_guest_os_.rfind("WIN", 0) == 0) {
    if (!warned_beacon_windows_) {
      warned_beacon_windows_ = true;
      spdlog::warn(
          "ready: beacon on vSphere — golden VM {} is a Windows guest ({}): bootstorm hands the beacon URL "
          "and token to Linux guests only (cloud-init guest customization). The Windows agent must read them "
          "from guestinfo set in the golden image; see deploy/guest/README.md, \"vSphere\"",
          config_.golden_vm, golden_guest_os_);
    }
    co_return Expected<void>{};
  }
  const std::string token = config_.beacon_token(vm.name);
  log::register_secret(token);
  const std::string target = session_.paths().guest_customization(vm.id);
  const std::string body =
      session_.paths().wrap_spec(beacon_customization_spec(vm.name, config_.beacon_url, token)).dump();
  if (config_.dry_run) {
    log_dry_run("PUT", target, body);
    co_return Expected<void>{};
  }
  CallOptions options;
  options.idempotent = true;  // PUT replaces the pending customization: safe to repeat
  const std::string what = "setting the beacon guest customization of " + vm.name;
  auto resp = co_await session_.call("PUT", target, body, options);
  for (int attempt = 1; attempt < 5 && resp && resp->status == 503; ++attempt) {
    session_.count_retry();
    co_await async::sleep_for(std::chrono::milliseconds(250 * attempt));
    resp = co_await session_.call("PUT", target, body, options);
  }
  if (!resp) {
    Error e = resp.error();
    e.message = what + " (PUT " + target + ") at " + config_.endpoint + " failed: " + e.message;
    co_return e;
  }
  if (resp->status != 200 && resp->status != 204) {
    Error e = to_error(parse_vcenter_error(resp->status, resp->body), what + " (PUT " + target + ")",
                       config_.endpoint);
    if (e.hint.empty())
      e.hint =
          "vSphere 7.0U3 or later and VirtualMachine.Provisioning.Customize are needed for ready: beacon";
    co_return e;
  }
  co_return Expected<void>{};
}

asio::awaitable<Expected<std::string>> VsphereProvider::resolve_vm_id(const api::VmHandle& vm) {
  if (!vm.id.empty()) co_return vm.id;
  const std::vector<std::string> names{vm.name};
  auto ids = co_await list_vm_ids(names);
  if (!ids) co_return ids.error();
  auto it = ids->find(vm.name);
  if (it == ids->end()) co_return std::string{};
  co_return it->second;
}

asio::awaitable<Expected<void>> VsphereProvider::wait_startable(const api::VmHandle& vm,
                                                                std::chrono::milliseconds timeout) {
  if (config_.dry_run) co_return Expected<void>{};
  const auto deadline = steady::now() + timeout;
  std::string last_state;
  for (;;) {
    auto power = co_await get_json(session_.paths().power(vm.id), "reading the power state of " + vm.name);
    if (!power) co_return power.error();
    last_state = str_field(*power, "state");
    if (last_state == "POWERED_OFF") co_return Expected<void>{};
    if (steady::now() >= deadline)
      co_return make_error(ErrorKind::timeout,
                           "VM " + vm.name + " in vCenter " + config_.endpoint + " is still " + last_state +
                               " after " + std::to_string(timeout.count()) +
                               " ms; it cannot be storm-started",
                           "power it off or remove it");
    co_await async::sleep_for(tuning_.startable_poll);
  }
}

asio::awaitable<Expected<void>> VsphereProvider::prepare_storm(std::size_t expected_starts) {
  if (!session_.logged_in()) {
    auto r = co_await session_.login();
    if (!r) co_return r;
  }
  const auto count =
      std::min<std::size_t>(expected_starts, static_cast<std::size_t>(std::max(1, config_.max_concurrent)));
  auto r = co_await transport_->prewarm(count);
  if (!r) {
    Error e = r.error();
    e.message = "opening " + std::to_string(count) + " connections to vCenter at " + config_.endpoint +
                " failed: " + e.message;
    co_return e;
  }
  co_return Expected<void>{};
}

asio::awaitable<Expected<api::StartResult>> VsphereProvider::start(const api::VmHandle& vm) {
  if (!api::name_carries_run_id(vm.name, config_.run_id)) co_return refuse_foreign("start", vm.name);
  const std::string target = session_.paths().power_action(vm.id, "start");
  if (config_.dry_run) {
    log_dry_run("POST", target, {});
    api::StartResult r;
    r.written_mono = r.acknowledged_mono = steady::now();
    r.written_wall = r.acknowledged_wall = wall::now();
    co_return r;
  }
  constexpr int kMaxAttempts = 6;
  api::StartResult result;
  result.attempts = 0;
  std::chrono::milliseconds backoff{250};
  for (int round = 1;; ++round) {
    CallOptions options;
    options.idempotent = true;  // power start is safe to repeat: a repeat answers ALREADY_IN_DESIRED_STATE
    options.urgent = true;
    auto resp = co_await session_.call("POST", target, {}, options);
    if (!resp) {
      Error e = resp.error();
      e.message = "power start of " + vm.name + " at " + config_.endpoint + " failed: " + e.message;
      co_return e;
    }
    result.attempts += resp->attempts;
    auto err = resp->status >= 300 ? parse_vcenter_error(resp->status, resp->body) : VcenterError{};
    const bool started =
        resp->status == 200 || resp->status == 204 || err.error_type == "ALREADY_IN_DESIRED_STATE";
    if (started) {
      start_written_[vm.name] = resp->written_at;
      result.written_mono = resp->written_at;
      result.written_wall = resp->written_at_wall;
      result.acknowledged_mono =
          resp->received_at != steady::time_point{} ? resp->received_at : steady::now();
      result.acknowledged_wall = resp->written_at_wall + std::chrono::duration_cast<wall::duration>(
                                                             result.acknowledged_mono - resp->written_at);
      co_return result;
    }
    const bool transient = err.error_type == "RESOURCE_BUSY" || resp->status == 503;
    if (!transient || round >= kMaxAttempts)
      co_return to_error(err, "power start of " + vm.name + " (POST " + target + ")", config_.endpoint);
    session_.count_retry();
    co_await async::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(4000));
  }
}

asio::awaitable<Expected<std::map<std::string, std::string>>> VsphereProvider::list_vm_ids(
    const std::vector<std::string>& names) {
  std::map<std::string, std::string> ids;
  for (const auto& chunk : chunk_for_list(names, {}, "names")) {
    const std::string target = session_.paths().vm_list(ListFilter{{"names", chunk}});
    auto list = co_await get_json(target, "looking up VMs by name");
    if (!list) co_return list.error();
    if (list->is_array())
      for (const auto& v : *list) ids[str_field(v, "name")] = str_field(v, "vm");
  }
  co_return ids;
}

std::vector<std::vector<std::string>> VsphereProvider::chunk_for_list(const std::vector<std::string>& values,
                                                                      const ListFilter& extra,
                                                                      const std::string& key) const {
  std::vector<std::vector<std::string>> chunks;
  const std::size_t base = session_.paths().vm_list(extra).size();
  std::vector<std::string> current;
  std::size_t length = base;
  for (const auto& v : values) {
    const std::size_t add =
        key.size() + 14 /* "filter." + ".NNNN" + '=' + '&' */ + encode_query_value(v).size();
    if (!current.empty() &&
        (current.size() >= tuning_.max_ids_per_list || length + add > tuning_.max_target_length)) {
      chunks.push_back(std::move(current));
      current.clear();
      length = base;
    }
    current.push_back(v);
    length += add;
  }
  if (!current.empty()) chunks.push_back(std::move(current));
  return chunks;
}

asio::awaitable<void> VsphereProvider::poll_running(Observation& obs) {
  std::vector<std::string> ids;
  std::map<std::string, std::string> name_of;
  for (const auto& name : obs.order) {
    if (obs.tracker.reached(name, api::Milestone::running) || obs.ids[name].empty()) continue;
    ids.push_back(obs.ids[name]);
    name_of[obs.ids[name]] = name;
  }
  obs.last_list = steady::now();
  const ListFilter on = {{"power_states", {"POWERED_ON"}}};
  for (const auto& chunk : chunk_for_list(ids, on, "vms")) {
    if (*obs.stopped) co_return;
    const std::string target = session_.paths().vm_list(ListFilter{{"vms", chunk}, on.front()});
    // Take the token first so that `before` is not stamped ahead of a budget wait.
    if (async::RateLimiter* limiter = session_.limiter()) co_await limiter->acquire();
    if (*obs.stopped) co_return;
    CallOptions prepaid;
    prepaid.prepaid = true;
    const auto before = steady::now();
    auto resp = co_await session_.call("GET", target, {}, prepaid);
    if (!resp || resp->status != 200) {
      spdlog::debug("observe: listing power states at {} failed: {}", config_.endpoint,
                    resp ? "HTTP " + std::to_string(resp->status) : resp.error().what());
      continue;
    }
    const Probe probe = probe_of(*resp, before);
    auto list = session_.paths().unwrap(json::parse(resp->body, nullptr, false));
    std::set<std::string> on_ids;
    if (list.is_array())
      for (const auto& v : list)
        if (str_field(v, "power_state") == "POWERED_ON" || !v.contains("power_state"))
          on_ids.insert(str_field(v, "vm"));
    for (const auto& id : chunk) {
      const auto& name = name_of[id];
      if (on_ids.count(id))
        obs.emit(obs.tracker.positive(name, api::Milestone::running, probe));
      else
        obs.tracker.negative(name, api::Milestone::running, probe);
    }
  }
}

asio::awaitable<void> VsphereProvider::probe_vm(Observation& obs, std::string name) {
  const auto pending = obs.tracker.next_pending(name);
  const std::string id = obs.ids[name];
  CallOptions prepaid;
  prepaid.prepaid = true;  // observe() took this probe's token before spawning it
  if (pending == api::Milestone::guest_agent) {
    const auto before = steady::now();
    auto resp = co_await session_.call("GET", session_.paths().tools(id), {}, prepaid);
    if (resp && resp->status == 200) {
      const Probe probe = probe_of(*resp, before);
      const auto state =
          str_field(session_.paths().unwrap(json::parse(resp->body, nullptr, false)), "run_state");
      if (state == "RUNNING" || state == "EXECUTING_SCRIPTS")
        obs.emit(obs.tracker.positive(name, api::Milestone::guest_agent, probe, state));
      else
        obs.tracker.negative(name, api::Milestone::guest_agent, probe);
    } else {
      spdlog::debug("observe: Tools state of {} at {}: {}", name, config_.endpoint,
                    resp ? "HTTP " + std::to_string(resp->status) : resp.error().what());
    }
  } else if (pending == api::Milestone::ip_assigned) {
    const auto before = steady::now();
    auto resp = co_await session_.call("GET", session_.paths().guest_identity(id), {}, prepaid);
    if (resp && (resp->status == 200 || resp->status == 503)) {
      // 503 SERVICE_UNAVAILABLE is vCenter's answer while Tools has reported no guest identity yet.
      const Probe probe = probe_of(*resp, before);
      std::string ip;
      if (resp->status == 200)
        ip = str_field(session_.paths().unwrap(json::parse(resp->body, nullptr, false)), "ip_address");
      if (!ip.empty())
        obs.emit(obs.tracker.positive(name, api::Milestone::ip_assigned, probe, ip));
      else
        obs.tracker.negative(name, api::Milestone::ip_assigned, probe);
    } else {
      spdlog::debug("observe: guest identity of {} at {}: {}", name, config_.endpoint,
                    resp ? "HTTP " + std::to_string(resp->status) : resp.error().what());
    }
  }
  --obs.in_flight;
  obs.wake.cancel();
}

asio::awaitable<void> VsphereProvider::observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                                               CancelSignal stop) {
  Observation obs(executor_, steady::now());
  obs.sink = std::move(sink);
  if (config_.dry_run || vms.empty()) co_return;
  std::vector<std::string> missing_ids;
  for (const auto& vm : vms) {
    auto started = start_written_.find(vm.name);
    if (started != start_written_.end() && started->second != steady::time_point{})
      obs.tracker.add_vm(vm.name, started->second);
    else
      obs.tracker.add_vm(vm.name);
    obs.order.push_back(vm.name);
    obs.ids[vm.name] = vm.id;
    if (vm.id.empty()) missing_ids.push_back(vm.name);
  }

  // Paced at 95 % of the budget: releases are spaced by 1/rate, but a spawned probe reaches the wire a
  // little after its token while a list call goes out at once, and that jitter alone could put one request
  // too many into some second as vCenter counts them. The headroom keeps the budget a ceiling.
  async::RateLimiter limiter(executor_, config_.requests_per_second * kBudgetHeadroom, 1.0);
  limiter.set_stop_flag(obs.stopped);
  session_.set_limiter(&limiter);
  {
    auto stopped = obs.stopped;
    auto* wake = &obs.wake;
    auto alive = std::make_shared<bool>(true);
    auto ex = executor_;
    auto stop_subscription = stop.subscribe([ex, stopped, wake, alive]() {
      asio::post(ex, [stopped, wake, alive]() {
        *stopped = true;
        if (*alive) wake->cancel();
      });
    });
    // `alive` guards `wake` after observe() returns.
    struct Guard {
      std::shared_ptr<bool> alive;
      ~Guard() { *alive = false; }
    } guard{alive};

    if (!missing_ids.empty()) {
      auto ids = co_await list_vm_ids(missing_ids);
      if (ids)
        for (auto& [name, id] : *ids) obs.ids[name] = id;
    }

    std::size_t cursor = 0;
    while (!*obs.stopped && !obs.tracker.all_reached()) {
      const auto acquired_before = limiter.acquired();
      co_await poll_running(obs);
      // One round: every VM that is on but still lacks a milestone gets one probe, starting where the last
      // round stopped so that no VM starves when the budget is smaller than the number of VMs.
      std::vector<std::string> round;
      for (std::size_t i = 0; i < obs.order.size(); ++i) {
        const auto& name = obs.order[(cursor + i) % obs.order.size()];
        const auto next = obs.tracker.next_pending(name);
        if (next && *next != api::Milestone::running && !obs.ids[name].empty()) round.push_back(name);
      }
      cursor = (cursor + 1) % obs.order.size();
      for (const auto& name : round) {
        if (*obs.stopped) break;
        if (steady::now() - obs.last_list >= tuning_.list_interval && obs.tracker.pending_vms() > 0)
          co_await poll_running(obs);
        while (obs.in_flight >= tuning_.max_in_flight && !*obs.stopped) {
          obs.wake.expires_at(steady::time_point::max());
          co_await obs.wake.async_wait(asio::as_tuple(asio::use_awaitable));
        }
        if (*obs.stopped) break;
        // Take the token here so that at most one probe is queued on the limiter at a time.
        co_await limiter.acquire();
        if (*obs.stopped) break;
        ++obs.in_flight;
        asio::co_spawn(executor_, probe_vm(obs, name), asio::detached);
      }
      if (limiter.acquired() == acquired_before && !*obs.stopped) {
        // Nothing could be asked this round (VMs without an id, or all probes in flight): do not spin.
        obs.wake.expires_after(std::chrono::milliseconds(100));
        co_await obs.wake.async_wait(asio::as_tuple(asio::use_awaitable));
      }
    }
    while (obs.in_flight > 0) {
      obs.wake.expires_at(steady::time_point::max());
      co_await obs.wake.async_wait(asio::as_tuple(asio::use_awaitable));
    }
  }
  session_.set_limiter(nullptr);
}

asio::awaitable<Expected<void>> VsphereProvider::power_stop(const std::string& vm_id,
                                                            const std::string& vm_name) {
  const std::string target = session_.paths().power_action(vm_id, "stop");
  if (config_.dry_run) {
    log_dry_run("POST", target, {});
    co_return Expected<void>{};
  }
  CallOptions options;
  options.idempotent = true;
  for (int attempt = 1;; ++attempt) {
    auto resp = co_await session_.call("POST", target, {}, options);
    if (!resp) {
      Error e = resp.error();
      e.message = "power off of " + vm_name + " at " + config_.endpoint + " failed: " + e.message;
      co_return e;
    }
    if (resp->status == 200 || resp->status == 204 || resp->status == 404) co_return Expected<void>{};
    auto err = parse_vcenter_error(resp->status, resp->body);
    if (err.error_type == "ALREADY_IN_DESIRED_STATE" || err.error_type == "NOT_FOUND")
      co_return Expected<void>{};
    if ((err.error_type == "RESOURCE_BUSY" || resp->status == 503) && attempt < 5) {
      session_.count_retry();
      co_await async::sleep_for(std::chrono::milliseconds(250 * attempt));
      continue;
    }
    co_return to_error(err, "power off of " + vm_name + " (POST " + target + ")", config_.endpoint);
  }
}

asio::awaitable<Expected<void>> VsphereProvider::stop(const api::VmHandle& vm) {
  if (!api::name_carries_run_id(vm.name, config_.run_id)) co_return refuse_foreign("power off", vm.name);
  auto id = co_await resolve_vm_id(vm);
  if (!id) co_return id.error();
  if (id->empty()) co_return Expected<void>{};  // gone already
  co_return co_await power_stop(*id, vm.name);
}

asio::awaitable<Expected<void>> VsphereProvider::destroy(const api::VmHandle& vm) {
  if (!api::name_carries_run_id(vm.name, config_.run_id)) co_return refuse_foreign("delete", vm.name);
  auto id = co_await resolve_vm_id(vm);
  if (!id) co_return id.error();
  if (id->empty()) co_return Expected<void>{};  // no VM of that name: nothing to delete
  auto off = co_await power_stop(*id, vm.name);
  if (!off) co_return off;
  const std::string target = session_.paths().vm(*id);
  if (config_.dry_run) {
    log_dry_run("DELETE", target, {});
    co_return Expected<void>{};
  }
  for (int attempt = 1;; ++attempt) {
    auto resp = co_await session_.call("DELETE", target);
    if (!resp) {
      Error e = resp.error();
      e.message = "deleting " + vm.name + " at " + config_.endpoint + " failed: " + e.message;
      co_return e;
    }
    if (resp->status == 200 || resp->status == 204 || resp->status == 404) break;
    auto err = parse_vcenter_error(resp->status, resp->body);
    if ((err.error_type == "RESOURCE_BUSY" || err.error_type == "RESOURCE_IN_USE" || resp->status == 503) &&
        attempt < 5) {
      session_.count_retry();
      co_await async::sleep_for(std::chrono::milliseconds(250 * attempt));
      continue;
    }
    co_return to_error(err, "deleting " + vm.name + " (DELETE " + target + ")", config_.endpoint);
  }
  // Verify: vCenter must no longer know the VM. A 503 (after the client's own retries) is retried here as
  // the DELETE above is: cleanup must not leave a VM behind because one verification read was unlucky.
  auto check = co_await session_.call("GET", target);
  for (int attempt = 1; attempt < 5 && check && check->status == 503; ++attempt) {
    session_.count_retry();
    co_await async::sleep_for(std::chrono::milliseconds(250 * attempt));
    check = co_await session_.call("GET", target);
  }
  if (!check) co_return check.error();
  if (check->status == 404) co_return Expected<void>{};
  if (check->status == 200)
    co_return make_error(ErrorKind::api,
                         "VM " + vm.name + " (" + *id + ") still exists in vCenter " + config_.endpoint +
                             " after DELETE " + target,
                         "delete it by hand or run `bootstorm cleanup` again");
  co_return to_error(parse_vcenter_error(check->status, check->body), "verifying deletion of " + vm.name,
                     config_.endpoint);
}

asio::awaitable<Expected<std::vector<api::VmHandle>>> VsphereProvider::list_run_vms(
    const std::string& run_id) {
  std::vector<api::VmHandle> out;
  auto collect = [&](const json& list, const std::string& host) {
    if (!list.is_array()) return;
    for (const auto& v : list) {
      const auto name = str_field(v, "name");
      if (api::name_carries_run_id(name, run_id)) out.push_back({name, str_field(v, "vm"), host, {}});
    }
  };
  auto all = co_await get_json(session_.paths().vm_list(), "listing VMs");
  if (all) {
    collect(*all, {});
    co_return out;
  }
  // vCenter refuses lists matching more than 4,000 VMs: list host by host instead.
  if (all.error().status != 400 && all.error().status != 500) co_return all.error();
  auto hosts = co_await get_json(session_.paths().host_list(), "listing hosts");
  if (!hosts) co_return hosts.error();
  if (hosts->is_array())
    for (const auto& h : *hosts) {
      const std::string target = session_.paths().vm_list(ListFilter{{"hosts", {str_field(h, "host")}}});
      auto list = co_await get_json(target, "listing VMs of host " + str_field(h, "name"));
      if (!list) co_return list.error();
      collect(*list, str_field(h, "name"));
    }
  co_return out;
}

asio::awaitable<void> VsphereProvider::disconnect() {
  session_.set_limiter(nullptr);
  co_await session_.logout();
  transport_->close_idle();
}

api::ApiStats VsphereProvider::stats() const {
  return session_.stats();
}

}  // namespace bootstorm::vsphere
