// `bootstorm history`, reading: run directories (their summary.json) and the documents of an index.
#include <fmt/format.h>
#include <glob.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "providers/api/platform_facts.hpp"
#include "reports/history.hpp"
#include "results/summary_json.hpp"

namespace bootstorm::reports {
namespace {

namespace fs = std::filesystem;

bool is_glob(const std::string& path) {
  return path.find_first_of("*?[") != std::string::npos;
}

Expected<std::vector<std::string>> expand_glob(const std::string& pattern) {
  glob_t found{};
  const int rc = ::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &found);
  std::vector<std::string> out;
  if (rc == 0)
    for (std::size_t i = 0; i < found.gl_pathc; ++i) out.emplace_back(found.gl_pathv[i]);
  ::globfree(&found);
  if (rc != 0 && rc != GLOB_NOMATCH)
    return make_error(ErrorKind::io, fmt::format("cannot expand {}", pattern), "check the pattern");
  if (out.empty())
    return make_error(
        ErrorKind::not_found, fmt::format("{} matches nothing", pattern),
        "give run directories, a directory of runs (a plan's output), or a pattern that names them");
  std::sort(out.begin(), out.end());
  return out;
}

// A run directory's summary, or why it has none.
Expected<results::Summary> read_summary(const fs::path& dir) {
  const fs::path file = dir / "summary.json";
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return make_error(ErrorKind::not_found, "no summary.json (an interrupted run, or not a run directory)",
                      fmt::format("`bootstorm report {}` writes it again from the journal", dir.string()));
  std::ostringstream text;
  text << in.rdbuf();
  const auto document = nlohmann::json::parse(text.str(), nullptr, false);
  if (document.is_discarded())
    return make_error(ErrorKind::invalid_input, "summary.json is not JSON",
                      fmt::format("`bootstorm report {}` writes it again from the journal", dir.string()));
  return results::summary_from_json(document);
}

void add_run(const fs::path& dir, HistoryRuns& runs) {
  auto summary = read_summary(dir);
  if (!summary) {
    runs.skipped.push_back(SkippedRun{dir.string(), summary.error().what()});
    return;
  }
  runs.runs.push_back(results::HistoryInput{dir.string(), std::move(*summary)});
}

}  // namespace

Expected<HistoryRuns> find_history_runs(const std::vector<std::string>& paths) {
  HistoryRuns runs;
  std::vector<std::string> places;
  for (const std::string& path : paths) {
    if (!is_glob(path)) {
      places.push_back(path);
      continue;
    }
    auto expanded = expand_glob(path);
    if (!expanded) return expanded.error();
    places.insert(places.end(), expanded->begin(), expanded->end());
  }
  for (const std::string& place : places) {
    const fs::path dir(place);
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      return make_error(ErrorKind::not_found, fmt::format("{} is not a directory", place),
                        "give run directories, a directory of runs (a plan's output), or a pattern");
    if (fs::exists(dir / "summary.json", ec) || fs::exists(dir / "journal.jsonl", ec)) {
      add_run(dir, runs);
      continue;
    }
    // A directory of runs: every subdirectory that is one.
    std::vector<fs::path> inside;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_directory() &&
          (fs::exists(entry.path() / "summary.json") || fs::exists(entry.path() / "journal.jsonl")))
        inside.push_back(entry.path());
    if (inside.empty())
      return make_error(ErrorKind::not_found,
                        fmt::format("{} holds no run (no summary.json in it or below)", place),
                        "give run directories, or the directory a plan's `output` names");
    std::sort(inside.begin(), inside.end());
    for (const fs::path& run : inside) add_run(run, runs);
  }
  return runs;
}

