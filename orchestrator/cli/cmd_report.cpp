// `bootstorm report RUN [--index URL]`: re-renders every output of a run directory (summary.json, vms.csv,
// report.md, report.html, junit.xml, metrics.prom, quantile documents) from its journal.jsonl alone, and
// optionally bulk-uploads the kube-burner-shaped quantile and per-VM documents to OpenSearch/Elasticsearch.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/base64.hpp"
#include "common/log.hpp"
#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/migrate/migrate.hpp"
#include "protocol/http/client.hpp"
#include "reports/reports.hpp"
#include "results/summary.hpp"

namespace bootstorm::cli {
namespace {

struct IndexArgs {
  std::string url;  // https://opensearch:9200/INDEX
  std::string ca_file;
  bool insecure = false;
};

// POST URL_origin/_bulk with the quantile documents and the per-VM documents into the URL's index, as
// kube-burner's indexer does. Credentials: BOOTSTORM_INDEX_USERNAME / BOOTSTORM_INDEX_PASSWORD (Basic).
Expected<std::size_t> upload_documents(const IndexArgs& args, const results::RunRecord& record) {
  auto url = http::parse_url(args.url);
  std::string index = url ? url->target : "";
  while (!index.empty() && index.front() == '/') index.erase(0, 1);
  if (!url || index.empty() || index.find('/') != std::string::npos || index.find('?') != std::string::npos)
    return make_error(ErrorKind::invalid_input, "--index " + args.url + " is not an index URL",
                      "write it as https://HOST:PORT/INDEX, e.g. https://opensearch:9200/bootstorm");
  const results::Summary summary = results::summarize(record);
  const auto quantiles = reports::quantile_documents(record, summary);
  const auto vms = reports::vm_documents(record, summary);
  const std::string body = reports::to_bulk_ndjson(index, quantiles) + reports::to_bulk_ndjson(index, vms);
  const std::size_t documents = quantiles.size() + vms.size();

  http::ClientOptions options;
  options.base_url = url->origin();
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
  http::Request request("POST", "/_bulk", body);
  request.headers.emplace_back("Content-Type", "application/x-ndjson");
  request.idempotent = false;
  std::optional<Expected<http::Response>> response;
  boost::asio::co_spawn(
      io, [&]() -> boost::asio::awaitable<void> { response = co_await client.request(std::move(request)); },
      boost::asio::detached);
  io.run();
  const std::string where =
      "uploading " + std::to_string(documents) + " documents to " + options.base_url + "/_bulk";
  if (!response) return make_error(ErrorKind::internal, where + ": the request did not complete");
  if (!*response) {
    Error e = response->error();
    e.message = where + " failed: " + e.message;
    return e;
  }
  const http::Response& r = response->value();
  if (r.status < 200 || r.status >= 300)
    return make_error(ErrorKind::http_status,
                      where + " failed: HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 300),
                      r.status == 401 ? "set BOOTSTORM_INDEX_USERNAME and BOOTSTORM_INDEX_PASSWORD" : "",
                      r.status);
  auto answer = nlohmann::json::parse(r.body, nullptr, false);
  if (answer.is_object() && answer.value("errors", false))
    return make_error(ErrorKind::api,
                      where + ": the server rejected some documents: " + r.body.substr(0, 300));
  return documents;
}

int report(const std::string& run_dir, const IndexArgs& index) {
  if (migrate::is_migration_run(run_dir)) {
    // A migration run: migration.md/json/csv from its journal (its storms are run directories of their own).
    auto record = migrate::read_migration_journal(std::filesystem::path(run_dir) / "journal.jsonl");
    if (!record) {
      std::cerr << record.error().what() << "\n";
      return kExitUsage;
    }
    if (auto written = migrate::write_migration_outputs(run_dir, *record); !written) {
      std::cerr << written.error().what() << "\n";
      return kExitFailed;
    }
    std::cout << "re-rendered migration.md, migration.json and migration-vms.csv of " << run_dir
              << " from journal.jsonl (" << record->vms.size() << " VMs)\n";
    return kExitOk;
  }
  auto contents = engine::read_journal(std::filesystem::path(run_dir) / "journal.jsonl");
  if (!contents) {
    std::cerr << contents.error().what() << "\n";
    return kExitUsage;
  }
  for (auto& w : contents->warnings) std::cerr << "warning: " << w << "\n";
  if (contents->truncated_tail)
    std::cerr << "note: the journal's last line was incomplete (crash?) and was ignored\n";
  if (!contents->has_run_ended)
    std::cerr << "note: the journal has no run_ended event: the run did not finish\n";
  auto written = write_run_outputs(run_dir, contents->record);
  if (!written) {
    std::cerr << written.error().what() << "\n";
    return kExitFailed;
  }
  std::cout << "re-rendered the outputs of " << run_dir << " from journal.jsonl ("
            << contents->record.vms.size() << " VMs, outcome "
            << (contents->record.outcome.empty() ? "unknown" : contents->record.outcome) << ", SLOs "
            << (*written ? "passed" : "missed") << ")\n";
  if (!index.url.empty()) {
    auto uploaded = upload_documents(index, contents->record);
    if (!uploaded) {
      std::cerr << "bootstorm report: " << uploaded.error().what() << "\n";
      return uploaded.error().kind == ErrorKind::invalid_input ? kExitUsage : kExitFailed;
    }
    std::cout << "indexed " << *uploaded << " documents into " << index.url << "\n";
  }
  return kExitOk;
}

const CommandRegistration registration{Command{
    "report", 30, [](CLI::App& app, const GlobalOptions&) -> std::function<int()> {
      auto run_dir = std::make_shared<std::string>();
      auto index = std::make_shared<IndexArgs>();
      CLI::App* sub = app.add_subcommand("report", "Re-render a run directory's outputs from its journal");
      sub->add_option("run", *run_dir, "Run directory")->required()->check(CLI::ExistingDirectory);
      sub->add_option("--index", index->url,
                      "Also bulk-upload the quantile and per-VM documents to OpenSearch/Elasticsearch "
                      "(https://HOST:PORT/INDEX; credentials from BOOTSTORM_INDEX_USERNAME/PASSWORD)");
      sub->add_option("--index-ca", index->ca_file, "CA file for the index server")->check(CLI::ExistingFile);
      sub->add_flag("--index-insecure", index->insecure, "Skip TLS verification of the index server");
      return [run_dir, index] { return report(*run_dir, *index); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
