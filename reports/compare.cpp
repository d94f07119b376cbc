#include "reports/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include "reports/csv.hpp"
#include "reports/detail/format.hpp"
#include "reports/detail/svg.hpp"
#include "reports/reports.hpp"

namespace bootstorm::reports {
namespace {

Expected<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    return make_error(
        ErrorKind::invalid_input, fmt::format("cannot read {}", path.string()),
        "pass a run directory written by `bootstorm run` (it contains summary.json and vms.csv)");
  }
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string pair_cell(double b, double k, double rel) {
  return fmt::format("{:.2f} \u2192 {:.2f} s ({:+.1f} %)", b, k, rel * 100);
}

std::string ttar_cell(const results::Comparison& c) {
  if (!c.time_to_all_ready_diff_s) return "\u2014";
  return pair_cell(*c.baseline.time_to_all_ready_s, *c.candidate.time_to_all_ready_s,
                   *c.time_to_all_ready_rel);
}

std::string ci_cell(const results::ConfidenceInterval& ci) {
  return fmt::format("{:+.2f} s ({:+.2f} to {:+.2f})", ci.estimate, ci.lower, ci.upper);
}

bool any_simulated(const std::vector<LoadedRun>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](const LoadedRun& r) { return r.summary.run.simulated; });
}

bool any_predicted(const std::vector<LoadedRun>& runs) {
  return std::any_of(runs.begin(), runs.end(),
                     [](const LoadedRun& r) { return r.summary.run.source == "predicted"; });
}

// What the comparison's title adds: predictions first, since nothing in them was measured.
std::string origin_suffix(const std::vector<LoadedRun>& runs) {
  if (any_predicted(runs)) return " \u2014 with predictions";
  return any_simulated(runs) ? " \u2014 simulated lab" : "";
}

std::string run_origin(const LoadedRun& r) {
  if (r.summary.run.source == "predicted") return " (predicted)";
  return r.summary.run.simulated ? " (simulated)" : "";
}

constexpr const char* kPredictedNote =
    "At least one of these runs is a prediction of the lab model in virtual time: nothing in it was "
    "measured.";

std::string budget_text(const std::optional<results::ApiBudgetRecord>& budget) {
  return budget ? detail::api_budget_line(*budget) : std::string();
}

// The clone methods the platform said it used, over every scenario ("copy, csi-clone"); empty when it said
// none.
std::string clone_methods_used(const results::Summary& summary) {
  std::set<std::string> methods;
  for (const auto& sc : summary.scenarios)
    for (const auto& [method, n] : sc.clone_methods) methods.insert(method);
  return fmt::format("{}", fmt::join(methods, ", "));
}

}  // namespace

std::vector<std::string> platform_warnings(const std::vector<LoadedRun>& runs) {
  std::vector<std::string> out;
  if (runs.size() < 2) return out;
  const results::RunInfo& first = runs.front().summary.run;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const results::RunInfo& other = runs[i].summary.run;
    std::vector<std::string> differ = api::differences(first.facts, other.facts);
    const bool simulator_named = std::any_of(
        differ.begin(), differ.end(), [](const std::string& d) { return d.starts_with("simulator:"); });
    if (first.source != other.source && !first.source.empty() && !other.source.empty() && !simulator_named)
      differ.push_back(fmt::format("source: {} vs {}", first.source, other.source));
    if (first.platform != other.platform)
      differ.push_back(fmt::format("platform: {} vs {}", first.platform, other.platform));
    if (!first.clone_kind.empty() && !other.clone_kind.empty() && first.clone_kind != other.clone_kind)
      differ.push_back(fmt::format("clone: {} vs {}", first.clone_kind, other.clone_kind));
    const std::string used_a = clone_methods_used(runs.front().summary),
                      used_b = clone_methods_used(runs[i].summary);
    if (!used_a.empty() && !used_b.empty() && used_a != used_b)
      differ.push_back(fmt::format("clone method used: {} vs {}", used_a, used_b));
    const std::string budget_a = budget_text(first.api_budget), budget_b = budget_text(other.api_budget);
    if (!budget_a.empty() && !budget_b.empty() && budget_a != budget_b)
      differ.push_back(fmt::format("API budget: {} vs {}", budget_a, budget_b));
    for (const auto& d : differ) out.push_back(fmt::format("run {} vs run {}: {}", first.id, other.id, d));
  }
  return out;
}

