// VsphereProvider::provision: clones of the golden VM, bounded per host, per datastore and overall, and the
// beacon hand-over to each clone (cloud-init guest customization).
#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/async/sleep.hpp"
#include "common/log.hpp"
#include "providers/vsphere/vcenter_error.hpp"
#include "providers/vsphere/vsphere_provider.hpp"

namespace bootstorm::vsphere {

namespace asio = boost::asio;
using json = nlohmann::json;

asio::awaitable<Expected<api::VmHandle>> VsphereProvider::provision(const api::VmSpec& spec) {
  if (auto refused = api::refuse_unnamed_create(spec.name, config_.run_id)) co_return *refused;
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
  auto host_permit = co_await async::acquire(host_clone_slots_.of(host_id));
  if (!datastore_clone_slots_)
    datastore_clone_slots_ = std::make_unique<async::AsyncSemaphore>(
        executor_, std::max<std::size_t>(1, tuning_.clones_per_datastore));
  auto datastore_permit = co_await async::acquire(*datastore_clone_slots_);
  auto overall = co_await async::acquire(clone_slots_);

  CallOptions options;
  options.idempotent = false;
  // A clone call blocks for the whole copy; a deadline shorter than that would abandon a running clone.
  options.timeout = std::max(config_.request_timeout, std::chrono::milliseconds(std::chrono::hours(1)));
  const std::string what = std::string(instant() ? "instant clone" : "clone") + " of " + settings_.vm +
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
          settings_.vm, golden_guest_os_);
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

}  // namespace bootstorm::vsphere