namespace {

// The documents come from a server: a field of another type than expected reads as absent, never throws.
std::optional<double> number_of(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

std::size_t count_of(const nlohmann::json& doc, const char* key) {
  const auto v = number_of(doc, key);
  return v && *v >= 0 && *v < 1e15 ? static_cast<std::size_t>(*v) : 0;
}

std::optional<double> seconds_of(const nlohmann::json& doc, const char* key) {
  const auto ms = number_of(doc, key);  // the documents hold milliseconds, as kube-burner writes them
  return ms ? std::optional<double>(*ms / 1e3) : std::nullopt;
}

std::optional<double> exact_or(const nlohmann::json& meta, const char* key, std::optional<double> fallback) {
  const auto v = number_of(meta, key);
  return v ? v : fallback;
}

std::string text_of(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Expected<HistoryRuns> history_runs_from_documents(const nlohmann::json& documents, std::string_view where) {
  if (!documents.is_array())
    return make_error(ErrorKind::invalid_input, fmt::format("{}: the documents are not a list", where));
  // run id -> its summary, built up from its quantile documents.
  std::map<std::string, results::Summary> by_run;
  HistoryRuns runs;
  std::size_t without_metadata = 0;
  for (const auto& doc : documents) {
    if (!doc.is_object() || text_of(doc, "metricName") != "vmiLatencyQuantilesMeasurement") continue;
    const auto meta = doc.find("metadata");
    if (meta == doc.end() || !meta->is_object() || text_of(*meta, "milestone").empty()) {
      ++without_metadata;  // written before history read indexes: no milestone name, no run facts
      continue;
    }
    const std::string run_id = text_of(doc, "uuid");
    results::Summary& s = by_run[run_id];
    if (s.run.id.empty()) {
      s.run.id = run_id;
      s.run.plan = text_of(*meta, "plan");
      s.run.platform = text_of(*meta, "platform");
      s.run.source = text_of(*meta, "source");
      s.run.simulated = meta->contains("simulated") && (*meta)["simulated"].is_boolean() &&
                        (*meta)["simulated"].get<bool>();
      s.run.outcome = text_of(*meta, "outcome");
      s.run.golden = text_of(*meta, "golden");
      s.run.clone_kind = text_of(*meta, "cloneKind");
      s.run.started_at = text_of(doc, "timestamp");
      if (auto f = meta->find("platformFacts"); f != meta->end() && f->is_object())
        s.run.facts = api::facts_from_json(*f);
    }
    const std::string scenario = text_of(doc, "jobName");
    const int repeat = static_cast<int>(std::clamp(number_of(doc, "repeat").value_or(1), 1.0, 1e6));
    auto sc = std::find_if(s.scenarios.begin(), s.scenarios.end(), [&](const results::ScenarioSummary& x) {
      return x.name == scenario && x.repeat == repeat;
    });
    if (sc == s.scenarios.end()) {
      results::ScenarioSummary added;
      added.name = scenario;
      added.repeat = repeat;
      added.vms = static_cast<int>(std::min<std::size_t>(count_of(*meta, "vms"), 10'000'000));
      added.ready_milestone = text_of(*meta, "readyMilestone");
      s.scenarios.push_back(std::move(added));
      sc = std::prev(s.scenarios.end());
    }
    results::MilestoneStats m;
    m.name = text_of(*meta, "milestone");
    m.dist.count = count_of(doc, "count");
    m.dist.total = count_of(*meta, "total");
    m.dist.ready_fraction =
        m.dist.total > 0 ? static_cast<double>(m.dist.count) / static_cast<double>(m.dist.total) : 0;
    // The exact seconds where the document has them, else its whole milliseconds.
    m.dist.mean = exact_or(*meta, "meanS", seconds_of(doc, "avg"));
    m.dist.p50 = exact_or(*meta, "p50S", seconds_of(doc, "P50"));
    m.dist.p95 = exact_or(*meta, "p95S", seconds_of(doc, "P95"));
    m.dist.p99 = seconds_of(doc, "P99");
    m.dist.min = seconds_of(doc, "min");
    m.dist.max = seconds_of(doc, "max");
    sc->milestones.push_back(std::move(m));
  }
  for (auto& [id, summary] : by_run)
    runs.runs.push_back(results::HistoryInput{fmt::format("{} (run {})", where, id), std::move(summary)});
  if (without_metadata > 0)
    runs.skipped.push_back(SkippedRun{
        std::string(where),
        fmt::format(
            "{} quantile documents without the milestone and run facts history needs (written by a "
            "bootstorm before it read indexes); `bootstorm report RUN --index URL` indexes a run again",
            without_metadata)});
  return runs;
}

}  // namespace bootstorm::reports