namespace {

// The phase of `candidate` whose part of the mean boot grew most over `baseline`'s; empty when none grew by
// at least 10 ms and 1 % of the baseline's mean boot (less is noise, and prints as +0.00 s).
std::string grown_phase(const results::ScenarioSummary& baseline, const results::ScenarioSummary& candidate,
                        const std::string& pair) {
  if (baseline.phases.empty() || candidate.phases.empty()) return {};
  std::array<double, results::kPhaseCount> before{}, after{};
  for (const auto& p : baseline.phases) before[static_cast<std::size_t>(p.phase)] = p.mean_part_s;
  for (const auto& p : candidate.phases) after[static_cast<std::size_t>(p.phase)] = p.mean_part_s;
  std::size_t most = 0;
  for (std::size_t i = 1; i < results::kPhaseCount; ++i)
    if (after[i] - before[i] > after[most] - before[most]) most = i;
  double baseline_boot = 0;
  for (double part : before) baseline_boot += part;
  const double grown = after[most] - before[most];
  if (grown < 0.01 || grown < 0.01 * baseline_boot) return {};
  return fmt::format("{}: the {} phase grew most, {} \u2192 {} of the mean boot ({:+.2f} s)", pair,
                     results::kPhases[most].label, seconds(before[most]), seconds(after[most]),
                     after[most] - before[most]);
}

}  // namespace

std::vector<std::string> phase_growth(const std::vector<LoadedRun>& runs) {
  std::vector<std::string> out;
  if (runs.empty()) return out;
  const auto& first = runs.front().summary;
  auto add = [&out](std::string sentence) {
    if (!sentence.empty()) out.push_back(std::move(sentence));
  };
  if (runs.size() == 1) {
    for (std::size_t i = 1; i < first.scenarios.size(); ++i)
      add(grown_phase(first.scenarios.front(), first.scenarios[i],
                      fmt::format("\u201c{}\u201d against \u201c{}\u201d", first.scenarios[i].name,
                                  first.scenarios.front().name)));
    return out;
  }
  for (std::size_t r = 1; r < runs.size(); ++r) {
    for (const auto& sc : runs[r].summary.scenarios) {
      auto base = std::find_if(first.scenarios.begin(), first.scenarios.end(),
                               [&](const results::ScenarioSummary& b) { return b.name == sc.name; });
      if (base == first.scenarios.end()) continue;
      add(grown_phase(*base, sc,
                      fmt::format("\u201c{}\u201d, run {} \u2192 run {}", sc.name, first.run.id,
                                  runs[r].summary.run.id)));
    }
  }
  return out;
}

// The layouts' storage side by side: one row per scenario (and repeat) of every run that has telemetry.
struct StorageRow {
  std::string run, scenario;
  const results::StorageFigures* figures = nullptr;
  std::string busiest_link;  // "r740-01 94 %", the host link closest to its capacity
};

