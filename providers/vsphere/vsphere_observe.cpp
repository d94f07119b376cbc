// VsphereProvider::observe: milestone polling (power-state lists, then Tools and guest-identity probes per
// VM) paced within the request budget, with per-milestone resolution from MilestoneTracker.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/async/token_bucket.hpp"
#include "common/log.hpp"
#include "providers/vsphere/detail/json_fields.hpp"
#include "providers/vsphere/milestone_tracker.hpp"
#include "providers/vsphere/vsphere_provider.hpp"

namespace bootstorm::vsphere {

namespace asio = boost::asio;
using json = nlohmann::json;
using steady = std::chrono::steady_clock;
using wall = std::chrono::system_clock;
using detail::str_field;

namespace {

constexpr double kBudgetHeadroom = 0.95;

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

}  // namespace bootstorm::vsphere
