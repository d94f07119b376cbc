// RunSession's lifecycle: the journal it feeds, Ctrl-C / SIGTERM handling, the platform (beacon, provider,
// connect, inventory check) and the loop over scenario x repeat storms (see detail/run_session.hpp).
#include "orchestrator/engine/detail/run_session.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <set>

#include "common/async/sleep.hpp"
#include "common/rfc3339.hpp"
#include "orchestrator/engine/journal_events.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/preflight.hpp"
#include "orchestrator/engine/shard.hpp"
#include "results/api_answers.hpp"

namespace bootstorm::engine::detail {

namespace asio = boost::asio;

using nlohmann::json;

RunSession::RunSession(const plan::StormPlan& plan, const RunOptions& options, const EngineHooks& hooks,
                       asio::io_context& io)
    : plan_(plan),
      options_(options),
      hooks_(hooks),
      io_(io),
      ex_(io.get_executor()),
      interrupt_(options.interrupt),
      progress_(options.progress),
      signals_(io) {}

asio::awaitable<void> RunSession::main() {
  if (options_.handle_signals) watch_signals();
  co_await run_all();
  boost::system::error_code ignored;
  signals_.cancel(ignored);
}

void RunSession::release() {
  live_server_.reset();
  prober_.reset();
  abandoned_.clear();
  storm_.reset();
  provider_.reset();
  beacon_.reset();
  platform_.keepalive.reset();
}

// ------------------------------------------------------------------------------------------ journal
json RunSession::emit(std::string_view type, json payload) {
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

void RunSession::phase_boundary() {
  if (journal_) journal_->sync();
}

void RunSession::fail_run(const Error& error) {
  spdlog::error("{}", error.what());
  result.error = error;
  emit(events::run_error, {{"message", error.what()}, {"kind", to_string(error.kind)}});
}

// ------------------------------------------------------------------------------------------ signals
void RunSession::watch_signals() {
  boost::system::error_code ec;
  signals_.add(SIGINT, ec);
  signals_.add(SIGTERM, ec);
  signals_.async_wait([this](boost::system::error_code e, int sig) { on_signal(e, sig); });
}

void RunSession::on_signal(boost::system::error_code e, int sig) {
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

// ------------------------------------------------------------------------------------------ run
asio::awaitable<void> RunSession::run_all() {
  origin_ = Clock::now();
  auto started_wall = std::chrono::system_clock::now();
  run_id_ = options_.run_id.empty() ? new_run_id() : options_.run_id;
  auto ready = ready_milestone(plan_);
  if (!ready) {
    result.error = make_error(ErrorKind::invalid_input,
                              fmt::format("ready.signal '{}' is not a milestone", plan_.ready.signal),
                              "use one of start_acknowledged, scheduled, running, guest_agent, ip_assigned, "
                              "port_open, beacon");
    result.exit_code = 2;
    result.outcome = "error";
    co_return;
  }
  ready_ = *ready;
  if (ready_ == api::Milestone::port_open && plan_.ready.port <= 0) {
    result.error = make_error(ErrorKind::invalid_input, "ready.signal is port_open but ready.port is not set",
                              "set ready.port (e.g. 3389 or 22)");
    result.exit_code = 2;
    result.outcome = "error";
    co_return;
  }
  if (ready_ == api::Milestone::beacon && !plan_.ready.beacon.enabled) {
    result.error = make_error(ErrorKind::invalid_input, "ready.signal is beacon but no beacon is configured",
                              "add ready.beacon.listen");
    result.exit_code = 2;
    result.outcome = "error";
    co_return;
  }

  if (!options_.dry_run && !options_.check_only) {
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
  json started = {{fields::run_id, run_id_},
                  {fields::plan, plan_.name},
                  {fields::platform, plan_.platform.kind},
                  {"endpoint", plan_.platform.endpoint},
                  {fields::simulated, simulated},
                  {fields::lab, simulated ? lab_name : std::string()},
                  {fields::ready_signal, std::string(api::to_string(ready_))},
                  {"cleanup", plan_.cleanup},
                  {"dryRun", options_.dry_run},
                  {fields::plan_yaml, options_.plan_yaml},
                  {fields::clone_kind, plan_.platform.settings.clone_kind()},
                  {fields::golden, plan_.platform.settings.golden_image()},
                  {"planDigest", plan_digest(options_.plan_yaml)},
                  {fields::slo, slo_json(plan_)}};
  // What `bootstorm merge` checks: the shard, the agreed instant, the storm spacing and the selection.
  if (options_.shard.sharded())
    started[fields::shard] = {{fields::shard_index, options_.shard.index},
                              {fields::shard_count, options_.shard.count}};
  if (options_.start_at) {
    started[fields::start_at] = format_rfc3339(*options_.start_at);
    started["stormIntervalS"] = std::chrono::duration<double>(options_.storm_interval).count();
  }
  if (!options_.only_scenario.empty()) started["onlyScenario"] = options_.only_scenario;
  if (options_.repeat > 0) started[fields::repeat] = options_.repeat;
  emit(events::run_started, std::move(started));
  phase_boundary();
  if (!result.run_dir.empty()) spdlog::info("run {} -> {}", run_id_, result.run_dir.string());

  // The live figures are served from here on; an address that cannot be served fails the run before
  // anything is created.
  bool serving = true;
  if (hooks_.serve_live && !options_.dry_run && !options_.check_only) {
    auto served = hooks_.serve_live(ex_, *this);
    if (served) {
      live_server_ = std::move(*served);
    } else {
      fail_run(served.error());
      serving = false;
    }
  }
  if (resolved && serving) {
    platform_ = std::move(*resolved);
    co_await run_platform();
  } else if (!resolved) {
    fail_run(resolved.error());
  }
  finish_run();
  ended_ = true;
  if (live_server_ && options_.metrics_linger.count() > 0 && !interrupt_.cancelled()) {
    spdlog::info("serving the final metrics for {:g} s more (--metrics-linger)",
                 std::chrono::duration<double>(options_.metrics_linger).count());
    co_await async::sleep_for(options_.metrics_linger, interrupt_);
  }
  live_server_.reset();
}

std::optional<LiveRun::ScenarioApi> RunSession::scenario_api() const {
  if (!live_scenario_ || !provider_) return std::nullopt;
  const http::ApiStats now = live_scenario_->after ? *live_scenario_->after : provider_->stats();
  return ScenarioApi{live_scenario_->name, live_scenario_->repeat, now.since(live_scenario_->before)};
}

asio::awaitable<void> RunSession::run_platform() {
  api::ProviderConfig config = platform_.config;

  if (plan_.ready.beacon.enabled && !options_.check_only) {
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

  // What the provider learns that the journal keeps (PowerOnMultiVM's per-VM results, DRS moves).
  config.note = [this](std::string_view type, std::string fields_json) {
    json payload = json::parse(fields_json, nullptr, false);
    if (!payload.is_object()) return;
    payload[fields::scenario] = current_scenario_;
    payload[fields::repeat] = current_repeat_;
    emit(type, std::move(payload));
  };
  // The platform gone: stop as an interrupt would, but delete nothing (nothing can be reached); the run
  // fails with the reason (finish_run).
  config.platform_gone = [gone = gone_, interrupt = interrupt_](const std::string& message) mutable {
    {
      std::lock_guard lock(gone->mutex);
      if (gone->message) return;
      gone->message = message;
    }
    spdlog::error("{}: stopping the run (no new clones or starts, nothing deleted while it is away)",
                  message);
    interrupt.cancel();
  };
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

  // What the run made besides its VMs (the golden VM's snapshot its linked clones share) goes once every VM
  // is gone; a kept VM still needs it (`bootstorm cleanup` removes it with the VMs).
  if (provisioned_any_ && !vms_kept_ && !options_.dry_run) {
    auto removed = co_await provider_->remove_run_artifacts(run_id_);
    if (!removed) {
      spdlog::warn("removing what run {} made besides its VMs failed: {}; run `bootstorm cleanup {}`",
                   run_id_, removed.error().what(),
                   result.run_dir.empty() ? std::string("RUN") : result.run_dir.string());
    }
  }
  co_await stop_beacon();
  try {
    co_await provider_->disconnect();
  } catch (const std::exception& e) {
    spdlog::warn("disconnect failed: {}", e.what());
  }
}

asio::awaitable<void> RunSession::stop_beacon() {
  if (beacon_) co_await beacon_->stop();
}

asio::awaitable<void> RunSession::run_with_provider() {
  progress_.phase("connect", {});
  auto connected = co_await provider_->connect();
  if (!connected) {
    fail_run(connected.error());
    co_return;
  }
  auto caps = provider_->capabilities();
  if (!caps.api.empty()) {
    spdlog::info("platform API: {}", caps.api);
    emit(events::platform_connected, {{fields::api, caps.api}});
  }
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
  if (!options_.skip_checks) {
    const api::CheckRequest request = check_request(plan_, selected_scenarios());
    progress_.phase("check", {});
    std::vector<api::CheckResult> checks = co_await provider_->check(request);
    checks.push_back(start_burst_check(plan_, caps, request.largest_storm));
    record_checks(checks);
    if (auto failed = first_failure(checks)) {
      fail_run(*failed);
      co_return;
    }
  } else {
    spdlog::warn(
        "--skip-checks: the platform was not checked before the run (`bootstorm check PLAN` asks "
        "the same questions without creating anything)");
  }
  if (options_.check_only) {
    result.facts = provider_->facts();
    co_return;
  }
  auto checked = co_await provider_->check_inventory(inventory);
  if (!checked) {
    fail_run(checked.error());
    co_return;
  }
  record_platform_facts();
  open_telemetry();
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

std::vector<const plan::Scenario*> RunSession::selected_scenarios() const {
  std::vector<const plan::Scenario*> out;
  for (auto& s : plan_.scenarios)
    if (options_.only_scenario.empty() || s.name == options_.only_scenario) out.push_back(&s);
  return out;
}

// ------------------------------------------------------------------------------------------ scenario
asio::awaitable<void> RunSession::run_scenario(const plan::Scenario& scenario, int repeat) {
  current_scenario_ = scenario.name;
  current_repeat_ = repeat;
  const int plan_vms = scenario.total_vms();
  const std::vector<api::VmSpec> specs = scenario_specs(scenario, repeat);
  const int n = static_cast<int>(specs.size());
  std::set<std::string> hosts;
  for (auto& p : scenario.placement) hosts.insert(p.host);
  json scenario_started = {{fields::scenario, scenario.name},
                           {fields::repeat, repeat},
                           {fields::vms, n},
                           {fields::hosts, static_cast<int>(hosts.size())}};
  if (options_.shard.sharded()) scenario_started["planVms"] = plan_vms;
  emit(events::scenario_started, std::move(scenario_started));
  phase_boundary();
  spdlog::info("scenario '{}' repeat {}: {} VMs on {} hosts{}", scenario.name, repeat, n, hosts.size(),
               options_.shard.sharded()
                   ? fmt::format(" (shard {} of the plan's {})", options_.shard.to_string(), plan_vms)
                   : std::string());
  const auto stats_before = provider_->stats();
  live_scenario_ = LiveScenario{scenario.name, repeat, stats_before, std::nullopt};
  const auto scenario_t0 = Clock::now();
  std::vector<std::string> errors;
  counts_ = ProgressCounts{};
  counts_.total = static_cast<std::size_t>(n);
  started_ = 0;

  ProvisionedVms provisioned = co_await provision(scenario, repeat, specs);
  const auto stats_provisioned = provider_->stats();
  std::vector<api::VmHandle>& vms = provisioned.startable;
  const bool storm_ok = co_await settle_and_storm(scenario, repeat, n, vms, errors, scenario_t0);
  // A shard that owns no VM of this scenario (fewer VMs than shards) has nothing to storm: not a failure.
  if (!storm_ok && n > 0) all_ready_ = false;

  const auto stats_after = provider_->stats();
  live_scenario_->after = stats_after;
  co_await collect_telemetry(scenario, repeat, vms);
  emit(events::scenario_ended,
       {{fields::scenario, scenario.name},
        {fields::repeat, repeat},
        {fields::api_requests, stats_after.requests - stats_before.requests},
        {fields::storm_api_requests, stats_after.requests - stats_provisioned.requests},
        {"apiErrors", stats_after.errors - stats_before.errors},
        {fields::api_answers, results::api_answers_json(stats_after.since(stats_before))},
        {fields::errors, errors_for(scenario.name, repeat, errors)}});
  live_scenario_.reset();
  phase_boundary();
  progress_.finish();

  const bool scenario_success = storm_ok && static_cast<int>(vms.size()) == n && !interrupt_.cancelled();
  co_await clean_up_scenario(scenario, scenario_success, provisioned.created);
  storm_.reset();
}

void RunSession::record_checks(const std::vector<api::CheckResult>& checks) {
  result.checks = checks;
  emit(events::checks, {{fields::results, checks_json(checks)}});
  progress_.finish();
  // `bootstorm check` prints its own table; a run shows it in its log.
  if (!options_.check_only) spdlog::info("checks before the run:\n{}", check_table(checks));
}

void RunSession::record_platform_facts() {
  const api::PlatformFacts facts = provider_->facts();
  const auto& budget = plan_.platform.api_budget;
  json api_budget = {{"requestsPerSecond", budget.requests_per_second},
                     {"maxConcurrent", budget.max_concurrent},
                     // 0: every start of the burst at once (storm.startConcurrency unset)
                     {"startConcurrency", plan_.storm.start_concurrency}};
  if (budget.starts_per_connection > 0) api_budget["startsPerConnection"] = budget.starts_per_connection;
  emit(events::platform_facts,
       {{fields::facts, json(api::facts_to_json(facts))}, {fields::api_budget, api_budget}});
  if (const std::string line = api::describe(facts); !line.empty()) spdlog::info("platform: {}", line);
  if (!facts.simulator.empty() && !is_simulated_endpoint(plan_.platform.endpoint)) {
    spdlog::info("the platform says it is a simulator ({}): this run's results are labelled simulated",
                 facts.simulator);
  }
}

std::size_t RunSession::max_concurrent() const {
  return static_cast<std::size_t>(std::max(1, plan_.platform.api_budget.max_concurrent));
}

std::size_t RunSession::start_concurrency(std::size_t starts) const {
  return burst_concurrency(plan_.storm.start_concurrency, provider_->capabilities(), starts);
}

json RunSession::errors_for(const std::string& scenario, int repeat, const std::vector<std::string>& extra) {
  json out = json::array();
  auto record = builder_.record();
  for (auto& s : record.scenarios)
    if (s.name == scenario && s.repeat == repeat)
      for (auto& e : s.errors) out.push_back(e);
  for (auto& e : extra) out.push_back(e);
  return out;
}

ProgressCounts RunSession::counts() const {
  ProgressCounts c = counts_;
  if (storm_) {
    c.ready = storm_->timeline.count(VmState::ready);
    c.failed = counts_.failed + storm_->timeline.count(VmState::failed);
    c.started = started_;
  }
  return c;
}

}  // namespace bootstorm::engine::detail
