// Storage telemetry of each storm: the provider's source, asked once the storm is over — one sample step
// after the last ready, so that the last interval is in — and before cleanup (vCenter drops a destroyed VM's
// statistics). What it cannot read is a warning in the log, the journal and the report; it never fails or
// changes the storm's results.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "common/async/sleep.hpp"
#include "common/rfc3339.hpp"
#include "orchestrator/engine/detail/run_session.hpp"
#include "orchestrator/engine/journal_events.hpp"
#include "results/storage_figures.hpp"
#include "results/telemetry_json.hpp"

namespace bootstorm::engine::detail {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

// When the source cannot say how often it samples: Prometheus' usual scrape interval for KubeVirt, above
// vCenter's 20 s.
constexpr double kFallbackStepS = 30;
// After the step, how long the platform may take to make the last sample readable.
constexpr double kIngestLagS = 1;

}  // namespace

void RunSession::open_telemetry() {
  const plan::Telemetry& t = plan_.telemetry;
  if (t.source == "none" || options_.dry_run) return;
  api::TelemetrySettings settings;
  settings.source = t.source;
  if (t.interval.count() > 0) settings.interval_s = std::chrono::duration<double>(t.interval).count();
  settings.endpoint = t.endpoint;
  settings.token_file = t.token_file;
  settings.ca_file = t.ca_file;
  auto source = provider_->telemetry_source(settings);
  if (!source) {
    telemetry_unavailable_ = source.error().what();
    spdlog::warn("storage telemetry: none for this run: {}", telemetry_unavailable_);
    return;
  }
  telemetry_ = std::move(*source);
}

asio::awaitable<void> RunSession::collect_telemetry(const plan::Scenario& scenario, int repeat,
                                                    const std::vector<api::VmHandle>& vms) {
  if (plan_.telemetry.source == "none" || options_.dry_run || !storm_) co_return;
  auto unavailable = [&](const std::string& why) {
    emit(events::telemetry,
         {{fields::scenario, scenario.name}, {fields::repeat, repeat}, {fields::unavailable, why}});
  };
  if (!telemetry_) {
    unavailable(telemetry_unavailable_);
    co_return;
  }
  // The window: from just before the first start to one sample step after the last ready.
  double first_start = std::numeric_limits<double>::infinity();
  double last_ready = 0;
  api::TelemetryRequest request;
  request.cancel = interrupt_;  // Ctrl-C ends a read against a hung monitoring API at once
  for (const auto& vm : vms) {
    request.vm_names.push_back(vm.name);
    request.hosts.push_back(vm.host);
    if (auto started = storm_->timeline.entry(vm.name, api::Milestone::start_requested)) {
      first_start = std::min(first_start, unix_seconds(started->wall));
    }
    if (auto ready = storm_->timeline.entry(vm.name, ready_))
      last_ready = std::max(last_ready, unix_seconds(ready->wall));
  }
  if (first_start == std::numeric_limits<double>::infinity()) {
    unavailable("no VM was started");
    co_return;
  }
  const double now = unix_seconds(std::chrono::system_clock::now());
  if (last_ready == 0) last_ready = now;  // nothing became ready: up to the storm's end
  std::vector<std::string> warnings;
  double step = std::chrono::duration<double>(plan_.telemetry.interval).count();
  if (step <= 0) {
    auto found = co_await telemetry_->sample_step_s(request);
    if (found) {
      step = *found;
    } else if (found.error().kind == ErrorKind::cancelled) {
      unavailable("interrupted while asking the telemetry source for its sample step");
      co_return;
    } else if (found.error().kind != ErrorKind::not_found) {
      // The source refused or failed (403, 503, a timeout): waiting for a sample would not change that.
      const std::string why = found.error().what();
      spdlog::warn("storage telemetry of scenario '{}' repeat {}: {} (the storm's results stand)",
                   scenario.name, repeat, why);
      unavailable(why);
      co_return;
    } else {
      step = kFallbackStepS;
      warnings.push_back(
          fmt::format("the sample step is unknown ({}); the window ends {:.0f} s after the last ready",
                      found.error().what(), step));
    }
  }
  request.from = first_start - 1;
  request.to = last_ready + step;
  const double wait_s = request.to + kIngestLagS - unix_seconds(std::chrono::system_clock::now());
  progress_.phase("telemetry", counts());
  if (wait_s > 0) {
    spdlog::info("storage telemetry: waiting {:.1f} s for the {} sample after the last ready", wait_s,
                 telemetry_->name());
    const bool waited =
        co_await async::sleep_for(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(wait_s)),
                                  interrupt_);
    if (!waited) {
      unavailable("interrupted before the storm's last sample was taken");
      co_return;
    }
  }
  auto report = co_await telemetry_->collect(request);
  if (!report && report.error().kind == ErrorKind::cancelled) {
    unavailable("interrupted while reading the storm's samples");
    co_return;
  }
  if (!report) {
    const std::string why = report.error().what();
    spdlog::warn("storage telemetry of scenario '{}' repeat {}: {} (the storm's results stand)",
                 scenario.name, repeat, why);
    unavailable(why);
    co_return;
  }
  for (auto& w : warnings) report->warnings.push_back(std::move(w));
  for (const auto& w : report->warnings) spdlog::warn("storage telemetry: {}", w);
  const results::StorageFigures f = results::storage_figures(*report, static_cast<int>(vms.size()));
  spdlog::info(
      "storage ({}, {:g} s samples): peak {:.0f} MB/s, mean {:.0f} MB/s, peak {:.0f} IOPS ({:.1f} per "
      "desktop){}",
      report->source, report->resolution_s, f.peak_bytes_per_s / 1e6, f.mean_bytes_per_s / 1e6, f.peak_iops,
      f.peak_iops_per_desktop,
      f.read_latency_p95_s ? fmt::format(", read latency P95 {:.2f} ms", *f.read_latency_p95_s * 1e3) : "");
  emit(events::telemetry, {{fields::scenario, scenario.name},
                           {fields::repeat, repeat},
                           {fields::report, results::telemetry_json(*report)}});
}

}  // namespace bootstorm::engine::detail