std::vector<StorageRow> storage_rows(const std::vector<LoadedRun>& runs) {
  std::vector<StorageRow> rows;
  for (const auto& r : runs) {
    const bool repeats = std::any_of(r.summary.scenarios.begin(), r.summary.scenarios.end(),
                                     [](const results::ScenarioSummary& s) { return s.repeat != 1; });
    for (const auto& sc : r.summary.scenarios) {
      if (!sc.storage) continue;
      StorageRow row{r.summary.run.id, repeats ? fmt::format("{} #{}", sc.name, sc.repeat) : sc.name,
                     &*sc.storage, ""};
      const results::HostStorage* busiest = nullptr;
      for (const auto& h : sc.storage->hosts)
        if (h.peak_utilisation && (!busiest || *h.peak_utilisation > *busiest->peak_utilisation))
          busiest = &h;
      if (busiest)
        row.busiest_link = fmt::format("{} {:.0f} %", busiest->host, *busiest->peak_utilisation * 100);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string latency_ms(const std::optional<double>& s) {
  return s ? fmt::format("{:.2f}", *s * 1e3) : std::string("\u2014");
}

Expected<void> fill_boot_times_from_csv(std::string_view csv_text, results::Summary& summary) {
  auto rows = parse_csv(csv_text);
  if (!rows) return rows.error();
  if (rows->empty())
    return make_error(ErrorKind::invalid_input, "vms.csv is empty",
                      "re-render the run with `bootstorm report RUN`");
  const auto& header = rows->front();
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* required : {"scenario", "repeat", "vm"}) {
    if (!col.count(required))
      return make_error(ErrorKind::invalid_input, fmt::format("vms.csv has no \"{}\" column", required),
                        "this is not a vms.csv written by bootstorm");
  }
  for (auto& sc : summary.scenarios) sc.boot_times_s.clear();
  for (std::size_t r = 1; r < rows->size(); ++r) {
    const auto& row = (*rows)[r];
    auto cell = [&](const std::string& name) -> std::string {
      auto it = col.find(name);
      return it != col.end() && it->second < row.size() ? row[it->second] : std::string();
    };
    const std::string scenario = cell("scenario");
    int repeat = 1;
    try {
      repeat = std::stoi(cell("repeat"));
    } catch (const std::exception&) {
      return make_error(ErrorKind::invalid_input,
                        fmt::format("vms.csv line {}: repeat is not a number", r + 1));
    }
    auto sc = std::find_if(summary.scenarios.begin(), summary.scenarios.end(),
                           [&](const auto& s) { return s.name == scenario && s.repeat == repeat; });
    if (sc == summary.scenarios.end()) {
      return make_error(
          ErrorKind::invalid_input,
          fmt::format("vms.csv line {}: scenario \"{}\" repeat {} is not in summary.json", r + 1, scenario,
                      repeat),
          "summary.json and vms.csv come from different runs; re-render with `bootstorm report RUN`");
    }
    const std::string column = sc->ready_milestone + "_s";
    if (!col.count(column)) {
      return make_error(ErrorKind::invalid_input,
                        fmt::format("vms.csv has no column \"{}\" for the ready milestone \"{}\"", column,
                                    sc->ready_milestone),
                        "summary.json must name the scenario's readyMilestone");
    }
    const std::string value = cell(column);
    if (value.empty()) continue;
    try {
      sc->boot_times_s.push_back(std::stod(value));
    } catch (const std::exception&) {
      return make_error(ErrorKind::invalid_input,
                        fmt::format("vms.csv line {}: {} \"{}\" is not a number", r + 1, column, value));
    }
  }
  return {};
}

Expected<LoadedRun> load_run(const std::filesystem::path& dir) {
  LoadedRun run;
  run.dir = dir;
  auto summary_text = read_text(dir / "summary.json");
  if (!summary_text) return summary_text.error();
  nlohmann::json doc = nlohmann::json::parse(*summary_text, nullptr, false);
  if (doc.is_discarded()) {
    return make_error(ErrorKind::invalid_input,
                      fmt::format("{} is not valid JSON", (dir / "summary.json").string()),
                      "re-render the run with `bootstorm report RUN`");
  }
  auto summary = results::summary_from_json(doc);
  if (!summary) {
    auto e = summary.error();
    e.message = fmt::format("{}: {}", dir.string(), e.message);
    return e;
  }
  run.summary = std::move(summary.value());
  auto csv_text = read_text(dir / "vms.csv");
  if (!csv_text) return csv_text.error();
  if (auto r = fill_boot_times_from_csv(*csv_text, run.summary); !r) {
    auto e = r.error();
    e.message = fmt::format("{}: {}", (dir / "vms.csv").string(), e.message);
    return e;
  }
  return run;
}

Expected<CompareSet> compare_runs(const std::vector<LoadedRun>& runs,
                                  const results::BootstrapOptions& options) {
  CompareSet set;
  if (runs.empty())
    return make_error(ErrorKind::invalid_input, "no run directory given", "pass at least one RUN");
  struct Item {
    std::size_t run;
    results::ComparedSample sample;
  };
  std::vector<Item> items;
  std::map<std::string, std::set<std::size_t>> runs_of_name;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (auto& s : pooled_samples(runs[r].summary)) {
      runs_of_name[s.label].insert(r);
      items.push_back(Item{r, std::move(s)});
    }
  }
  const bool by_name = runs.size() > 1 && std::any_of(runs_of_name.begin(), runs_of_name.end(),
                                                      [](const auto& e) { return e.second.size() > 1; });
  for (auto& item : items) {
    if (runs_of_name[item.sample.label].size() > 1)
      item.sample.label += fmt::format(" (run {})", runs[item.run].summary.run.id);
  }
  std::vector<std::pair<std::size_t, std::size_t>> pairs;  // baseline, candidate indexes into items
  if (by_name) {
    std::map<std::string, std::size_t> first_of;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::string name = items[i].sample.label;
      if (auto pos = name.rfind(" (run ");
          pos != std::string::npos && runs_of_name.count(name.substr(0, pos)))
        name = name.substr(0, pos);
      if (runs_of_name[name].size() < 2) continue;
      auto [it, inserted] = first_of.emplace(name, i);
      if (!inserted) pairs.emplace_back(it->second, i);
    }
  } else {
    for (std::size_t i = 1; i < items.size(); ++i) pairs.emplace_back(0, i);
  }
  for (const auto& item : items) set.samples.push_back(item.sample);
  std::vector<std::string> skipped;
  for (const auto& [b, c] : pairs) {
    auto cmp = results::compare_samples(items[b].sample, items[c].sample, options);
    if (cmp) {
      set.comparisons.push_back(std::move(cmp.value()));
    } else {
      skipped.push_back(cmp.error().message);
    }
  }
  if (set.comparisons.empty()) {
    if (!skipped.empty()) return make_error(ErrorKind::invalid_input, skipped.front());
    return make_error(ErrorKind::invalid_input,
                      fmt::format("nothing to compare: {} run{} with {} scenario{} in total", runs.size(),
                                  runs.size() == 1 ? "" : "s", items.size(), items.size() == 1 ? "" : "s"),
                      "pass one run with at least two scenarios, or several runs");
  }
  return set;
}

