#pragma once
// `run --metrics-listen ADDR`: the run's figures at http://ADDR/metrics while it runs, rendered from the live
// view of the engine (engine::LiveRun) by the renderer of metrics.prom (reports::render_metrics), so the same
// families carry the same values, and at the end the journal's. OpenMetrics when the scraper asks for it
// (Accept: application/openmetrics-text, as Prometheus does), else the Prometheus text format (curl,
// promtool). Plain HTTP, as Prometheus scrapes a pod: the figures hold no secret; bind it to loopback or to
// the pod's address.
#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <string>

#include "common/expected.hpp"
#include "orchestrator/engine/live_run.hpp"

namespace bootstorm::cli {

// Checks `listen` ("127.0.0.1:9464", "0.0.0.0:9464", "[::1]:0"); the error names the flag and the form.
Expected<void> check_metrics_listen(const std::string& listen);

// The engine hook (engine::EngineHooks::serve_live) serving at `listen`; it logs the URL it serves.
std::function<Expected<std::shared_ptr<void>>(boost::asio::any_io_executor, const engine::LiveRun&)>
live_metrics_server(std::string listen);

}  // namespace bootstorm::cli
