#include "orchestrator/engine/run_engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <fstream>
#include <map>
#include <numeric>
#include <set>

#include "common/async/for_each.hpp"
#include "common/async/sleep.hpp"
#include "common/async/wait_group.hpp"
#include "common/log.hpp"
#include "common/rfc3339.hpp"
#include "orchestrator/engine/barrier.hpp"
#include "orchestrator/engine/journal.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/platform.hpp"
#include "orchestrator/engine/port_probe.hpp"
#include "orchestrator/engine/timeline.hpp"

namespace bootstorm::engine {

namespace asio = boost::asio;

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::optional<api::Milestone> ready_milestone(const plan::StormPlan& plan) {
  if (!plan.ready.signal.empty() && plan.ready.signal != "ready")
    return api::milestone_from_string(plan.ready.signal);
  return plan.ready.beacon.enabled ? api::Milestone::beacon : api::Milestone::guest_agent;
}

namespace {

// The state of one scenario/repeat storm, shared with callbacks that may outlive the storm (a provider's
// observe loop that ignores the stop for a while): they check `active`.
struct StormState {
  explicit StormState(api::Milestone ready, MilestoneTimeline::Listener listener)
      : timeline(ready, std::move(listener)) {}
  MilestoneTimeline timeline;
  bool active = true;
  std::map<std::string, std::string> id_to_name;
};

class Session {
 public:
  Session(const plan::StormPlan& plan, const RunOptions& options, const EngineHooks& hooks,
          asio::io_context& io)
      : plan_(plan),
        options_(options),
        hooks_(hooks),
        io_(io),
        ex_(io.get_executor()),
        interrupt_(options.interrupt),
        progress_(options.progress),
        signals_(io) {}

  RunResult result;

  asio::awaitable<void> main() {
    if (options_.handle_signals) watch_signals();
    co_await run_all();
    boost::system::error_code ignored;
    signals_.cancel(ignored);
  }

 private:
  // ------------------------------------------------------------------------------------------ journal
  json emit(std::string_view type, json payload) {
    json event;
    if (journal_) {
      event = journal_->write(type, std::move(payload));
    } else {
      event = std::move(payload);
      event["type"] = std::string(type);
      event["t"] = format_rfc3339(std::chrono::system_clock::now());
    }
    builder_.apply(event);
    return event;
  }
  void phase_boundary() {
    if (journal_) journal_->sync();
  }

  // ------------------------------------------------------------------------------------------ signals
  void watch_signals() {
    boost::system::error_code ec;
    signals_.add(SIGINT, ec);
    signals_.add(SIGTERM, ec);
    signals_.async_wait([this](boost::system::error_code e, int sig) { on_signal(e, sig); });
  }
  void on_signal(boost::system::error_code e, int sig) {
    if (e) return;
    progress_.finish();
    if (!interrupt_.cancelled()) {
      spdlog::warn(
          "{} received: no new clones or starts; cleaning up per policy (cleanup: {}). "
          "Press Ctrl-C again to skip the cleanup.",
          sig == SIGTERM ? "SIGTERM" : "interrupt", plan_.cleanup);
      interrupt_.cancel();
    } else {
      spdlog::warn("second interrupt: skipping the remaining cleanup; run `bootstorm cleanup {}` later",
                   result.run_dir.string());
      skip_cleanup_ = true;
    }
    signals_.async_wait([this](boost::system::error_code e2, int sig2) { on_signal(e2, sig2); });
  }