std::string render_compare_md(const std::vector<LoadedRun>& runs, const CompareSet& set,
                              std::string_view generated_at) {
  std::string out = fmt::format("# Boot storm comparison{}\n\n", origin_suffix(runs));
  if (any_predicted(runs)) out += fmt::format("> **Predicted.** {}\n\n", kPredictedNote);
  if (any_simulated(runs) && !std::all_of(runs.begin(), runs.end(), [](const LoadedRun& r) {
        return r.summary.run.source == "predicted";
      }))
    out += "> **Simulated lab.** At least one of these runs ran against a simulator, not real hardware.\n\n";
  out += "| Run | Plan | Platform | Started | Directory |\n| --- | --- | --- | --- | --- |\n";
  for (const auto& r : runs) {
    out += fmt::format("| {} | {} | {}{} | {} | {} |\n", escape_md(r.summary.run.id),
                       escape_md(r.summary.run.plan), escape_md(r.summary.run.platform), run_origin(r),
                       escape_md(r.summary.run.started_at), escape_md(r.dir.string()));
  }
  if (const auto warnings = platform_warnings(runs); !warnings.empty()) {
    out +=
        "\n> **Warning: these runs ran on different platforms.** A difference in boot time may come from "
        "these as much as from the layout:\n";
    for (const auto& w : warnings) out += "> - " + escape_md(w) + "\n";
  }
  out += "\n## Verdict\n\n";
  for (const auto& c : set.comparisons) out += "- **" + escape_md(c.verdict) + "**\n";
  for (const auto& g : phase_growth(runs)) out += "- " + escape_md(g) + "\n";
  out +=
      "\n## Figures\n\nBoot time in seconds; \u0394 = candidate \u2212 baseline with bootstrap 95 % "
      "confidence "
      "intervals (10,000 resamples, percentile method); Mann\u2013Whitney U two-sided p-value.\n\n";
  out +=
      "| Baseline | Candidate | VMs | Mean | P50 | P95 | Max | Time to all ready | \u0394 mean (95 % CI) | "
      "\u0394 median (95 % CI) | Mann\u2013Whitney p |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : set.comparisons) {
    out +=
        fmt::format("| {} | {} | {} \u2192 {} | {} | {} | {} | {} | {} | {} | {} | {:.3g}{} |\n",
                    escape_md(c.baseline.label), escape_md(c.candidate.label), c.baseline.vms,
                    c.candidate.vms, pair_cell(c.baseline_figures.mean, c.candidate_figures.mean, c.mean_rel),
                    pair_cell(c.baseline_figures.p50, c.candidate_figures.p50, c.p50_rel),
                    pair_cell(c.baseline_figures.p95, c.candidate_figures.p95, c.p95_rel),
                    pair_cell(c.baseline_figures.max, c.candidate_figures.max, c.max_rel), ttar_cell(c),
                    ci_cell(c.bootstrap.mean_diff), ci_cell(c.bootstrap.median_diff), c.mann_whitney.p_value,
                    c.mann_whitney.exact ? " (exact)" : "");
  }
  if (const auto rows = storage_rows(runs); !rows.empty()) {
    out +=
        "\n## Storage\n\nWhat each platform's monitoring measured during the storms (MB/s read + write; IOPS "
        "per "
        "desktop at the peak; read latency P95 over the VMs' samples; the host link closest to its "
        "capacity).\n\n";
    out +=
        "| Run | Scenario | Source | Peak MB/s | Mean MB/s | Peak IOPS | IOPS per desktop | Read latency P95 "
        "(ms) | Busiest link |\n";
    out += "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n";
    for (const auto& row : rows) {
      const auto& f = *row.figures;
      out += fmt::format("| {} | {} | {} ({:g} s) | {:.0f} | {:.0f} | {:.0f} | {:.1f} | {} | {} |\n",
                         escape_md(row.run), escape_md(row.scenario), escape_md(f.source), f.resolution_s,
                         f.peak_bytes_per_s / 1e6, f.mean_bytes_per_s / 1e6, f.peak_iops,
                         f.peak_iops_per_desktop, latency_ms(f.read_latency_p95_s),
                         row.busiest_link.empty() ? "\u2014" : escape_md(row.busiest_link));
    }
  }
  out += fmt::format("\n---\nGenerated {} by bootstorm compare.\n", escape_md(generated_at));
  return out;
}

