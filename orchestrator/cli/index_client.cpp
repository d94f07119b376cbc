#include "orchestrator/cli/index_client.hpp"

#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <optional>

#include "common/base64.hpp"
#include "common/log.hpp"

namespace bootstorm::cli {

void add_index_options(CLI::App& command, IndexArgs& args, const std::string& what) {
  command.add_option("--index", args.url,
                     what + " (https://HOST:PORT/INDEX; credentials from BOOTSTORM_INDEX_USERNAME/PASSWORD)");
  command.add_option("--index-ca", args.ca_file, "CA file for the index server")->check(CLI::ExistingFile);
  command.add_flag("--index-insecure", args.insecure, "Skip TLS verification of the index server");
}

Expected<IndexTarget> index_target(const IndexArgs& args) {
  auto url = http::parse_url(args.url);
  std::string index = url ? url->target : "";
  while (!index.empty() && index.front() == '/') index.erase(0, 1);
  if (!url || index.empty() || index.find('/') != std::string::npos || index.find('?') != std::string::npos)
    return make_error(ErrorKind::invalid_input, "--index " + args.url + " is not an index URL",
                      "write it as https://HOST:PORT/INDEX, e.g. https://opensearch:9200/bootstorm");
  return IndexTarget{url->origin(), index};
}

Expected<http::Response> index_request(const IndexArgs& args, const IndexTarget& target, std::string method,
                                       std::string path, std::string body, std::string content_type,
                                       const std::string& what) {
  http::ClientOptions options;
  options.base_url = target.origin;
  options.tls.ca_file = args.ca_file;
  options.tls.insecure_skip_verify = args.insecure;
  options.max_connections = 1;
  const char* user = std::getenv("BOOTSTORM_INDEX_USERNAME");
  const char* password = std::getenv("BOOTSTORM_INDEX_PASSWORD");
  if (user != nullptr && password != nullptr) {
    std::string authorization = "Basic " + base64_encode(std::string(user) + ":" + password);
    log::register_secret(password);
    log::register_secret(authorization);
    options.default_headers.emplace_back("Authorization", std::move(authorization));
  }
  boost::asio::io_context io;
  http::Client client(io.get_executor(), options);
  http::Request request(std::move(method), std::move(path), std::move(body));
  request.headers.emplace_back("Content-Type", std::move(content_type));
  request.idempotent = request.method == "GET";
  std::optional<Expected<http::Response>> response;
  boost::asio::co_spawn(
      io, [&]() -> boost::asio::awaitable<void> { response = co_await client.request(std::move(request)); },
      boost::asio::detached);
  io.run();
  if (!response) return make_error(ErrorKind::internal, what + ": the request did not complete");
  if (!*response) {
    Error e = response->error();
    e.message = what + " failed: " + e.message;
    return e;
  }
  const http::Response& r = response->value();
  if (r.status < 200 || r.status >= 300)
    return make_error(ErrorKind::http_status,
                      what + " failed: HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 300),
                      r.status == 401 ? "set BOOTSTORM_INDEX_USERNAME and BOOTSTORM_INDEX_PASSWORD" : "",
                      r.status);
  return std::move(response->value());
}

Expected<nlohmann::json> fetch_quantile_documents(const IndexArgs& args, const std::string& plan) {
  auto target = index_target(args);
  if (!target) return target.error();
  constexpr std::size_t kPage = 1000, kWindow = 10000;
  nlohmann::json filter =
      nlohmann::json::array({{{"match", {{"metricName", "vmiLatencyQuantilesMeasurement"}}}}});
  if (!plan.empty()) filter.push_back({{"match_phrase", {{"metadata.plan", plan}}}});
  nlohmann::json documents = nlohmann::json::array();
  for (std::size_t from = 0;; from += kPage) {
    const nlohmann::json query = {{"from", from},
                                  {"size", kPage},
                                  {"sort", nlohmann::json::array({{{"timestamp", "asc"}}})},
                                  {"query", {{"bool", {{"filter", filter}}}}}};
    const std::string what = fmt::format("reading quantile documents {}-{} from {}/{}/_search", from,
                                         from + kPage, target->origin, target->index);
    auto response = index_request(args, *target, "POST", "/" + target->index + "/_search", query.dump(),
                                  "application/json", what);
    if (!response) return response.error();
    const auto answer = nlohmann::json::parse(response->body, nullptr, false);
    const nlohmann::json* hits = nullptr;
    if (answer.is_object() && answer.contains("hits") && answer["hits"].is_object()) hits = &answer["hits"];
    if (hits == nullptr || !hits->contains("hits") || !(*hits)["hits"].is_array())
      return make_error(ErrorKind::api,
                        what + ": the answer has no hits.hits: " + response->body.substr(0, 300),
                        "is this an OpenSearch or Elasticsearch index URL?");
    std::size_t total = 0;
    if (auto t = hits->find("total"); t != hits->end())
      total = t->is_object() ? t->value("value", std::size_t{0}) : t->is_number() ? t->get<std::size_t>() : 0;
    for (const auto& hit : (*hits)["hits"])
      if (hit.is_object() && hit.contains("_source")) documents.push_back(hit["_source"]);
    if (total > kWindow)
      return make_error(
          ErrorKind::invalid_input,
          fmt::format("{}/{} holds {} quantile documents{}: more than one search can page through "
                      "({})",
                      target->origin, target->index, total, plan.empty() ? "" : " of plan " + plan, kWindow),
          plan.empty() ? "name the plan to follow with --plan" : "read the run directories instead");
    if ((*hits)["hits"].empty() || documents.size() >= total) break;
  }
  return documents;
}

}  // namespace bootstorm::cli