  // ------------------------------------------------------------------------------------------ setup
  Expected<void> create_run_directory(std::chrono::system_clock::time_point started) {
    std::filesystem::path out =
        options_.output_dir.empty() ? std::filesystem::path(plan_.output) : options_.output_dir;
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec)
      return make_error(ErrorKind::io,
                        fmt::format("cannot create output directory {}: {}", out.string(), ec.message()),
                        "choose another directory with --out");
    std::string name = run_directory_name(plan_.name, started, run_id_);
    if (options_.shard.sharded())
      name += fmt::format("-shard{}of{}", options_.shard.index, options_.shard.count);
    auto dir = out / name;
    if (::mkdir(dir.c_str(), 0700) != 0)
      return make_error(ErrorKind::io, fmt::format("cannot create run directory {}: {}", dir.string(),
                                                   std::strerror(errno)));
    ::chmod(dir.c_str(), 0700);
    result.run_dir = dir;
    {
      std::ofstream plan_file(dir / "plan.yaml", std::ios::binary);
      plan_file << log::redact(options_.plan_yaml);
      if (!plan_file) return make_error(ErrorKind::io, "cannot write " + (dir / "plan.yaml").string());
    }
    auto journal = Journal::open(dir / "journal.jsonl", origin_);
    if (!journal) return journal.error();
    journal_ = std::move(*journal);
    return {};
  }

  void fail_run(const Error& error) {
    spdlog::error("{}", error.what());
    result.error = error;
    emit("run_error", {{"message", error.what()}, {"kind", to_string(error.kind)}});
  }

