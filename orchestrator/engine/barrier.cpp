#include "orchestrator/engine/barrier.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include "common/async/for_each.hpp"
#include "common/async/semaphore.hpp"
#include "common/async/sleep.hpp"
#include "common/async/wait_group.hpp"
#include "common/log.hpp"

namespace bootstorm::engine {

namespace asio = boost::asio;

std::size_t burst_concurrency(int plan_start_concurrency, const api::Capabilities& caps, std::size_t starts) {
  std::size_t concurrency = starts;
  if (plan_start_concurrency > 0)
    concurrency = static_cast<std::size_t>(plan_start_concurrency);
  else if (caps.start_burst_limit > 0 && !caps.starts_batched)
    concurrency = caps.start_burst_limit;
  return std::max<std::size_t>(1, std::min(concurrency, starts));
}

std::chrono::steady_clock::duration StartBarrier::release_offset(std::size_t index) const {
  if (!options_.ramp || options_.per_second <= 0) return std::chrono::steady_clock::duration::zero();
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(static_cast<double>(index) / options_.per_second));
}

asio::awaitable<Expected<FireReport>> StartBarrier::fire(const std::vector<api::VmHandle>& vms,
                                                         StartCallback on_result, CancelSignal cancel) {
  auto ex = co_await asio::this_coro::executor;
  FireReport report;
  if (vms.empty()) co_return report;

  auto prepared = co_await provider_.prepare_storm(
      std::min(vms.size(), std::max<std::size_t>(1, options_.max_concurrent)));
  if (!prepared) co_return prepared.error();

  if (options_.release_at_wall) {
    // Aim the steady clock at the wall-clock target in slices of at most a second: each slice re-reads
    // CLOCK_REALTIME, so NTP corrections during the wait are followed and the final slice is short.
    const auto target = *options_.release_at_wall;
    while (!cancel.cancelled()) {
      const auto remaining = target - std::chrono::system_clock::now();
      if (remaining <= std::chrono::system_clock::duration::zero()) break;
      const auto slice = std::min<std::chrono::steady_clock::duration>(
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(remaining),
          std::chrono::seconds(1));
      co_await async::sleep_for(slice, cancel);
    }
  }
  async::AsyncSemaphore slots(ex, options_.max_concurrent);
  async::WaitGroup group(ex);
  std::size_t in_flight = 0;
  report.released_at = std::chrono::steady_clock::now();
  report.released_wall = std::chrono::system_clock::now();
  if (options_.release_at_wall)
    report.release_offset_ms =
        std::chrono::duration<double, std::milli>(report.released_wall - *options_.release_at_wall).count();
  const auto opened = report.released_at;

  auto one = [&](std::size_t index) -> asio::awaitable<void> {
    const api::VmHandle& vm = vms[index];
    auto offset = release_offset(index);
    if (offset > std::chrono::steady_clock::duration::zero())
      co_await async::sleep_until(opened + offset, cancel);
    auto permit = co_await async::acquire(slots);
    if (cancel.cancelled()) {
      ++report.not_released;
      on_result(
          vm, make_error(ErrorKind::cancelled, "start of " + vm.name + " not sent: the run was interrupted"));
      co_return;
    }
    ++report.released;
    report.peak_in_flight = std::max(report.peak_in_flight, ++in_flight);
    Expected<api::StartResult> result = make_error(ErrorKind::internal, "start did not complete");
    try {
      result = co_await provider_.start(vm);
    } catch (const std::exception& e) {
      result = make_error(ErrorKind::internal, "start of " + vm.name + " threw: " + e.what());
    }
    --in_flight;
    if (result) {
      ++report.succeeded;
      const auto& r = *result;
      if (!report.first_written || r.written_mono < *report.first_written) {
        report.first_written = r.written_mono;
        report.first_written_wall = r.written_wall;
      }
      if (!report.last_written || r.written_mono > *report.last_written) report.last_written = r.written_mono;
    } else {
      ++report.failed;
    }
    on_result(vm, result);
  };

  // Spawn every start now: for the simultaneous mode they all run up to their first write in this same turn
  // of the executor, which is what "released together" means on one thread.
  for (std::size_t i = 0; i < vms.size(); ++i) {
    group.add();
    asio::co_spawn(ex, one(i), [&group](std::exception_ptr e) {
      async::log_task_exception(e, "start task");
      group.done();
    });
  }
  co_await group.wait();
  if (report.first_written && options_.release_at_wall)
    report.first_written_offset_ms =
        std::chrono::duration<double, std::milli>(report.first_written_wall - *options_.release_at_wall)
            .count();
  if (report.first_written && report.last_written)
    report.fire_skew_ms =
        std::chrono::duration<double, std::milli>(*report.last_written - *report.first_written).count();
  co_return report;
}

}  // namespace bootstorm::engine
