// The provision phase of one scenario/repeat: the VMs this run owns (all of them, or the shard's slice),
// cloned with bounded concurrency and waited on until startable, each journaled as it is created or fails.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <map>
#include <optional>

#include "common/async/for_each.hpp"
#include "orchestrator/engine/detail/run_session.hpp"
#include "orchestrator/engine/journal_events.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/provision_order.hpp"

namespace bootstorm::engine::detail {

namespace asio = boost::asio;

std::vector<api::VmSpec> RunSession::scenario_specs(const plan::Scenario& scenario, int repeat) {
  // This run's VMs of the scenario: all of them, or the shard's round-robin slice (same numbers and names as
  // in the unsharded run).
  std::vector<api::VmSpec> specs;
  int index = (repeat - 1) * scenario.total_vms();
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
  return specs;
}

asio::awaitable<ProvisionedVms> RunSession::provision(const plan::Scenario& scenario, int repeat,
                                                      const std::vector<api::VmSpec>& specs) {
  progress_.phase("provision", counts_);
  std::vector<std::optional<api::VmHandle>> handles(specs.size());
  std::vector<bool> startable(specs.size(), false);
  const std::vector<std::size_t> indices = provision_order(specs);
  // A failure shared by many clones (the namespace refused, the API server rejecting the VM) is logged in
  // full once and counted after the phase; the journal keeps every VM's.
  std::map<std::string, std::size_t> repeated_failures;
  auto one = [&](std::size_t i) -> asio::awaitable<void> {
    if (interrupt_.cancelled()) co_return;
    const auto& spec = specs[i];
    const auto t0 = Clock::now();
    auto vm = co_await provider_->provision(spec);
    const double clone_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!vm) {
      ++counts_.failed;
      all_ready_ = false;
      emit(events::vm_provision_failed, {{fields::scenario, scenario.name},
                                         {fields::repeat, repeat},
                                         {fields::vm, spec.name},
                                         {fields::host, spec.host},
                                         {fields::reason, vm.error().what()},
                                         {fields::failure, "clone"}});
      if (repeated_failures[vm.error().what()]++ == 0)
        spdlog::warn("clone of {} failed: {}", spec.name, vm.error().what());
      co_return;
    }
    provisioned_any_ = true;
    handles[i] = *vm;
    emit(events::vm_created, {{fields::scenario, scenario.name},
                              {fields::repeat, repeat},
                              {fields::vm, vm->name},
                              {fields::id, vm->id},
                              {fields::host, vm->host.empty() ? spec.host : vm->host},
                              {fields::clone_s, std::round(clone_s * 1e6) / 1e6}});
    if (!options_.dry_run) {
      auto ok = co_await provider_->wait_startable(*vm, options_.provision_timeout);
      if (!ok) {
        ++counts_.failed;
        all_ready_ = false;
        emit(events::vm_failed, {{fields::vm, vm->name},
                                 {fields::reason, "not startable: " + ok.error().what()},
                                 {fields::failure, "not_startable"}});
        co_return;
      }
      if (const std::string method = provider_->clone_method(*vm); !method.empty()) {
        emit(events::vm_startable, {{fields::scenario, scenario.name},
                                    {fields::repeat, repeat},
                                    {fields::vm, vm->name},
                                    {fields::clone_method, method}});
      }
    }
    startable[i] = true;
    ++counts_.provisioned;
    progress_.update(counts_);
  };
  co_await async::bounded_for_each(indices, max_concurrent(), one, "provisioning");
  phase_boundary();
  for (const auto& [reason, count] : repeated_failures)
    if (count > 1)
      spdlog::warn("{} more clones failed the same way ({}); the journal lists each", count - 1, reason);

  ProvisionedVms out;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (handles[i]) out.created.push_back(*handles[i]);
    if (handles[i] && startable[i]) out.startable.push_back(*handles[i]);
  }
  if (out.startable.size() < specs.size()) all_ready_ = false;
  co_return out;
}

}  // namespace bootstorm::engine::detail