  // ------------------------------------------------------------------------------------------ run
  asio::awaitable<void> run_all() {
    origin_ = Clock::now();
    auto started_wall = std::chrono::system_clock::now();
    run_id_ = options_.run_id.empty() ? new_run_id() : options_.run_id;
    auto ready = ready_milestone(plan_);
    if (!ready) {
      result.error = make_error(
          ErrorKind::invalid_input, fmt::format("ready.signal '{}' is not a milestone", plan_.ready.signal),
          "use one of start_acknowledged, scheduled, running, guest_agent, ip_assigned, "
          "port_open, beacon");
      result.exit_code = 2;
      result.outcome = "error";
      co_return;
    }
    ready_ = *ready;
    if (ready_ == api::Milestone::port_open && plan_.ready.port <= 0) {
      result.error =
          make_error(ErrorKind::invalid_input, "ready.signal is port_open but ready.port is not set",
                     "set ready.port (e.g. 3389 or 22)");
      result.exit_code = 2;
      result.outcome = "error";
      co_return;
    }
    if (ready_ == api::Milestone::beacon && !plan_.ready.beacon.enabled) {
      result.error =
          make_error(ErrorKind::invalid_input, "ready.signal is beacon but no beacon is configured",
                     "add ready.beacon.listen");
      result.exit_code = 2;
      result.outcome = "error";
      co_return;
    }

    if (!options_.dry_run) {
      auto created = create_run_directory(started_wall);
      if (!created) {
        result.error = created.error();
        result.outcome = "error";
        result.exit_code = 1;
        co_return;
      }
    }
    const bool simulated = is_simulated_endpoint(plan_.platform.endpoint);
    // Resolve the platform first (it may start the embedded lab) so that run_started names the lab.
    auto resolved = resolve_platform(plan_, run_id_, options_.dry_run, hooks_, ex_);
    const std::string lab_name = resolved ? resolved->lab : plan_.platform.lab;
    json slo = json::array();
    for (auto& s : plan_.slo)
      slo.push_back({{"milestone", s.milestone}, {"stat", s.stat}, {"max", s.max}, {"isMin", s.is_min}});
    json started = {{"runId", run_id_},
                    {"plan", plan_.name},
                    {"platform", plan_.platform.kind},
                    {"endpoint", plan_.platform.endpoint},
                    {"simulated", simulated},
                    {"lab", simulated ? lab_name : std::string()},
                    {"readySignal", std::string(api::to_string(ready_))},
                    {"cleanup", plan_.cleanup},
                    {"dryRun", options_.dry_run},
                    {"planYaml", options_.plan_yaml},
                    {"planDigest", plan_digest(options_.plan_yaml)},
                    {"slo", slo}};
    // What `bootstorm merge` checks: the shard, the agreed instant, the storm spacing and the selection.
    if (options_.shard.sharded())
      started["shard"] = {{"index", options_.shard.index}, {"count", options_.shard.count}};
    if (options_.start_at) {
      started["startAt"] = format_rfc3339(*options_.start_at);
      started["stormIntervalS"] = std::chrono::duration<double>(options_.storm_interval).count();
    }
    if (!options_.only_scenario.empty()) started["onlyScenario"] = options_.only_scenario;
    if (options_.repeat > 0) started["repeat"] = options_.repeat;
    emit("run_started", std::move(started));
    phase_boundary();
    if (!result.run_dir.empty()) spdlog::info("run {} -> {}", run_id_, result.run_dir.string());

    if (resolved) {
      platform_ = std::move(*resolved);
      co_await run_platform();
    } else {
      fail_run(resolved.error());
    }

    // Outcome and exit code.
    std::string outcome;
    if (interrupt_.cancelled()) {
      outcome = "interrupted";
    } else if (result.error) {
      outcome = "failed";
    } else {
      outcome = all_ready_ ? "completed" : "failed";
    }
    emit("run_ended", {{"outcome", outcome}});
    phase_boundary();
    // A journal that missed events fails the run even when the storm went well: the run directory can no
    // longer rebuild it (`bootstorm report`) nor tell `bootstorm cleanup` everything it created.
    if (journal_ && !result.error) {
      if (std::string failure = journal_->write_error(); !failure.empty())
        result.error =
            make_error(ErrorKind::io,
                       fmt::format("the journal {} is incomplete: {}", journal_->path().string(), failure),
                       "free space on that file system (or choose another --out) and run again; "
                       "the figures printed here come from memory");
    }
    progress_.finish();
    result.outcome = outcome;
    result.record = builder_.record();
    for (auto& vm : result.record.vms) {
      ++result.vms_total;
      if (vm.status == "ready") ++result.vms_ready;
      if (vm.status == "failed") ++result.vms_failed;
    }
    if (!options_.dry_run && hooks_.write_outputs && !result.run_dir.empty()) {
      auto written = hooks_.write_outputs(result.run_dir, result.record);
      if (!written) {
        spdlog::error("writing the run outputs failed: {}", written.error().what());
        if (!result.error) result.error = written.error();
        result.slo_passed = false;
      } else {
        result.slo_passed = *written;
      }
    }
    if (outcome == "interrupted") {
      result.exit_code = 130;
    } else if (result.error &&
               (result.error->kind == ErrorKind::invalid_input ||
                result.error->kind == ErrorKind::not_found) &&
               !provisioned_any_) {
      result.exit_code = 2;
    } else if (outcome == "completed" && result.slo_passed && !result.error) {
      result.exit_code = 0;
    } else {
      result.exit_code = 1;
    }
    journal_.reset();  // final fsync + close
  }

  asio::awaitable<void> run_platform() {
    api::ProviderConfig config = platform_.config;

    if (plan_.ready.beacon.enabled) {
      if (!hooks_.make_beacon) {
        fail_run(make_error(ErrorKind::invalid_input, "this build has no beacon listener",
                            "remove ready.beacon from the plan"));
        co_return;
      }
      beacon::ListenerOptions bo;
      bo.listen = plan_.ready.beacon.listen;
      bo.advertise_url = plan_.ready.beacon.advertise_url;
      bo.run_id = run_id_;
      auto listener = hooks_.make_beacon(ex_, bo);
      if (!listener) {
        fail_run(listener.error());
        co_return;
      }
      beacon_ = std::move(*listener);
      beacon_->set_sink([this](api::MilestoneEvent ev) { on_event(std::move(ev)); });
      config.beacon_url = beacon_->url();
      auto* b = beacon_.get();
      config.beacon_token = [b](const std::string& vm) { return b->token_for(vm); };
      spdlog::info("beacon listening on {}", config.beacon_url);
    }

    if (hooks_.make_provider) {
      provider_ = hooks_.make_provider(ex_, config);
    } else {
      provider_ = api::create_provider(config.kind, ex_, config);
    }
    if (!provider_) {
      auto kinds = api::registered_providers();
      fail_run(make_error(ErrorKind::invalid_input, fmt::format("unknown platform kind '{}'", config.kind),
                          kinds.empty() ? std::string("no platform kind is registered")
                                        : fmt::format("registered kinds: {}", fmt::join(kinds, ", "))));
      co_await stop_beacon();
      co_return;
    }

    co_await run_with_provider();

    co_await stop_beacon();
    try {
      co_await provider_->disconnect();
    } catch (const std::exception& e) {
      spdlog::warn("disconnect failed: {}", e.what());
    }
  }

