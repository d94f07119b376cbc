// `bootstorm compare`, comparing: which samples are compared, with what statistics, what differs between
// the runs (platform, phases), and the command itself. Loading is compare_load.cpp, rendering
// compare_render.cpp.
#include "reports/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <ostream>
#include <set>

#include "reports/detail/format.hpp"
#include "reports/reports.hpp"

namespace bootstorm::reports {
namespace {

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
