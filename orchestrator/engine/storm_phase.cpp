// The storm phase of one scenario/repeat: the start instant (--start-at) and the settle time, then the start
// barrier with the milestone observers (provider, beacon, TCP probe) running until every VM is ready or
// failed, and the storm_fired and milestone events it journals.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <optional>

#include "common/async/for_each.hpp"
#include "common/async/sleep.hpp"
#include "common/async/wait_group.hpp"
#include "common/rfc3339.hpp"
#include "orchestrator/engine/detail/run_session.hpp"
#include "orchestrator/engine/journal_events.hpp"
#include "orchestrator/engine/naming.hpp"

namespace bootstorm::engine::detail {

namespace asio = boost::asio;

using nlohmann::json;

namespace {

// Everything the storm's background tasks touch lives here, owned jointly by them and by run_storm, so that a
// provider that ignores the stop request cannot leave a task pointing into a finished coroutine frame.
struct StormTasks {
  explicit StormTasks(asio::any_io_executor ex) : observers(std::move(ex)) {}
  async::WaitGroup observers;
  std::vector<api::VmHandle> vms;
  std::unique_ptr<StartBarrier> barrier;
  std::optional<Expected<FireReport>> fired;
  bool barrier_done = false;
};

}  // namespace

asio::awaitable<bool> RunSession::settle_and_storm(const plan::Scenario& scenario, int repeat,
                                                   int planned_vms, std::vector<api::VmHandle>& vms,
                                                   std::vector<std::string>& errors,
                                                   Clock::time_point scenario_t0) {
  bool storm_ok = false;
  std::optional<std::chrono::system_clock::time_point> fire_at;
  bool too_late = false;
  if (options_.start_at && !options_.dry_run) {
    fire_at = *options_.start_at + storm_ordinal_ * options_.storm_interval;
    const auto now = std::chrono::system_clock::now();
    if (now >= *fire_at && !vms.empty() && !interrupt_.cancelled()) {
      const double late_s = std::chrono::duration<double>(now - *fire_at).count();
      std::string message = fmt::format(
          "storm not fired: its start instant {} had passed {:.1f} s before the VMs were provisioned "
          "(provisioning took {:.1f} s); choose a --start-at further ahead{}",
          format_rfc3339(*fire_at), late_s, std::chrono::duration<double>(Clock::now() - scenario_t0).count(),
          storm_ordinal_ > 0 ? " or a longer --storm-interval" : "");
      spdlog::error("{}", message);
      errors.push_back(message);
      if (!result.error) result.error = make_error(ErrorKind::timeout, message);
      for (auto& vm : vms)
        emit(events::vm_failed, {{fields::vm, vm.name},
                                 {fields::reason, "not started: " + message},
                                 {fields::failure, "not_started"}});
      vms.clear();
      too_late = true;
    }
  }
  if (!interrupt_.cancelled() && !vms.empty()) {
    if (fire_at) {
      const auto quiet = *fire_at - std::chrono::system_clock::now();
      if (quiet < plan_.storm.settle)
        spdlog::warn("only {:.1f} s of the plan's settle time are left before the start instant",
                     std::chrono::duration<double>(quiet).count());
    } else if (plan_.storm.settle.count() > 0 && !options_.dry_run) {
      progress_.phase("settle", counts());
      co_await async::sleep_for(plan_.storm.settle, interrupt_);
    }
    if (!interrupt_.cancelled()) storm_ok = co_await run_storm(scenario, repeat, vms, errors, fire_at);
  } else if (vms.empty() && !interrupt_.cancelled() && !too_late && planned_vms > 0) {
    errors.push_back("no VM could be provisioned: the storm was skipped");
  }
  co_return storm_ok;
}

asio::awaitable<bool> RunSession::run_storm(const plan::Scenario& scenario, int repeat,
                                            const std::vector<api::VmHandle>& vms,
                                            std::vector<std::string>& errors,
                                            std::optional<std::chrono::system_clock::time_point> fire_at) {
  storm_ = std::make_shared<StormState>(
      ready_, [this](const std::string& vm, const TimelineEntry& e) { on_milestone(vm, e); });
  auto storm = storm_;
  auto tasks = std::make_shared<StormTasks>(ex_);
  tasks->vms = vms;
  for (auto& vm : vms) {
    storm->timeline.add_vm(vm.name);
    if (!vm.id.empty() && vm.id != vm.name) storm->id_to_name[vm.id] = vm.name;
    if (beacon_) beacon_->expect(vm.name, vm.id);
  }
  CancelSignal observe_stop;
  start_port_probes(storm, observe_stop);

  // Observation starts before the barrier opens so that no early milestone is missed.
  if (!options_.dry_run) {
    tasks->observers.add();
    asio::co_spawn(ex_,
                   provider_->observe(
                       vms,
                       [this, storm](api::MilestoneEvent ev) {
                         if (storm->active) on_event(std::move(ev));
                       },
                       observe_stop),
                   [tasks](std::exception_ptr e) {
                     async::log_task_exception(e, "observing milestones");
                     tasks->observers.done();
                   });
  }

  progress_.phase("storm", counts());
  BarrierOptions bo;
  bo.ramp = plan_.storm.mode == "ramp";
  bo.per_second = plan_.storm.ramp_per_second;
  bo.max_concurrent = start_concurrency(vms.size());
  bo.release_at_wall = fire_at;
  tasks->barrier = std::make_unique<StartBarrier>(*provider_, bo);
  StartCallback on_start = [this, storm](const api::VmHandle& vm, const Expected<api::StartResult>& r) {
    if (storm->active) on_start_result(*storm, vm, r);
  };

  auto fire_task = [](std::shared_ptr<StormTasks> t, StartCallback cb,
                      CancelSignal interrupt) -> asio::awaitable<void> {
    t->fired = co_await t->barrier->fire(t->vms, std::move(cb), interrupt);
  };
  tasks->observers.add();
  asio::co_spawn(ex_, fire_task(tasks, std::move(on_start), interrupt_), [tasks](std::exception_ptr e) {
    async::log_task_exception(e, "the start barrier");
    tasks->barrier_done = true;
    tasks->observers.done();
  });

  // Observe until every VM is ready or failed, the storm timeout passes, or the run is interrupted.
  const auto timeout = plan_.storm.timeout;
  const double ramp_s = bo.ramp && bo.per_second > 0 ? static_cast<double>(vms.size()) / bo.per_second : 0.0;
  const auto storm_begin = Clock::now();
  const auto hard_deadline =
      storm_begin + timeout + 2 * platform_.config.request_timeout +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(ramp_s));
  bool storm_announced = false;
  asio::steady_timer tick(ex_);
  while (true) {
    if (tasks->barrier_done && tasks->fired && !storm_announced) {
      storm_announced = true;
      announce_fire(scenario, repeat, *tasks->fired, errors);
      progress_.phase(options_.dry_run ? "dry-run" : "observe", counts());
    }
    if (options_.dry_run && tasks->barrier_done) break;
    if (interrupt_.cancelled()) break;
    for (auto& [vm, reason] : storm->timeline.expire(Clock::now(), timeout))
      emit(events::vm_failed, {{fields::vm, vm}, {fields::reason, reason}, {fields::failure, "timeout"}});
    if (tasks->barrier_done && storm->timeline.finished()) break;
    if (Clock::now() >= hard_deadline) {
      for (auto& vm : vms) {
        if (storm->timeline.state(vm.name) == VmState::waiting) {
          std::string reason =
              fmt::format("start request did not return within {:g} s",
                          std::chrono::duration<double>(hard_deadline - storm_begin).count());
          storm->timeline.fail(vm.name, reason);
          emit(events::vm_failed,
               {{fields::vm, vm.name}, {fields::reason, reason}, {fields::failure, "start_hung"}});
        }
      }
      break;
    }
    progress_.update(counts());
    tick.expires_after(options_.observe_tick);
    co_await tick.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  progress_.update(counts());
  observe_stop.cancel();
  if (beacon_) beacon_->close_window();  // a ready call from now on is late: answered 410, not recorded
  if (prober_) {
    tasks->observers.add();
    asio::co_spawn(ex_, prober_->wait(), [tasks](std::exception_ptr e) {
      async::log_task_exception(e, "port probes");
      tasks->observers.done();
    });
  }
  const bool stopped = co_await tasks->observers.wait(Clock::now() + options_.stop_grace);
  if (!stopped) {
    spdlog::warn("milestone observers did not stop within {} ms after the storm; continuing without them",
                 options_.stop_grace.count());
  }
  if (tasks->barrier_done && tasks->fired && !storm_announced)
    announce_fire(scenario, repeat, *tasks->fired, errors);
  storm->active = false;
  if (stopped) {
    prober_.reset();
  } else if (prober_) {
    abandoned_.push_back(std::move(prober_));  // its loops may still run: keep it alive until the end
  }
  phase_boundary();

  std::size_t ready = storm->timeline.count(VmState::ready);
  progress_.finish();
  spdlog::info("scenario '{}' repeat {}: {}/{} VMs ready ({})", scenario.name, repeat, ready, vms.size(),
               api::to_string(ready_));
  if (options_.dry_run) co_return true;
  co_return ready == vms.size();
}

void RunSession::announce_fire(const plan::Scenario& scenario, int repeat, const Expected<FireReport>& fired,
                               std::vector<std::string>& errors) {
  if (!fired) {
    errors.push_back("storm not fired: " + fired.error().what());
    spdlog::error("storm not fired: {}", fired.error().what());
    return;
  }
  const auto& r = *fired;
  json fired_event = {{fields::scenario, scenario.name},
                      {fields::repeat, repeat},
                      {"firstMono", r.first_written && journal_ ? journal_->mono_of(*r.first_written) : 0.0},
                      {"lastMono", r.last_written && journal_ ? journal_->mono_of(*r.last_written) : 0.0},
                      {fields::fire_skew_ms, std::round(r.fire_skew_ms * 1000) / 1000},
                      {fields::first_wall, r.first_written ? unix_seconds(r.first_written_wall) : 0.0},
                      {"starts", r.succeeded},
                      {"startFailures", r.failed},
                      {"notReleased", r.not_released},
                      {"peakInFlight", r.peak_in_flight}};
  if (r.release_offset_ms) {
    // The agreed instant and how far from it this worker really fired, on its own CLOCK_REALTIME.
    fired_event[fields::start_at] = unix_seconds(r.released_wall) - *r.release_offset_ms / 1000.0;
    fired_event["releasedWall"] = unix_seconds(r.released_wall);
    fired_event[fields::start_at_offset_ms] = std::round(*r.release_offset_ms * 1000) / 1000;
    if (r.first_written_offset_ms)
      fired_event["firstStartOffsetMs"] = std::round(*r.first_written_offset_ms * 1000) / 1000;
  }
  emit(events::storm_fired, std::move(fired_event));
  progress_.finish();  // a log line must not land on the live status line
  spdlog::info("storm fired: {} starts, fire skew {:.2f} ms, {} failed{}", r.succeeded, r.fire_skew_ms,
               r.failed,
               r.release_offset_ms
                   ? fmt::format(", barrier opened {:+.3f} ms from the start instant", *r.release_offset_ms)
                   : std::string());
}

void RunSession::on_event(api::MilestoneEvent ev) {
  if (!storm_ || !storm_->active) return;
  if (auto it = storm_->id_to_name.find(ev.vm); it != storm_->id_to_name.end()) ev.vm = it->second;
  storm_->timeline.observe(ev);
}

void RunSession::on_milestone(const std::string& vm, const TimelineEntry& e) {
  emit(events::milestone, {{fields::scenario, current_scenario_},
                           {fields::repeat, current_repeat_},
                           {fields::vm, vm},
                           {fields::milestone, std::string(api::to_string(e.milestone))},
                           {fields::offset_s, std::round(e.offset_s * 1e6) / 1e6},
                           {fields::resolution_s, e.resolution_s},
                           {fields::source, std::string(api::to_string(e.source))},
                           {fields::wall, unix_seconds(e.wall)},
                           {fields::detail, e.detail}});
  if (e.milestone == api::Milestone::ip_assigned && prober_) prober_->probe(vm, e.detail);
}

// A start request's answer: the VM started (and acknowledged), or failed with its reason, logged once per
// kind of refusal.
void RunSession::on_start_result(StormState& storm, const api::VmHandle& vm,
                                 const Expected<api::StartResult>& r) {
  if (r) {
    ++started_;
    storm.timeline.set_started(vm.name, r->written_mono, r->written_wall);
    if (r->acknowledged_mono != Clock::time_point{}) {
      api::MilestoneEvent ack;
      ack.vm = vm.name;
      ack.milestone = api::Milestone::start_acknowledged;
      ack.observed_mono = r->acknowledged_mono;
      ack.observed_wall = r->acknowledged_wall;
      ack.source = api::Source::client;
      ack.resolution_s = 0;
      storm.timeline.observe(ack);
    }
  } else {
    const bool cancelled = r.error().kind == ErrorKind::cancelled;
    std::string reason =
        cancelled ? "not started: the run was interrupted" : "start failed: " + r.error().what();
    storm.timeline.fail(vm.name, reason);
    if (cancelled) return;
    emit(events::vm_failed,
         {{fields::vm, vm.name}, {fields::reason, reason}, {fields::failure, "start_failed"}});
    // The console says why at once; a storm of a thousand identical refusals says it once.
    constexpr std::size_t kReasonsLogged = 3;
    const std::string why = r.error().what();
    // The same refusal for each VM differs only in the VM's name and id.
    std::string kind = why;
    for (const std::string* word : {&vm.name, &vm.id}) {
      for (auto at = word->empty() ? std::string::npos : kind.find(*word); at != std::string::npos;
           at = kind.find(*word, at))
        kind.replace(at, word->size(), "<vm>");
    }
    if (++storm.start_failures[kind] == 1 && storm.start_failures.size() <= kReasonsLogged) {
      progress_.finish();
      spdlog::warn("start of {} failed: {}{}", vm.name, why,
                   storm.start_failures.size() == kReasonsLogged ? " (further reasons: report.md)" : "");
    }
  }
}

// TCP probes of ready.port, when the plan asks for the port_open milestone.
void RunSession::start_port_probes(const std::shared_ptr<StormState>& storm,
                                   const CancelSignal& observe_stop) {
  if (plan_.ready.port > 0 && !options_.dry_run) {
    ProbeOptions po;
    po.port = static_cast<unsigned short>(plan_.ready.port);
    po.max_concurrent = max_concurrent();
    po.initial_interval = options_.probe_interval;
    prober_ = std::make_unique<PortProber>(
        ex_, po,
        [this, storm](api::MilestoneEvent ev) {
          if (storm->active) on_event(std::move(ev));
        },
        observe_stop);
  }
}

}  // namespace bootstorm::engine::detail
