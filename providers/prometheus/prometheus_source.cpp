// Storage telemetry from the cluster's Prometheus (see the header).
#include "providers/prometheus/prometheus_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "protocol/http/client.hpp"
#include "protocol/http/types.hpp"
#include "providers/prometheus/storage_window.hpp"

namespace bootstorm::prometheus {

namespace asio = boost::asio;

Error query_refused(int status, const std::string& body, const PrometheusEndpoint& endpoint) {
  const std::string where = fmt::format("the query API at {} ({})", endpoint.url, endpoint.found_by);
  if (status == 401) {
    return make_error(
        ErrorKind::auth, fmt::format("{} did not accept the bearer token (401 Unauthorized).", where),
        "Set telemetry.tokenFile to a file holding a token the cluster accepts (oc whoami -t).");
  }
  if (status == 403) {
    return make_error(
        ErrorKind::auth,
        fmt::format("{} refused the token's user (403 Forbidden): reading cluster metrics needs the "
                    "cluster-monitoring-view role.",
                    where),
        "Grant it (oc adm policy add-cluster-role-to-user cluster-monitoring-view <user>) or set "
        "telemetry.tokenFile to the token of a user who has it.");
  }
  if (status == 404) {
    return make_error(ErrorKind::not_found, fmt::format("{} has no /api/v1/query (404).", where),
                      "Set telemetry.endpoint to the Prometheus or Thanos Querier base URL.");
  }
  std::string detail = body.substr(0, 200);
  while (!detail.empty() && (detail.back() == '\n' || detail.back() == '\r')) detail.pop_back();
  return make_error(ErrorKind::http_status,
                    fmt::format("{} answered HTTP {}{}.", where, status, detail.empty() ? "" : ": " + detail),
                    status >= 500 ? "The monitoring stack is unwell or overloaded; the storm's results stand."
                                  : "Check telemetry.endpoint.");
}

PrometheusStorageSource::PrometheusStorageSource(asio::any_io_executor executor, EndpointResolver resolver,
                                                 PrometheusSourceOptions options)
    : executor_(std::move(executor)), resolver_(std::move(resolver)), options_(std::move(options)) {}

PrometheusStorageSource::~PrometheusStorageSource() = default;

asio::awaitable<Expected<void>> PrometheusStorageSource::connect() {
  if (client_) co_return Expected<void>{};
  auto found = co_await resolver_();
  if (!found) co_return found.error();
  endpoint_ = std::move(*found);
  http::ClientOptions options;
  options.base_url = endpoint_->url;
  options.tls = endpoint_->tls;
  options.max_connections = 2;
  options.retry.max_attempts = 3;  // queries are reads: a 502/503/504 is worth another try
  if (!endpoint_->token.empty()) {
    options.default_headers.emplace_back("Authorization", "Bearer " + endpoint_->token);
  }
  client_ = std::make_unique<http::Client>(executor_, options);
  co_return Expected<void>{};
}

asio::awaitable<Expected<QueryAnswer>> PrometheusStorageSource::query(const std::string& promql,
                                                                      std::optional<double> time,
                                                                      const std::string& what) {
  std::string form = "query=" + http::url_encode(promql);
  if (time) form += fmt::format("&time={:.3f}", *time);
  co_return co_await post("/api/v1/query", std::move(form), what);
}

asio::awaitable<Expected<QueryAnswer>> PrometheusStorageSource::query_range(const std::string& promql,
                                                                            double start, double end,
                                                                            double step,
                                                                            const std::string& what) {
  std::string form =
      fmt::format("query={}&start={:.3f}&end={:.3f}&step={:.3f}", http::url_encode(promql), start, end, step);
  co_return co_await post("/api/v1/query_range", std::move(form), what);
}

asio::awaitable<Expected<QueryAnswer>> PrometheusStorageSource::post(std::string target, std::string form,
                                                                     const std::string& what) {
  http::Request call;
  call.method = "POST";
  call.target = std::move(target);
  call.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
  call.body = std::move(form);
  call.idempotent = true;  // a query changes nothing
  call.timeout = options_.timeout;
  call.cancel = cancel_;
  auto response = co_await client_->request(std::move(call));
  if (!response) {
    Error error = response.error();
    error.message =
        fmt::format("Reading {} from {} ({}): {}", what, endpoint_->url, endpoint_->found_by, error.message);
    // The Route is served by the cluster's ingress, whose certificate the kubeconfig's CA may not sign.
    if (error.kind == ErrorKind::tls) {
      error.hint =
          "Set telemetry.caFile to the CA of the cluster's ingress (oc extract -n openshift-config-managed "
          "configmap/default-ingress-cert).";
    }
    co_return error;
  }
  if (response->status != 200) {
    // An error answer in the API's JSON says more than the status alone.
    if (response->status == 400 || response->status == 422) {
      auto decoded = decode_answer(response->body, endpoint_->url);
      if (!decoded) co_return decoded.error();
    }
    co_return query_refused(response->status, response->body, *endpoint_);
  }
  co_return decode_answer(response->body, endpoint_->url);
}

asio::awaitable<Expected<double>> PrometheusStorageSource::sample_step_s(
    const api::TelemetryRequest& request) {
  if (step_s_) co_return *step_s_;
  cancel_ = request.cancel;
  auto connected = co_await connect();
  if (!connected) co_return connected.error();
  auto up = co_await query(fmt::format("up{{job=\"{}\"}}[5m]", kScrapeJob), std::nullopt, "up");
  if (!up) co_return up.error();
  std::vector<double> spacing;
  for (const auto& series : up->series) {
    for (std::size_t i = 1; i < series.samples.size(); ++i) {
      spacing.push_back(series.samples[i].at - series.samples[i - 1].at);
    }
  }
  if (spacing.empty()) {
    co_return make_error(
        ErrorKind::not_found,
        fmt::format("{} ({}) has scraped no {} target in the last 5 minutes (up{{job=\"{}\"}}).",
                    endpoint_->url, endpoint_->found_by, kScrapeJob, kScrapeJob),
        "Check that OpenShift Virtualization's ServiceMonitor is installed and that the "
        "monitoring stack scrapes it.");
  }
  std::nth_element(spacing.begin(), spacing.begin() + static_cast<std::ptrdiff_t>(spacing.size() / 2),
                   spacing.end());
  step_s_ = std::round(spacing[spacing.size() / 2] * 1000) / 1000;
  co_return *step_s_;
}

asio::awaitable<Expected<api::TelemetryReport>> PrometheusStorageSource::collect(
    const api::TelemetryRequest& request) {
  cancel_ = request.cancel;
  if (request.vm_names.size() > options_.per_vmi_limit) co_return co_await collect_node_sums(request);
  auto connected = co_await connect();
  if (!connected) co_return connected.error();
  const double range_s = raw_counter_range_s(request, step_s_);
  std::array<QueryAnswer, 6> answers;
  for (std::size_t m = 0; m < kStorageMetrics.size(); ++m) {
    auto answer =
        co_await query(raw_counter_query(m, options_.namespace_, range_s), request.to, kStorageMetrics[m]);
    if (!answer) co_return answer.error();
    answers[m] = std::move(*answer);
  }
  auto report = storage_report(answers, request, options_.grid_s, step_s_);
  if (!report) co_return report.error();
  report->endpoint = endpoint_->url;
  co_return std::move(*report);
}

asio::awaitable<Expected<api::TelemetryReport>> PrometheusStorageSource::collect_node_sums(
    const api::TelemetryRequest& request) {
  auto scrape = co_await sample_step_s(request);  // connects; the grid needs the scrape interval
  if (!scrape) co_return scrape.error();
  const NodeSumGrid grid = node_sum_grid(request, options_.grid_s.value_or(*scrape));
  const std::string pattern = name_pattern(request.vm_names);
  std::array<QueryAnswer, 6> answers;
  for (std::size_t m = 0; m < kStorageMetrics.size(); ++m) {
    auto answer = co_await query_range(node_sum_query(m, options_.namespace_, pattern), grid.start, grid.end,
                                       grid.step, kStorageMetrics[m]);
    if (!answer) co_return answer.error();
    answers[m] = std::move(*answer);
  }
  auto report = node_sum_report(answers, request, grid, *scrape);
  if (!report) co_return report.error();
  report->endpoint = endpoint_->url;
  report->warnings.insert(
      report->warnings.begin(),
      fmt::format("per-node sums only: this scenario has {} VMIs, and each VMI's series is read for up to "
                  "{} (no per-VMI read latency percentiles)",
                  request.vm_names.size(), options_.per_vmi_limit));
  co_return std::move(*report);
}

}  // namespace bootstorm::prometheus