std::string render_compare_html(const std::vector<LoadedRun>& runs, const CompareSet& set,
                                std::string_view generated_at) {
  const bool simulated = any_simulated(runs) &&
                         !std::all_of(runs.begin(), runs.end(),
                                      [](const LoadedRun& r) { return r.summary.run.source == "predicted"; });
  const std::string title = fmt::format("Boot storm comparison{}", origin_suffix(runs));
  std::string out = detail::html_head(title);
  out += fmt::format("<header class=\"top\">\n<h1>{}</h1>\n<p class=\"meta\">", escape_xml(title));
  for (const auto& r : runs)
    out += fmt::format("<span>Run <strong>{}</strong> ({}, {}){}</span>", escape_xml(r.summary.run.id),
                       escape_xml(r.summary.run.plan), escape_xml(r.summary.run.started_at),
                       escape_xml(run_origin(r)));
  out += "</p>\n</header>\n";
  if (any_predicted(runs)) {
    out += fmt::format("<div class=\"banner\" role=\"note\"><strong>Predicted</strong> \u2014 {}</div>\n",
                       kPredictedNote);
  }
  if (simulated)
    out +=
        "<div class=\"banner\" role=\"note\"><strong>Simulated lab</strong> \u2014 at least one of these "
        "runs ran "
        "against a simulator, not real hardware.</div>\n";
  if (const auto warnings = platform_warnings(runs); !warnings.empty()) {
    out +=
        "<div class=\"banner\" role=\"note\"><strong>These runs ran on different platforms</strong> \u2014 a "
        "difference in boot time may come from these as much as from the layout:<ul>";
    for (const auto& w : warnings) out += "<li>" + escape_xml(w) + "</li>";
    out += "</ul></div>\n";
  }
  out += "<section aria-label=\"Verdict\">\n";
  for (const auto& c : set.comparisons) {
    out += fmt::format(
        "<p class=\"verdict\">{}<small>Mann\u2013Whitney p = {:.3g}; \u0394 mean {:+.2f} s (95 % CI "
        "{:+.2f} to {:+.2f} s).</small></p>\n",
        escape_xml(c.verdict), c.mann_whitney.p_value, c.mean_diff_s, c.bootstrap.mean_diff.lower,
        c.bootstrap.mean_diff.upper);
  }
  for (const auto& g : phase_growth(runs)) out += "<p class=\"meta\">" + escape_xml(g) + "</p>\n";
  out += "</section>\n";
  std::vector<svg::Series> series;
  for (std::size_t i = 0; i < set.samples.size(); ++i) {
    const auto& s = set.samples[i];
    series.push_back(
        svg::Series{s.label, std::string(svg::series_color(i)), s.boot_times_s,
                    std::max<std::size_t>(s.boot_times_s.size(), static_cast<std::size_t>(s.vms))});
  }
  out += "<section>\n<h2>Boot time distribution</h2>\n<figure>\n" +
         svg::cdf_chart("compare-cdf", "Share of VMs ready by boot time (CDF)", series) +
         "<figcaption>Further left is faster; a curve that stays below 100 % had VMs that never became ready."
         "</figcaption>\n</figure>\n<figure>\n" +
         svg::histogram_chart("compare-histogram", "Boot time histogram", series) +
         "<figcaption>VMs per boot-time interval.</figcaption>\n</figure>\n</section>\n";
  out += "<section>\n<h2>Figures</h2>\n<div class=\"scroll\"><table>\n<thead><tr>";
  for (const char* h : {"Baseline", "Candidate"}) out += fmt::format("<th scope=\"col\">{}</th>", h);
  for (const char* h : {"VMs", "Mean", "P50", "P95", "Max", "Time to all ready", "\u0394 mean (95 % CI)",
                        "\u0394 median (95 % CI)", "Mann\u2013Whitney p"})
    out += fmt::format("<th scope=\"col\" class=\"num\">{}</th>", h);
  out += "</tr></thead>\n<tbody>\n";
  auto td = [](const std::string& v) { return "<td class=\"num\">" + escape_xml(v) + "</td>"; };
  for (const auto& c : set.comparisons) {
    out += "<tr><td>" + escape_xml(c.baseline.label) + "</td><td>" + escape_xml(c.candidate.label) + "</td>";
    out +=
        td(fmt::format("{} \u2192 {}", c.baseline.vms, c.candidate.vms)) + detail::html_comparison_cells(c);
    out += "</tr>\n";
  }
  out +=
      "</tbody></table></div>\n<p class=\"meta\">\u0394 = candidate \u2212 baseline. Confidence intervals: "
      "bootstrap, 10,000 resamples, percentile method. Quantiles: linear interpolation between closest ranks "
      "(type 7).</p>\n</section>\n";
  if (const auto rows = storage_rows(runs); !rows.empty()) {
    out += "<section>\n<h2>Storage</h2>\n<div class=\"scroll\"><table>\n<thead><tr>";
    for (const char* h : {"Run", "Scenario", "Source"}) out += fmt::format("<th scope=\"col\">{}</th>", h);
    for (const char* h : {"Peak MB/s", "Mean MB/s", "Peak IOPS", "IOPS per desktop", "Read latency P95 (ms)"})
      out += fmt::format("<th scope=\"col\" class=\"num\">{}</th>", h);
    out += "<th scope=\"col\">Busiest link</th></tr></thead>\n<tbody>\n";
    for (const auto& row : rows) {
      const auto& f = *row.figures;
      out += "<tr><td>" + escape_xml(row.run) + "</td><td>" + escape_xml(row.scenario) + "</td><td>" +
             escape_xml(fmt::format("{} ({:g} s)", f.source, f.resolution_s)) + "</td>";
      out += td(fmt::format("{:.0f}", f.peak_bytes_per_s / 1e6)) +
             td(fmt::format("{:.0f}", f.mean_bytes_per_s / 1e6)) + td(fmt::format("{:.0f}", f.peak_iops)) +
             td(fmt::format("{:.1f}", f.peak_iops_per_desktop)) + td(latency_ms(f.read_latency_p95_s));
      out += "<td>" + escape_xml(row.busiest_link.empty() ? "\u2014" : row.busiest_link) + "</td></tr>\n";
    }
    out += "</tbody></table></div>\n</section>\n";
  }
  out += detail::html_tail(generated_at, "Comparison of " + std::to_string(runs.size()) + " run(s).");
  return out;
}