  asio::awaitable<void> stop_beacon() {
    if (beacon_) co_await beacon_->stop();
  }

  asio::awaitable<void> run_with_provider() {
    progress_.phase("connect", {});
    auto connected = co_await provider_->connect();
    if (!connected) {
      fail_run(connected.error());
      co_return;
    }
    auto caps = provider_->capabilities();
    const bool engine_observes = ready_ == api::Milestone::beacon || ready_ == api::Milestone::port_open ||
                                 ready_ == api::Milestone::start_acknowledged;
    if (!engine_observes && !caps.observed.count(ready_)) {
      fail_run(make_error(ErrorKind::invalid_input,
                          fmt::format("platform {} does not observe milestone {} (ready.signal)",
                                      plan_.platform.kind, api::to_string(ready_)),
                          "choose another ready.signal, or configure a beacon or a TCP port probe"));
      co_return;
    }

    api::InventoryRequest inventory;
    std::set<std::string> hosts;
    for (auto& s : selected_scenarios())
      for (auto& p : s->placement) hosts.insert(p.host);
    inventory.hosts.assign(hosts.begin(), hosts.end());
    inventory.total_vms = 0;
    for (auto& s : selected_scenarios()) inventory.total_vms += static_cast<std::size_t>(s->total_vms());
    auto checked = co_await provider_->check_inventory(inventory);
    if (!checked) {
      fail_run(checked.error());
      co_return;
    }
    phase_boundary();

    // Slugs: unique per scenario even when names only differ beyond the slug length.
    std::set<std::string> used;
    for (auto* s : selected_scenarios()) {
      std::string slug = scenario_slug(s->name);
      std::string candidate = slug;
      for (int n = 2; used.count(candidate); ++n) candidate = fmt::format("{}-{}", slug, n);
      used.insert(candidate);
      slugs_[s->name] = candidate;
    }

    const int repeats = options_.repeat > 0 ? options_.repeat : std::max(1, plan_.repeat);
    all_ready_ = true;
    for (auto* s : selected_scenarios()) {
      for (int r = 1; r <= repeats; ++r) {
        if (interrupt_.cancelled()) break;
        co_await run_scenario(*s, r);
        ++storm_ordinal_;
      }
    }
  }

  std::vector<const plan::Scenario*> selected_scenarios() const {
    std::vector<const plan::Scenario*> out;
    for (auto& s : plan_.scenarios)
      if (options_.only_scenario.empty() || s.name == options_.only_scenario) out.push_back(&s);
    return out;
  }

  // ------------------------------------------------------------------------------------------ milestones
  void on_event(api::MilestoneEvent ev) {
    if (!storm_ || !storm_->active) return;
    if (auto it = storm_->id_to_name.find(ev.vm); it != storm_->id_to_name.end()) ev.vm = it->second;
    storm_->timeline.observe(ev);
  }

