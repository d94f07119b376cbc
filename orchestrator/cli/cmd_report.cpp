// `bootstorm report RUN [--index URL]`: re-renders every output of a run directory (summary.json, vms.csv,
// report.md, report.html, junit.xml, metrics.prom, quantile documents) from its journal.jsonl alone, and
// optionally bulk-uploads the kube-burner-shaped quantile and per-VM documents to OpenSearch/Elasticsearch.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "orchestrator/cli/command.hpp"
#include "orchestrator/cli/engine_wiring.hpp"
#include "orchestrator/cli/index_client.hpp"
#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/migrate/migrate.hpp"
#include "reports/reports.hpp"
#include "results/summary.hpp"

namespace bootstorm::cli {
namespace {

// POST URL_origin/_bulk with the quantile documents and the per-VM documents into the URL's index, as
// kube-burner's indexer does.
Expected<std::size_t> upload_documents(const IndexArgs& args, const results::RunRecord& record) {
  auto target = index_target(args);
  if (!target) return target.error();
  const results::Summary summary = results::summarize(record);
  const auto quantiles = reports::quantile_documents(record, summary);
  const auto vms = reports::vm_documents(record, summary);
  const std::string body =
      reports::to_bulk_ndjson(target->index, quantiles) + reports::to_bulk_ndjson(target->index, vms);
  const std::size_t documents = quantiles.size() + vms.size();
  const std::string what =
      "uploading " + std::to_string(documents) + " documents to " + target->origin + "/_bulk";
  auto response = index_request(args, *target, "POST", "/_bulk", body, "application/x-ndjson", what);
  if (!response) return response.error();
  auto answer = nlohmann::json::parse(response->body, nullptr, false);
  if (answer.is_object() && answer.value("errors", false))
    return make_error(ErrorKind::api,
                      what + ": the server rejected some documents: " + response->body.substr(0, 300));
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
      add_index_options(*sub, *index,
                        "Also bulk-upload the quantile and per-VM documents to OpenSearch/Elasticsearch");
      return [run_dir, index] { return report(*run_dir, *index); };
    }}};

}  // namespace
}  // namespace bootstorm::cli