int run_compare(const CompareOptions& options, std::ostream& out, std::ostream& err) {
  if (options.runs.empty()) {
    err << "bootstorm compare: no run directory given (usage: bootstorm compare RUN [RUN...])\n";
    return 2;
  }
  std::vector<LoadedRun> runs;
  for (const auto& dir : options.runs) {
    auto run = load_run(dir);
    if (!run) {
      err << "bootstorm compare: " << run.error().what() << "\n";
      return 2;
    }
    runs.push_back(std::move(run.value()));
  }
  auto set = compare_runs(runs, options.bootstrap);
  if (!set) {
    err << "bootstorm compare: " << set.error().what() << "\n";
    return 2;
  }
  const std::string generated_at = options.generated_at.empty() ? utc_now_iso() : options.generated_at;
  const auto out_dir = options.out_dir.empty() ? options.runs.front() : options.out_dir;
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  for (const auto& [name, content] :
       {std::pair<std::string, std::string>{"compare.md", render_compare_md(runs, *set, generated_at)},
        std::pair<std::string, std::string>{"compare.html", render_compare_html(runs, *set, generated_at)}}) {
    std::ofstream f(out_dir / name, std::ios::binary | std::ios::trunc);
    f << content;
    if (!f) {
      err << "bootstorm compare: cannot write " << (out_dir / name).string()
          << " (choose a writable directory with --out)\n";
      return 2;
    }
  }
  for (const auto& w : platform_warnings(runs)) err << "bootstorm compare: warning: " << w << "\n";
  for (const auto& c : set->comparisons) out << c.verdict << "\n";
  for (const auto& g : phase_growth(runs)) out << g << "\n";
  out << "Wrote " << (out_dir / "compare.md").string() << " and " << (out_dir / "compare.html").string()
      << "\n";
  return 0;
}

}  // namespace bootstorm::reports