  void on_milestone(const std::string& vm, const TimelineEntry& e) {
    emit("milestone", {{"scenario", current_scenario_},
                       {"repeat", current_repeat_},
                       {"vm", vm},
                       {"milestone", std::string(api::to_string(e.milestone))},
                       {"offsetS", std::round(e.offset_s * 1e6) / 1e6},
                       {"resolutionS", e.resolution_s},
                       {"source", std::string(api::to_string(e.source))},
                       {"wall", unix_seconds(e.wall)},
                       {"detail", e.detail}});
    if (e.milestone == api::Milestone::ip_assigned && prober_) prober_->probe(vm, e.detail);
  }

  ProgressCounts counts() const {
    ProgressCounts c = counts_;
    if (storm_) {
      c.ready = storm_->timeline.count(VmState::ready);
      c.failed = counts_.failed + storm_->timeline.count(VmState::failed);
      c.started = started_;
    }
    return c;
  }

  // ------------------------------------------------------------------------------------------ scenario
  asio::awaitable<void> run_scenario(const plan::Scenario& scenario, int repeat) {
    current_scenario_ = scenario.name;
    current_repeat_ = repeat;
    const int plan_vms = scenario.total_vms();
    // This run's VMs of the scenario: all of them, or the shard's round-robin slice (same numbers and
    // names as in the unsharded run).
    std::vector<api::VmSpec> specs;
    {
      int index = (repeat - 1) * plan_vms;
      for (auto& p : scenario.placement) {
        for (int i = 0; i < p.vms; ++i) {
          api::VmSpec spec;
          spec.index = ++index;
          if (!options_.shard.owns(spec.index)) continue;
          spec.name = vm_name(run_id_, slugs_[scenario.name], spec.index);
          spec.scenario = scenario.name;
          spec.host = p.host;
          specs.push_back(std::move(spec));
        }
      }
    }
    const int n = static_cast<int>(specs.size());
    std::set<std::string> hosts;
    for (auto& p : scenario.placement) hosts.insert(p.host);
    json scenario_started = {{"scenario", scenario.name},
                             {"repeat", repeat},
                             {"vms", n},
                             {"hosts", static_cast<int>(hosts.size())}};
    if (options_.shard.sharded()) scenario_started["planVms"] = plan_vms;
    emit("scenario_started", std::move(scenario_started));
    phase_boundary();
    spdlog::info("scenario '{}' repeat {}: {} VMs on {} hosts{}", scenario.name, repeat, n, hosts.size(),
                 options_.shard.sharded()
                     ? fmt::format(" (shard {} of the plan's {})", options_.shard.to_string(), plan_vms)
                     : std::string());
    const auto stats_before = provider_->stats();
    const auto scenario_t0 = Clock::now();
    std::vector<std::string> errors;
    counts_ = ProgressCounts{};
    counts_.total = static_cast<std::size_t>(n);
    started_ = 0;

    // ---- provision
    progress_.phase("provision", counts_);
    std::vector<std::optional<api::VmHandle>> handles(specs.size());
    std::vector<bool> startable(specs.size(), false);
    {
      std::vector<std::size_t> indices(specs.size());
      std::iota(indices.begin(), indices.end(), std::size_t{0});
      auto one = [&](std::size_t i) -> asio::awaitable<void> {
        if (interrupt_.cancelled()) co_return;
        const auto& spec = specs[i];
        const auto t0 = Clock::now();
        auto vm = co_await provider_->provision(spec);
        const double clone_s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!vm) {
          ++counts_.failed;
          all_ready_ = false;
          emit("vm_provision_failed", {{"scenario", scenario.name},
                                       {"repeat", repeat},
                                       {"vm", spec.name},
                                       {"host", spec.host},
                                       {"reason", vm.error().what()}});
          spdlog::warn("clone of {} failed: {}", spec.name, vm.error().what());
          co_return;
        }
        provisioned_any_ = true;
        handles[i] = *vm;
        emit("vm_created", {{"scenario", scenario.name},
                            {"repeat", repeat},
                            {"vm", vm->name},
                            {"id", vm->id},
                            {"host", vm->host.empty() ? spec.host : vm->host},
                            {"cloneS", std::round(clone_s * 1e6) / 1e6}});
        if (!options_.dry_run) {
          auto ok = co_await provider_->wait_startable(*vm, options_.provision_timeout);
          if (!ok) {
            ++counts_.failed;
            all_ready_ = false;
            emit("vm_failed", {{"vm", vm->name}, {"reason", "not startable: " + ok.error().what()}});
            co_return;
          }
        }
        startable[i] = true;
        ++counts_.provisioned;
        progress_.update(counts_);
      };
      co_await async::bounded_for_each(indices, max_concurrent(), one, "provisioning");
    }
    phase_boundary();

