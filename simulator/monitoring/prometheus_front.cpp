// The lab's Prometheus query API (see the header): authorization, the front faults aimed at it, the query
// parameters from the URL or a form body, and the engine's answer over KubeVirt's storage series.
#include "simulator/monitoring/prometheus_front.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <set>

#include "common/header_text.hpp"
#include "protocol/http/types.hpp"
#include "simulator/model/lab.hpp"
#include "simulator/monitoring/kubevirt_storage_series.hpp"
#include "simulator/prometheus/answer_json.hpp"

namespace bootstorm::sim::monitoring {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

http::ServerResponse answer(int status, std::string body) {
  http::ServerResponse response;
  response.status = status;
  response.headers.emplace_back("Content-Type", "application/json");
  response.body = std::move(body);
  return response;
}

http::ServerResponse prometheus_error(int status, const std::string& type, const std::string& message) {
  return answer(status, json{{"status", "error"}, {"errorType", type}, {"error", message}}.dump());
}

// "a=1&b=x%20y" -> {a: 1, b: "x y"}; the first occurrence of a name wins, as Go's FormValue.
void add_form_values(std::string_view text, std::map<std::string, std::string>& values) {
  while (!text.empty()) {
    const auto amp = text.find('&');
    const std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view{} : text.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    std::string name = http::url_decode(pair.substr(0, eq));
    std::string value = eq == std::string_view::npos ? std::string() : http::url_decode(pair.substr(eq + 1));
    values.emplace(std::move(name), std::move(value));
  }
}

}  // namespace

struct PrometheusFront::Impl : std::enable_shared_from_this<PrometheusFront::Impl> {
  model::Lab& lab;
  std::set<std::string> tokens;
  double since;  // the first scrape
  std::vector<std::string> nodes;
  bool alive = true;
  struct {
    std::uint64_t queries = 0, range_queries = 0, unauthorized = 0, forbidden = 0, injected_errors = 0,
                  bad_requests = 0;
  } stats;

  Impl(model::Lab& l, PrometheusFrontOptions options)
      // The cluster's monitoring has scraped virt-handler for an hour before the lab came up, as it would on
      // a cluster that did not start with the run.
      : lab(l), tokens(options.tokens.begin(), options.tokens.end()), since(l.now() - 3600) {
    for (const auto& node : lab.nodes()) nodes.push_back(node.spec.name);
    if (!lab.spec().kube.token.empty()) tokens.insert(lab.spec().kube.token);
  }

  // Faults reach this front only when a listed path prefix names it.
  bool faults_aimed_here(const std::string& path) const {
    const auto& paths = lab.faults().paths;
    for (const auto& prefix : paths) {
      if (!prefix.empty() && path.starts_with(prefix) && prefix.starts_with("/api/v1/")) return true;
    }
    return false;
  }

  bool authenticated(const http::ServerRequest& request) const {
    auto header = request.header("Authorization");
    if (!header || header->size() <= 7 || !equals_ignoring_ascii_case(header->substr(0, 7), "Bearer ")) {
      return false;
    }
    return tokens.count(std::string(header->substr(7))) > 0;
  }

  // The querier's proxy asks whether the user may get namespaces (cluster-monitoring-view grants it).
  bool allowed() const {
    const auto& deny = lab.spec().kube.deny;
    return std::find(deny.begin(), deny.end(), "get core namespaces") == deny.end();
  }

  // As the querier's kube-rbac-proxy words a refused SubjectAccessReview.
  static http::ServerResponse forbidden() {
    http::ServerResponse refused =
        answer(403, "Forbidden (user=lab, verb=get, resource=namespaces, subresource=)\n");
    refused.headers = {{"Content-Type", "text/plain; charset=utf-8"}};
    return refused;
  }

