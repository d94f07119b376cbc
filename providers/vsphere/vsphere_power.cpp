// VsphereProvider's power calls: waiting until a VM can be storm-started, the storm's connection prewarm,
// power start, power stop, and destroy with its verification.
#include <algorithm>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/async/sleep.hpp"
#include "providers/vsphere/detail/json_fields.hpp"
#include "providers/vsphere/vcenter_error.hpp"
#include "providers/vsphere/vsphere_provider.hpp"

namespace bootstorm::vsphere {

namespace asio = boost::asio;
using steady = std::chrono::steady_clock;
using wall = std::chrono::system_clock;
using detail::str_field;

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
  co_return co_await open_storm_connections(*transport_, expected_starts, config_.endpoint);
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

}  // namespace bootstorm::vsphere
