#include "orchestrator/cli/live_metrics.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "orchestrator/beacon/listener.hpp"
#include "protocol/http/server.hpp"
#include "reports/reports.hpp"
#include "results/summary.hpp"

namespace bootstorm::cli {
namespace {

// What Prometheus sends when it prefers OpenMetrics: "application/openmetrics-text;version=1.0.0,...".
bool wants_openmetrics(const http::ServerRequest& request) {
  auto accept = request.header("Accept");
  return accept && accept->find("application/openmetrics-text") != std::string_view::npos;
}

http::ServerResponse metrics_response(const engine::LiveRun& run, bool openmetrics) {
  const results::RunRecord record = run.record();
  const results::Summary summary = results::summarize(record);
  reports::LiveMetrics live;
  live.running = run.running();
  if (auto api = run.scenario_api())
    live.in_progress = reports::LiveApiAccount{api->scenario, api->repeat, api->stats};
  const auto format =
      openmetrics ? reports::MetricsFormat::openmetrics : reports::MetricsFormat::prometheus_text;
  http::ServerResponse response;
  response.headers = {{"Content-Type", std::string(reports::metrics_content_type(format))},
                      {"Cache-Control", "no-store"}};
  response.body = reports::render_metrics(record, summary, format, &live);
  return response;
}

// The server and what it needs, stopped when the engine lets go of it.
struct Served {
  std::unique_ptr<http::Server> server;
  ~Served() {
    if (server) server->stop_now();
  }
};

}  // namespace

Expected<void> check_metrics_listen(const std::string& listen) {
  std::string host;
  unsigned short port = 0;
  if (!beacon::split_host_port(listen, host, port))
    return make_error(ErrorKind::invalid_input, fmt::format("--metrics-listen {} is not HOST:PORT", listen),
                      "write it as 127.0.0.1:9464 (loopback), 0.0.0.0:9464 (every address, e.g. in a pod) or "
                      "127.0.0.1:0 (any free port)");
  return {};
}

std::function<Expected<std::shared_ptr<void>>(boost::asio::any_io_executor, const engine::LiveRun&)>
live_metrics_server(std::string listen) {
  return [listen](boost::asio::any_io_executor executor,
                  const engine::LiveRun& run) -> Expected<std::shared_ptr<void>> {
    std::string host;
    unsigned short port = 0;
    if (auto ok = check_metrics_listen(listen); !ok) return ok.error();
    beacon::split_host_port(listen, host, port);
    http::ServerOptions options;
    options.bind_address = host;
    options.port = port;
    options.max_connections = 64;
    auto served = std::make_shared<Served>();
    const engine::LiveRun* view = &run;
    served->server = std::make_unique<http::Server>(
        executor, options,
        [view](http::ServerRequest& request) -> boost::asio::awaitable<http::ServerResponse> {
          if (request.path != "/metrics") {
            co_return http::ServerResponse{
                404, {{"Content-Type", "text/plain"}}, "bootstorm serves /metrics\n"};
          }
          if (request.method != "GET" && request.method != "HEAD") {
            co_return http::ServerResponse{
                405, {{"Allow", "GET, HEAD"}, {"Content-Type", "text/plain"}}, "GET /metrics\n"};
          }
          co_return metrics_response(*view, wants_openmetrics(request));
        });
    if (auto started = served->server->start(); !started) {
      Error e = started.error();
      e.message = fmt::format("--metrics-listen {}: {}", listen, e.message);
      if (e.hint.empty()) e.hint = "choose a free port, or 127.0.0.1:0 for any";
      return e;
    }
    spdlog::info("metrics: {}/metrics (live while the run goes on)", served->server->base_url());
    return std::static_pointer_cast<void>(served);
  };
}

}  // namespace bootstorm::cli