  asio::awaitable<http::ServerResponse> handle(http::ServerRequest& request) {
    auto self = shared_from_this();
    if (!alive) co_return prometheus_error(503, "unavailable", "the lab is stopping");
    if (faults_aimed_here(request.path)) {
      const auto& faults = lab.faults();
      double latency_ms = faults.latency_ms;
      if (faults.latency_jitter_ms > 0) latency_ms += faults.latency_jitter_ms * lab.random_uniform();
      if (latency_ms > 0) {
        asio::steady_timer timer(co_await asio::this_coro::executor);
        timer.expires_after(std::chrono::microseconds(static_cast<std::int64_t>(latency_ms * 1000)));
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
        if (!alive) co_return prometheus_error(503, "unavailable", "the lab is stopping");
      }
      if (faults.error_rate > 0 && lab.random_uniform() < faults.error_rate) {
        ++stats.injected_errors;
        const int status = faults.error_status;
        if (status == 403) co_return forbidden();
        co_return prometheus_error(status, status == 503 ? "unavailable" : "internal",
                                   "injected fault (the lab's faults name this path)");
      }
    }
    if (!authenticated(request)) {
      ++stats.unauthorized;
      http::ServerResponse refused = answer(401, "Unauthorized\n");
      refused.headers = {{"Content-Type", "text/plain; charset=utf-8"}};
      co_return refused;
    }
    if (!allowed()) {
      ++stats.forbidden;
      co_return forbidden();
    }
    if (request.path == "/api/v1/status/buildinfo" && request.method == "GET") {
      co_return answer(200, json{{"status", "success"},
                                 {"data",
                                  {{"version", "2.48.0"},
                                   {"revision", "bootstorm-lab"},
                                   {"branch", "lab"},
                                   {"goVersion", "go1.21"}}}}
                                .dump());
    }
    const bool instant = request.path == "/api/v1/query";
    const bool range = request.path == "/api/v1/query_range";
    if (!instant && !range) co_return prometheus_error(404, "not_found", "no such endpoint: " + request.path);
    if (request.method != "GET" && request.method != "POST") {
      co_return prometheus_error(405, "bad_data", "method not allowed: " + request.method);
    }
    prometheus::QueryParams params;
    params.endpoint = instant ? prometheus::QueryEndpoint::instant : prometheus::QueryEndpoint::range;
    add_form_values(request.query, params.values);
    if (request.method == "POST") {
      auto type = request.header("Content-Type");
      if (type && type->starts_with("application/x-www-form-urlencoded"))
        add_form_values(request.body, params.values);
    }
    const model::StorageTelemetry& telemetry = lab.storage_telemetry();
    params.now = lab.now();
    const KubevirtStorageSeries store(telemetry, lab.spec().telemetry.scrape_interval_s, nodes, since);
    (instant ? stats.queries : stats.range_queries)++;
    int status = 200;
    std::string body = prometheus::answer_query(params, store, status);
    if (status != 200) ++stats.bad_requests;
    co_return answer(status, std::move(body));
  }
};

PrometheusFront::PrometheusFront(model::Lab& lab, PrometheusFrontOptions options)
    : impl_(std::make_shared<Impl>(lab, std::move(options))) {}

PrometheusFront::~PrometheusFront() {
  impl_->alive = false;
}

http::Handler PrometheusFront::handler() {
  std::weak_ptr<Impl> weak = impl_;
  return [weak](http::ServerRequest& request) -> asio::awaitable<http::ServerResponse> {
    auto impl = weak.lock();
    if (!impl) co_return prometheus_error(503, "unavailable", "the lab is stopping");
    co_return co_await impl->handle(request);
  };
}

json PrometheusFront::stats() const {
  const auto& s = impl_->stats;
  return {{"queries", s.queries},     {"rangeQueries", s.range_queries},     {"unauthorized", s.unauthorized},
          {"forbidden", s.forbidden}, {"injectedErrors", s.injected_errors}, {"badRequests", s.bad_requests}};
}

}  // namespace bootstorm::sim::monitoring
