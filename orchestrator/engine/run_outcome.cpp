// How a run ends: the cleanup of a scenario's VMs per the plan's policy, then the outcome, run_ended, the
// run directory's outputs and the exit code.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/async/for_each.hpp"
#include "orchestrator/engine/detail/run_session.hpp"
#include "orchestrator/engine/journal_events.hpp"

namespace bootstorm::engine::detail {

namespace asio = boost::asio;

void RunSession::finish_run() {
  if (options_.check_only) {  // nothing was made: the answer is the checks'
    progress_.finish();
    result.outcome = result.error ? "failed" : "checked";
    result.exit_code = result.error ? 1 : 0;
    return;
  }
  // Outcome and exit code.
  const auto gone = platform_gone();
  if (gone) {
    fail_run(make_error(ErrorKind::connect, *gone,
                        result.run_dir.empty()
                            ? std::string("when the API server is back, check for VMs this run left behind")
                            : fmt::format("the journal is kept: when the API server is back, run `bootstorm "
                                          "cleanup {}` to remove what this run created",
                                          result.run_dir.string())));
    vms_kept_ = vms_kept_ || provisioned_any_;
  }
  std::string outcome;
  if (gone) {
    outcome = "failed";
  } else if (interrupt_.cancelled()) {
    outcome = "interrupted";
  } else if (result.error) {
    outcome = "failed";
  } else {
    outcome = all_ready_ ? "completed" : "failed";
  }
  emit(events::run_ended, {{fields::outcome, outcome}});
  phase_boundary();
  // A journal that missed events fails the run even when the storm went well: the run directory can no
  // longer rebuild it (`bootstorm report`) nor tell `bootstorm cleanup` everything it created.
  if (journal_ && !result.error) {
    if (std::string failure = journal_->write_error(); !failure.empty())
      result.error = make_error(
          ErrorKind::io, fmt::format("the journal {} is incomplete: {}", journal_->path().string(), failure),
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
             (result.error->kind == ErrorKind::invalid_input || result.error->kind == ErrorKind::not_found) &&
             !provisioned_any_) {
    result.exit_code = 2;
  } else if (outcome == "completed" && result.slo_passed && !result.error) {
    result.exit_code = 0;
  } else {
    result.exit_code = 1;
  }
  journal_.reset();  // final fsync + close
}

asio::awaitable<void> RunSession::clean_up_scenario(const plan::Scenario& scenario, bool scenario_success,
                                                    const std::vector<api::VmHandle>& created) {
  const bool clean = plan_.cleanup == "always" || (plan_.cleanup == "on-success" && scenario_success);
  if (clean && !created.empty()) {
    co_await cleanup_vms(created);
  } else if (!created.empty()) {
    vms_kept_ = true;
    spdlog::info("keeping {} VMs of scenario '{}' (cleanup: {}); remove them with `bootstorm cleanup {}`",
                 created.size(), scenario.name, plan_.cleanup,
                 result.run_dir.empty() ? std::string("RUN") : result.run_dir.string());
  }
}

asio::awaitable<void> RunSession::cleanup_vms(const std::vector<api::VmHandle>& vms) {
  if (platform_gone()) {
    vms_kept_ = true;
    spdlog::warn("cleanup of {} VMs skipped: the API server is gone (the journal lists them)", vms.size());
    co_return;
  }
  progress_.phase("cleanup", counts());
  std::size_t deleted = 0, failed = 0;
  auto one = [&](const api::VmHandle& vm) -> asio::awaitable<void> {
    if (skip_cleanup_ || platform_gone()) co_return;
    if (!api::name_carries_run_id(vm.name, run_id_)) {
      ++failed;
      spdlog::error("refusing to delete {}: its name does not carry run id {}", vm.name, run_id_);
      co_return;
    }
    auto gone = co_await provider_->destroy(vm);
    if (gone) {
      ++deleted;
      emit(events::vm_deleted, {{fields::vm, vm.name}, {fields::id, vm.id}});
    } else {
      ++failed;
      emit(events::vm_delete_failed,
           {{fields::vm, vm.name}, {fields::id, vm.id}, {fields::reason, gone.error().what()}});
      spdlog::warn("deleting {} failed: {}", vm.name, gone.error().what());
    }
  };
  co_await async::bounded_for_each(vms, max_concurrent(), one, "cleanup");
  if (failed || skip_cleanup_ || platform_gone()) vms_kept_ = true;
  phase_boundary();
  progress_.finish();
  spdlog::info("cleanup: {} VMs deleted{}", deleted, failed ? fmt::format(", {} failed", failed) : "");
  if (failed && !result.run_dir.empty())
    spdlog::warn("some VMs were not deleted: run `bootstorm cleanup {}`", result.run_dir.string());
}

}  // namespace bootstorm::engine::detail
