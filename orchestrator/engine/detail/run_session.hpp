#pragma once
// Internal to bootstorm::engine: the state and steps of one RunEngine::run, shared by the parts that act on
// it (run_session.cpp: lifecycle, signals, journal, platform and the scenario loop; run_directory.cpp;
// provision_phase.cpp; storm_phase.cpp; run_outcome.cpp).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "orchestrator/beacon/listener.hpp"
#include "orchestrator/engine/barrier.hpp"
#include "orchestrator/engine/hooks.hpp"
#include "orchestrator/engine/journal.hpp"
#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/engine/platform.hpp"
#include "orchestrator/engine/port_probe.hpp"
#include "orchestrator/engine/progress.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "orchestrator/engine/timeline.hpp"
#include "orchestrator/plan/plan.hpp"
#include "providers/api/provider.hpp"

namespace bootstorm::engine::detail {

// The state of one scenario/repeat storm, shared with callbacks that may outlive the storm (a provider's
// observe loop that ignores the stop for a while): they check `active`.
struct StormState {
  explicit StormState(api::Milestone ready, MilestoneTimeline::Listener listener)
      : timeline(ready, std::move(listener)) {}
  MilestoneTimeline timeline;
  bool active = true;
  std::map<std::string, std::string> id_to_name;
  // Start failures by reason: the first of each reason is logged (every one is journaled and reported).
  std::map<std::string, std::size_t> start_failures;
};

// The VMs of one scenario/repeat after provisioning.
struct ProvisionedVms {
  std::vector<api::VmHandle> created;    // every VM that exists now (cleanup deletes these)
  std::vector<api::VmHandle> startable;  // those that also became startable (the storm starts these)
};

class RunSession final : public LiveRun {
 public:
  using Clock = std::chrono::steady_clock;

  RunSession(const plan::StormPlan& plan, const RunOptions& options, const EngineHooks& hooks,
             boost::asio::io_context& io);

  RunResult result;

  // LiveRun (run_session.cpp)
  results::RunRecord record() const override { return builder_.record(); }
  std::optional<ScenarioApi> scenario_api() const override;
  bool running() const override { return !ended_; }

  boost::asio::awaitable<void> main();
  // Objects bound to the io_context must go before it; called by RunEngine::run after io.run().
  void release();

 private:
  // run_session.cpp: journal, signals, platform, scenario loop
  nlohmann::json emit(std::string_view type, nlohmann::json payload);
  void phase_boundary();
  void watch_signals();
  void on_signal(boost::system::error_code e, int sig);
  void fail_run(const Error& error);
  boost::asio::awaitable<void> run_all();
  boost::asio::awaitable<void> run_platform();
  boost::asio::awaitable<void> stop_beacon();
  boost::asio::awaitable<void> run_with_provider();
  std::vector<const plan::Scenario*> selected_scenarios() const;
  boost::asio::awaitable<void> run_scenario(const plan::Scenario& scenario, int repeat);
  // The plan's bound on requests in flight, for every fan-out of the run.
  // Keeps the checks' answers (RunResult::checks, the journal's `checks`) and logs them as a table.
  void record_checks(const std::vector<api::CheckResult>& checks);
  // Journals what the provider learned of the platform (platform_facts) and logs it in one line.
  void record_platform_facts();
  std::size_t max_concurrent() const;
  // Start requests in flight at once for a burst of `starts` (burst_concurrency).
  std::size_t start_concurrency(std::size_t starts) const;
  nlohmann::json errors_for(const std::string& scenario, int repeat, const std::vector<std::string>& extra);
  ProgressCounts counts() const;

  // run_directory.cpp
  Expected<void> create_run_directory(std::chrono::system_clock::time_point started);

  // provision_phase.cpp
  std::vector<api::VmSpec> scenario_specs(const plan::Scenario& scenario, int repeat);
  boost::asio::awaitable<ProvisionedVms> provision(const plan::Scenario& scenario, int repeat,
                                                   const std::vector<api::VmSpec>& specs);

  // telemetry_phase.cpp
  void open_telemetry();
  boost::asio::awaitable<void> collect_telemetry(const plan::Scenario& scenario, int repeat,
                                                 const std::vector<api::VmHandle>& vms);

  // storm_phase.cpp
  boost::asio::awaitable<bool> settle_and_storm(const plan::Scenario& scenario, int repeat, int planned_vms,
                                                std::vector<api::VmHandle>& vms,
                                                std::vector<std::string>& errors,
                                                Clock::time_point scenario_t0);
  void on_start_result(StormState& storm, const api::VmHandle& vm, const Expected<api::StartResult>& r);
  void start_port_probes(const std::shared_ptr<StormState>& storm, const CancelSignal& observe_stop);
  boost::asio::awaitable<bool> run_storm(const plan::Scenario& scenario, int repeat,
                                         const std::vector<api::VmHandle>& vms,
                                         std::vector<std::string>& errors,
                                         std::optional<std::chrono::system_clock::time_point> fire_at);
  void announce_fire(const plan::Scenario& scenario, int repeat, const Expected<FireReport>& fired,
                     std::vector<std::string>& errors);
  void on_event(api::MilestoneEvent ev);
  void on_milestone(const std::string& vm, const TimelineEntry& e);

  // run_outcome.cpp
  void finish_run();
  boost::asio::awaitable<void> clean_up_scenario(const plan::Scenario& scenario, bool scenario_success,
                                                 const std::vector<api::VmHandle>& created);
  boost::asio::awaitable<void> cleanup_vms(const std::vector<api::VmHandle>& vms);

  const plan::StormPlan& plan_;
  const RunOptions& options_;
  const EngineHooks& hooks_;
  boost::asio::io_context& io_;
  boost::asio::any_io_executor ex_;
  CancelSignal interrupt_;
  Progress progress_;
  boost::asio::signal_set signals_;
  bool skip_cleanup_ = false;
  // The platform went away mid-run (ProviderConfig::platform_gone, told from any thread): why.
  struct PlatformGone {
    mutable std::mutex mutex;
    std::optional<std::string> message;
  };
  std::shared_ptr<PlatformGone> gone_ = std::make_shared<PlatformGone>();
  std::optional<std::string> platform_gone() const {
    std::lock_guard lock(gone_->mutex);
    return gone_->message;
  }

  Clock::time_point origin_{};
  std::string run_id_;
  api::Milestone ready_ = api::Milestone::guest_agent;
  std::unique_ptr<Journal> journal_;
  RunRecordBuilder builder_;
  ResolvedPlatform platform_;
  std::unique_ptr<beacon::ReadyListener> beacon_;
  std::unique_ptr<api::Provider> provider_;
  std::unique_ptr<api::TelemetrySource> telemetry_;  // declared after provider_: it may use its sessions
  std::string telemetry_unavailable_;                // why there is no source
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
  bool vms_kept_ = false;  // a VM of the run was kept (cleanup policy) or could not be deleted
  // The live view (LiveRun): the scenario whose API account is still counting, and the server watching.
  struct LiveScenario {
    std::string name;
    int repeat = 1;
    http::ApiStats before;
    std::optional<http::ApiStats> after;  // taken for scenario_ended: no longer counting
  };
  std::optional<LiveScenario> live_scenario_;
  std::shared_ptr<void> live_server_;
  bool ended_ = false;
};

}  // namespace bootstorm::engine::detail