    std::vector<api::VmHandle> vms;
    std::vector<api::VmHandle> created;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (handles[i]) created.push_back(*handles[i]);
      if (handles[i] && startable[i]) vms.push_back(*handles[i]);
    }
    if (static_cast<int>(vms.size()) < n) all_ready_ = false;

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
            format_rfc3339(*fire_at), late_s,
            std::chrono::duration<double>(Clock::now() - scenario_t0).count(),
            storm_ordinal_ > 0 ? " or a longer --storm-interval" : "");
        spdlog::error("{}", message);
        errors.push_back(message);
        if (!result.error) result.error = make_error(ErrorKind::timeout, message);
        for (auto& vm : vms) emit("vm_failed", {{"vm", vm.name}, {"reason", "not started: " + message}});
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
    } else if (vms.empty() && !interrupt_.cancelled() && !too_late && n > 0) {
      errors.push_back("no VM could be provisioned: the storm was skipped");
    }
    // A shard that owns no VM of this scenario (fewer VMs than shards) has nothing to storm: not a failure.
    if (!storm_ok && n > 0) all_ready_ = false;

    const auto stats_after = provider_->stats();
    emit("scenario_ended", {{"scenario", scenario.name},
                            {"repeat", repeat},
                            {"apiRequests", stats_after.requests - stats_before.requests},
                            {"apiErrors", stats_after.errors - stats_before.errors},
                            {"errors", errors_for(scenario.name, repeat, errors)}});
    phase_boundary();
    progress_.finish();

    // ---- cleanup per policy
    const bool scenario_success = storm_ok && static_cast<int>(vms.size()) == n && !interrupt_.cancelled();
    const bool clean = plan_.cleanup == "always" || (plan_.cleanup == "on-success" && scenario_success);
    if (clean && !created.empty()) {
      co_await cleanup_vms(created);
    } else if (!created.empty()) {
      spdlog::info("keeping {} VMs of scenario '{}' (cleanup: {}); remove them with `bootstorm cleanup {}`",
                   created.size(), scenario.name, plan_.cleanup,
                   result.run_dir.empty() ? std::string("RUN") : result.run_dir.string());
    }
    storm_.reset();
  }

  // The plan's bound on requests in flight, for every fan-out of the run.
  std::size_t max_concurrent() const {
    return static_cast<std::size_t>(std::max(1, plan_.platform.api_budget.max_concurrent));
  }

  json errors_for(const std::string& scenario, int repeat, const std::vector<std::string>& extra) {
    json out = json::array();
    auto record = builder_.record();
    for (auto& s : record.scenarios)
      if (s.name == scenario && s.repeat == repeat)
        for (auto& e : s.errors) out.push_back(e);
    for (auto& e : extra) out.push_back(e);
    return out;
  }

  // Everything the storm's background tasks touch lives here, owned jointly by them and by run_storm, so that
  // a provider that ignores the stop request cannot leave a task pointing into a finished coroutine frame.
  struct StormTasks {
    explicit StormTasks(asio::any_io_executor ex) : observers(std::move(ex)) {}
    async::WaitGroup observers;
    std::vector<api::VmHandle> vms;
    std::unique_ptr<StartBarrier> barrier;
    std::optional<Expected<FireReport>> fired;
    bool barrier_done = false;
  };

  asio::awaitable<bool> run_storm(const plan::Scenario& scenario, int repeat,
                                  const std::vector<api::VmHandle>& vms, std::vector<std::string>& errors,
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
    bo.max_concurrent = max_concurrent();
    bo.release_at_wall = fire_at;
    tasks->barrier = std::make_unique<StartBarrier>(*provider_, bo);
    StartCallback on_start = [this, storm](const api::VmHandle& vm, const Expected<api::StartResult>& r) {
      if (!storm->active) return;
      if (r) {
        ++started_;
        storm->timeline.set_started(vm.name, r->written_mono, r->written_wall);
        if (r->acknowledged_mono != Clock::time_point{}) {
          api::MilestoneEvent ack;
          ack.vm = vm.name;
          ack.milestone = api::Milestone::start_acknowledged;
          ack.observed_mono = r->acknowledged_mono;
          ack.observed_wall = r->acknowledged_wall;
          ack.source = api::Source::client;
          ack.resolution_s = 0;
          storm->timeline.observe(ack);
        }
      } else {
        const bool cancelled = r.error().kind == ErrorKind::cancelled;
        std::string reason =
            cancelled ? "not started: the run was interrupted" : "start failed: " + r.error().what();
        storm->timeline.fail(vm.name, reason);
        if (!cancelled) emit("vm_failed", {{"vm", vm.name}, {"reason", reason}});
      }
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
    const double ramp_s =
        bo.ramp && bo.per_second > 0 ? static_cast<double>(vms.size()) / bo.per_second : 0.0;
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
        emit("vm_failed", {{"vm", vm}, {"reason", reason}});
      if (tasks->barrier_done && storm->timeline.finished()) break;
      if (Clock::now() >= hard_deadline) {
        for (auto& vm : vms) {
          if (storm->timeline.state(vm.name) == VmState::waiting) {
            std::string reason =
                fmt::format("start request did not return within {:g} s",
                            std::chrono::duration<double>(hard_deadline - storm_begin).count());
            storm->timeline.fail(vm.name, reason);
            emit("vm_failed", {{"vm", vm.name}, {"reason", reason}});
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

  void announce_fire(const plan::Scenario& scenario, int repeat, const Expected<FireReport>& fired,
                     std::vector<std::string>& errors) {
    if (!fired) {
      errors.push_back("storm not fired: " + fired.error().what());
      spdlog::error("storm not fired: {}", fired.error().what());
      return;
    }
    const auto& r = *fired;
    json fired_event = {
        {"scenario", scenario.name},
        {"repeat", repeat},
        {"firstMono", r.first_written && journal_ ? journal_->mono_of(*r.first_written) : 0.0},
        {"lastMono", r.last_written && journal_ ? journal_->mono_of(*r.last_written) : 0.0},
        {"fireSkewMs", std::round(r.fire_skew_ms * 1000) / 1000},
        {"firstWall", r.first_written ? unix_seconds(r.first_written_wall) : 0.0},
        {"starts", r.succeeded},
        {"startFailures", r.failed},
        {"notReleased", r.not_released},
        {"peakInFlight", r.peak_in_flight}};
    if (r.release_offset_ms) {
      // The agreed instant and how far from it this worker really fired, on its own CLOCK_REALTIME.
      fired_event["startAt"] = unix_seconds(r.released_wall) - *r.release_offset_ms / 1000.0;
      fired_event["releasedWall"] = unix_seconds(r.released_wall);
      fired_event["startAtOffsetMs"] = std::round(*r.release_offset_ms * 1000) / 1000;
      if (r.first_written_offset_ms)
        fired_event["firstStartOffsetMs"] = std::round(*r.first_written_offset_ms * 1000) / 1000;
    }
    emit("storm_fired", std::move(fired_event));
    progress_.finish();  // a log line must not land on the live status line
    spdlog::info("storm fired: {} starts, fire skew {:.2f} ms, {} failed{}", r.succeeded, r.fire_skew_ms,
                 r.failed,
                 r.release_offset_ms
                     ? fmt::format(", barrier opened {:+.3f} ms from the start instant", *r.release_offset_ms)
                     : std::string());
  }

  asio::awaitable<void> cleanup_vms(const std::vector<api::VmHandle>& vms) {
    progress_.phase("cleanup", counts());
    std::size_t deleted = 0, failed = 0;
    auto one = [&](const api::VmHandle& vm) -> asio::awaitable<void> {
      if (skip_cleanup_) co_return;
      if (!api::name_carries_run_id(vm.name, run_id_)) {
        ++failed;
        spdlog::error("refusing to delete {}: its name does not carry run id {}", vm.name, run_id_);
        co_return;
      }
      auto gone = co_await provider_->destroy(vm);
      if (gone) {
        ++deleted;
        emit("vm_deleted", {{"vm", vm.name}, {"id", vm.id}});
      } else {
        ++failed;
        emit("vm_delete_failed", {{"vm", vm.name}, {"id", vm.id}, {"reason", gone.error().what()}});
        spdlog::warn("deleting {} failed: {}", vm.name, gone.error().what());
      }
    };
    co_await async::bounded_for_each(vms, max_concurrent(), one, "cleanup");
    phase_boundary();
    progress_.finish();
    spdlog::info("cleanup: {} VMs deleted{}", deleted, failed ? fmt::format(", {} failed", failed) : "");
    if (failed && !result.run_dir.empty())
      spdlog::warn("some VMs were not deleted: run `bootstorm cleanup {}`", result.run_dir.string());
  }

  const plan::StormPlan& plan_;
  const RunOptions& options_;
  const EngineHooks& hooks_;
  asio::io_context& io_;
  asio::any_io_executor ex_;
  CancelSignal interrupt_;
  Progress progress_;
  asio::signal_set signals_;
  bool skip_cleanup_ = false;

  Clock::time_point origin_{};
  std::string run_id_;
  api::Milestone ready_ = api::Milestone::guest_agent;
  std::unique_ptr<Journal> journal_;
  RunRecordBuilder builder_;
  ResolvedPlatform platform_;
  std::unique_ptr<beacon::ReadyListener> beacon_;
  std::unique_ptr<api::Provider> provider_;
  std::shared_ptr<StormState> storm_;
  std::unique_ptr<PortProber> prober_;
  std::vector<std::unique_ptr<PortProber>> abandoned_;
  std::map<std::string, std::string> slugs_;
  std::string current_scenario_;
  int current_repeat_ = 1;
  int storm_ordinal_ = 0;  // scenario x repeat storms run so far (the k of start_at + k * storm_interval)
  ProgressCounts counts_;
  std::size_t started_ = 0;
  bool all_ready_ = true;
  bool provisioned_any_ = false;

 public:
  // Objects bound to the io_context must go before it; called by RunEngine::run after io.run().
  void release() {
    prober_.reset();
    abandoned_.clear();
    storm_.reset();
    provider_.reset();
    beacon_.reset();
    platform_.keepalive.reset();
  }
};

}  // namespace

RunEngine::RunEngine(plan::StormPlan plan, RunOptions options, EngineHooks hooks)
    : plan_(std::move(plan)), options_(std::move(options)), hooks_(std::move(hooks)) {}

RunResult RunEngine::run() {
  asio::io_context io;
  auto session = std::make_unique<Session>(plan_, options_, hooks_, io);
  bool done = false;
  asio::co_spawn(io, session->main(), [&](std::exception_ptr e) {
    done = true;
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        session->result.error = make_error(ErrorKind::internal, std::string("run aborted: ") + ex.what());
        session->result.exit_code = 1;
        session->result.outcome = "error";
      }
    }
    io.stop();
  });
  io.run();
  RunResult result = std::move(session->result);
  session->release();
  session.reset();
  (void)done;
  return result;
}

}  // namespace bootstorm::engine
