#include "orchestrator/engine/cleanup.hpp"

#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <set>

#include "common/async/for_each.hpp"
#include "common/log.hpp"
#include "orchestrator/engine/journal.hpp"
#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/engine/platform.hpp"

namespace bootstorm::engine {

namespace asio = boost::asio;

namespace {

asio::awaitable<Expected<CleanupReport>> cleanup_async(const std::filesystem::path& run_dir,
                                                       const plan::StormPlan& plan, const EngineHooks& hooks,
                                                       const CleanupOptions& options,
                                                       std::unique_ptr<api::Provider>& provider_slot,
                                                       ResolvedPlatform& platform_slot) {
  auto ex = co_await asio::this_coro::executor;
  auto journal_path = run_dir / "journal.jsonl";
  auto contents = read_journal(journal_path);
  if (!contents) co_return contents.error();
  CleanupReport report;
  report.run_id = contents->record.run_id;
  if (report.run_id.empty())
    co_return make_error(ErrorKind::invalid_input, fmt::format("{} names no run id", journal_path.string()),
                         "refusing to guess which objects belong to the run");
  report.from_journal = contents->undeleted.size();

  if (contents->record.source == "predicted") {
    report.note =
        "the run is a prediction (bootstorm predict): it ran in the lab model's virtual time and created "
        "nothing on any platform";
    co_return report;
  }
  if (plan.platform.endpoint == "embedded") {
    report.note =
        "the run used the embedded lab, which ran inside the bootstorm process and ended with it: "
        "nothing is left to delete";
    co_return report;
  }

  auto resolved = resolve_platform(plan, report.run_id, options.dry_run, hooks, ex);
  if (!resolved) co_return resolved.error();
  platform_slot = std::move(*resolved);
  if (hooks.make_provider) {
    provider_slot = hooks.make_provider(ex, platform_slot.config);
  } else {
    provider_slot = api::create_provider(platform_slot.config.kind, ex, platform_slot.config);
  }
  if (!provider_slot)
    co_return make_error(ErrorKind::invalid_input,
                         fmt::format("unknown platform kind '{}'", platform_slot.config.kind));
  auto& provider = *provider_slot;
  auto connected = co_await provider.connect();
  if (!connected) co_return connected.error();

  std::vector<api::VmHandle> candidates = contents->undeleted;
  std::set<std::string> names;
  for (auto& vm : candidates) names.insert(vm.name);
  auto listed = co_await provider.list_run_vms(report.run_id);
  if (listed) {
    for (auto& vm : *listed) {
      // A shard's cleanup takes only its own slice of the run's VMs: the other shards may still be running
      // theirs (clean up the whole run from the directory `bootstorm merge` wrote, or shard by shard).
      auto number = vm_number_from_name(vm.name);
      if (contents->shard.sharded() && (!number || !contents->shard.owns(*number))) continue;
      if (names.insert(vm.name).second) {
        candidates.push_back(vm);
        ++report.from_platform;
      }
    }
  } else {
    report.failed.push_back("listing the run's VMs on the platform failed: " + listed.error().what());
  }

  std::unique_ptr<Journal> journal;
  if (!options.dry_run && !candidates.empty()) {
    auto opened = Journal::open(journal_path);
    if (!opened) co_return opened.error();
    journal = std::move(*opened);
  }

  auto one = [&](const api::VmHandle& vm) -> asio::awaitable<void> {
    if (!api::name_carries_run_id(vm.name, report.run_id)) {
      report.refused.push_back(
          fmt::format("refusing to delete '{}' ({}): its name does not carry run id {} "
                      "(bootstorm only deletes objects named bs-{}-...)",
                      vm.name, vm.id.empty() ? "no id" : vm.id, report.run_id, report.run_id));
      co_return;
    }
    if (options.dry_run) {
      report.deleted.push_back(vm.name);
      spdlog::info("[dry-run] would delete {} ({})", vm.name, vm.id);
      co_return;
    }
    auto gone = co_await provider.destroy(vm);
    if (gone) {
      report.deleted.push_back(vm.name);
      journal->write("vm_deleted", {{"vm", vm.name}, {"id", vm.id}, {"by", "cleanup"}});
    } else {
      report.failed.push_back(fmt::format("deleting {} failed: {}", vm.name, gone.error().what()));
      journal->write("vm_delete_failed", {{"vm", vm.name}, {"id", vm.id}, {"reason", gone.error().what()}});
    }
  };
  co_await async::bounded_for_each(candidates, static_cast<std::size_t>(std::max(1, options.max_concurrent)),
                                   one, "cleanup task");
  if (journal) journal->sync();
  // With every VM gone, what the run made besides them (vSphere: the linked clones' snapshot).
  if (!options.dry_run && report.failed.empty() && report.refused.empty()) {
    auto removed = co_await provider.remove_run_artifacts(report.run_id);
    if (!removed)
      report.failed.push_back("removing what the run made besides its VMs failed: " + removed.error().what());
  }
  co_await provider.disconnect();
  if (candidates.empty()) report.note = "nothing to delete: every object of the run is already gone";
  co_return report;
}

}  // namespace

Expected<CleanupReport> cleanup_run(const std::filesystem::path& run_dir, const plan::StormPlan& plan,
                                    const EngineHooks& hooks, const CleanupOptions& options) {
  asio::io_context io;
  std::optional<Expected<CleanupReport>> result;
  std::unique_ptr<api::Provider> provider;
  ResolvedPlatform platform;
  auto task = [&]() -> asio::awaitable<void> {
    result = co_await cleanup_async(run_dir, plan, hooks, options, provider, platform);
  };
  asio::co_spawn(io, task(), [&](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        result = make_error(ErrorKind::internal, std::string("cleanup aborted: ") + ex.what());
      }
    }
    io.stop();
  });
  io.run();
  provider.reset();
  platform.keepalive.reset();
  if (!result) return make_error(ErrorKind::internal, "cleanup did not complete");
  return std::move(*result);
}

}  // namespace bootstorm::engine
