// report.md: the run for people who read it in a terminal, a merge request or a ticket.
#include <fmt/format.h>

#include <algorithm>

#include "reports/detail/format.hpp"
#include "reports/reports.hpp"

namespace bootstorm::reports {
namespace {

std::string md_comparison_table(const std::vector<results::Comparison>& comparisons) {
  std::string out;
  out +=
      "| Baseline | Candidate | Mean | P50 | P95 | Max | Time to all ready | \u0394 mean (95 % CI) | "
      "\u0394 median (95 % CI) | Mann\u2013Whitney p |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& c : comparisons) {
    auto pair = [](double b, double k, double rel) {
      return fmt::format("{:.2f} \u2192 {:.2f} s ({:+.1f} %)", b, k, rel * 100);
    };
    std::string ttar = "\u2014";
    if (c.time_to_all_ready_diff_s)
      ttar =
          pair(*c.baseline.time_to_all_ready_s, *c.candidate.time_to_all_ready_s, *c.time_to_all_ready_rel);
    const auto& md = c.bootstrap.mean_diff;
    const auto& mdn = c.bootstrap.median_diff;
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {:+.2f} s ({:+.2f} to {:+.2f}) | {:+.2f} s ({:+.2f} to "
        "{:+.2f}) | {:.3g}{} |\n",
        escape_md(c.baseline.label), escape_md(c.candidate.label),
        pair(c.baseline_figures.mean, c.candidate_figures.mean, c.mean_rel),
        pair(c.baseline_figures.p50, c.candidate_figures.p50, c.p50_rel),
        pair(c.baseline_figures.p95, c.candidate_figures.p95, c.p95_rel),
        pair(c.baseline_figures.max, c.candidate_figures.max, c.max_rel), ttar, md.estimate, md.lower,
        md.upper, mdn.estimate, mdn.lower, mdn.upper, c.mann_whitney.p_value,
        c.mann_whitney.exact ? " (exact)" : "");
  }
  return out;
}

}  // namespace

std::string render_report_md(const results::RunRecord& record, const results::Summary& summary,
                             std::string_view generated_at) {
  return detail::render_report_md_with(record, summary, scenario_comparisons(summary), generated_at);
}

namespace {

// ---- the report's parts, top to bottom ----

// The title, where the figures come from, and the run's identity.
std::string md_header(const results::RunRecord& record, const results::Summary& summary) {
  std::string out;
  out += fmt::format("# Boot storm report: {}{}\n\n", escape_md(record.plan_name),
                     detail::origin_suffix(record));
  if (detail::predicted(record)) {
    out += "> **Predicted.** " + escape_md(detail::prediction_note(record)) + "\n\n";
  } else if (record.simulated) {
    out += fmt::format(
        "> **Simulated lab{}.** These figures come from {}, not from real hardware: use them to rehearse the "
        "test and to compare layouts, not as measurements of a datacenter.\n\n",
        record.lab.empty() ? "" : " \u201c" + escape_md(record.lab) + "\u201d",
        escape_md(detail::simulator_source(record)));
  }
  const std::size_t slo_passed = static_cast<std::size_t>(
      std::count_if(summary.slo.begin(), summary.slo.end(), [](const auto& r) { return r.pass; }));
  out += "| Run | Value |\n| --- | --- |\n";
  out += fmt::format("| Run id | {} |\n", escape_md(record.run_id));
  out += fmt::format("| Platform | {}{} |\n", escape_md(record.platform),
                     detail::predicted(record)
                         ? " (predicted with lab model " + escape_md(record.lab) + ")"
                         : (record.simulated ? " (simulated lab " + escape_md(record.lab) + ")" : ""));
  if (!record.platform_api.empty())
    out += fmt::format("| Platform API | {} |\n", escape_md(record.platform_api));
  if (const std::string facts = api::describe(record.facts); !facts.empty())
    out += fmt::format("| Platform facts | {} |\n", escape_md(facts));
  if (record.api_budget)
    out += fmt::format("| API budget | {} |\n", escape_md(detail::api_budget_line(*record.api_budget)));
  out += fmt::format("| Started | {} |\n| Ended | {} |\n", escape_md(record.started_at),
                     escape_md(record.ended_at));
  out += fmt::format("| Outcome | {} |\n", escape_md(record.outcome.empty() ? "unknown" : record.outcome));
  out += fmt::format("| Ready milestone | {} |\n", escape_md(record.ready_signal));
  if (!summary.slo.empty())
    out += fmt::format("| SLOs | {} of {} passed{} |\n", slo_passed, summary.slo.size(),
                       slo_passed == summary.slo.size() ? "" : " \u2014 **FAILED**");
  out += "\n";
  return out;
}

std::string md_results(const results::RunRecord& record, const results::Summary& summary,
                       const std::vector<results::Comparison>& comparisons, bool repeats) {
  std::string out;
  out += "## Results\n\n";
  out += "Boot time = " + escape_md(record.ready_signal) +
         " \u2212 start\\_requested. Quantiles are exact (linear interpolation between closest ranks, type "
         "7).\n\n";
  out +=
      "| Scenario | VMs | Hosts | Ready | Mean | P50 | P95 | P99 | Max | Time to all ready | Fire skew | "
      "Clone "
      "(mean) |\n";
  out += "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& sc : summary.scenarios) {
    const auto& r = sc.ready();
    out += fmt::format("| {} | {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} | {:.2f} ms | {} |\n",
                       escape_md(scenario_label(sc.name, sc.repeat, repeats)), sc.vms, sc.hosts,
                       percent(r.ready_fraction, 1), r.count, seconds(r.mean), seconds(r.p50), seconds(r.p95),
                       seconds(r.p99), seconds(r.max), seconds(sc.time_to_all_ready_s), sc.fire_skew_ms,
                       seconds(sc.clone_mean_s));
  }
  out += "\n";

  if (!comparisons.empty()) {
    out += "## Comparison with the baseline\n\n";
    out +=
        "Bootstrap 95 % confidence intervals (10,000 resamples, percentile method); \u0394 = candidate "
        "\u2212 "
        "baseline.\n\n";
    out += md_comparison_table(comparisons);
    out += "\n";
  }

  return out;
}

// A scenario's milestones and phases.
std::string md_scenario_tables(const results::Summary& summary, const results::ScenarioSummary& sc,
                               bool repeats) {
  std::string out;
  out += fmt::format("## {}\n\n", escape_md(scenario_label(sc.name, sc.repeat, repeats)));
  out += fmt::format(
      "{} VMs on {} host{}; {} of them ready ({}); time to all ready {}; fire skew {:.2f} ms; clone time "
      "{} on "
      "average; {} API requests.\n\n",
      sc.vms, sc.hosts, sc.hosts == 1 ? "" : "s", sc.ready().count, percent(sc.ready().ready_fraction, 1),
      seconds(sc.time_to_all_ready_s), sc.fire_skew_ms, seconds(sc.clone_mean_s), sc.api_requests);
  for (const auto& sentence : detail::platform_sentences(summary, sc)) out += escape_md(sentence) + "\n\n";
  for (const auto& sentence : detail::storage_sentences(summary, sc)) out += escape_md(sentence) + "\n\n";
  out += "| Milestone | Reached | Mean | Stdev | Min | P50 | P90 | P95 | P99 | Max | Resolution |\n";
  out += "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& m : sc.milestones) {
    const auto& d = m.dist;
    const std::string name =
        m.name == "ready" ? "**ready** (" + escape_md(sc.ready_milestone) + ")" : escape_md(m.name);
    out +=
        fmt::format("| {} | {} / {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", name, d.count, sc.vms,
                    seconds(d.mean), seconds(d.stdev), seconds(d.min), seconds(d.p50), seconds(d.p90),
                    seconds(d.p95), seconds(d.p99), seconds(d.max), seconds(d.resolution_s, 3));
  }
  out += "\n";
  if (!sc.phases.empty()) {
    out +=
        "Where the time went: each ready VM's boot split at its milestones. *Mean part* is the phase's "
        "share of the mean boot time (the parts add up to it); the other columns describe the VMs that "
        "reported the phase.\n\n";
    out += "| Phase | Span | VMs | Mean part | P50 | P95 | Max | Resolution |\n";
    out += "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const auto& p : sc.phases) {
      const auto& info = results::phase_info(p.phase);
      const std::string span = p.phase == results::Phase::ready ? "guest_agent \u2192 " + sc.ready_milestone
                                                                : std::string(info.span);
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", escape_md(info.label),
                         escape_md(span), p.dist.count, seconds(p.mean_part_s), seconds(p.dist.p50),
                         seconds(p.dist.p95), seconds(p.dist.max), seconds(p.dist.resolution_s, 3));
    }
    out += "\n";
  }
  return out;
}

// What went wrong or differed in a scenario: failures, VMs not attempted, moves, errors.
std::string md_scenario_lists(const results::ScenarioSummary& sc) {
  std::string out;
  if (!sc.failures.empty()) {
    out += fmt::format("**{} VM{} did not become ready:**\n\n", sc.failures.size(),
                       sc.failures.size() == 1 ? "" : "s");
    out += "| VM | Reason |\n| --- | --- |\n";
    for (const auto& f : sc.failures)
      out += fmt::format("| {} | {} |\n", escape_md(f.vm), escape_md(f.reason));
    out += "\n";
  }
  if (!sc.not_attempted.empty()) {
    out += "**Not attempted by the batched power-on:**\n\n| VM | vCenter's reason |\n| --- | --- |\n";
    for (const auto& n : sc.not_attempted)
      out += fmt::format("| {} | {} |\n", escape_md(n.vm), escape_md(n.reason));
    out += "\n";
  }
  if (!sc.moves.empty()) {
    out += "**Ran on another host than planned:**\n\n| VM | Planned host | Ran on |\n| --- | --- | --- |\n";
    for (const auto& m : sc.moves)
      out += fmt::format("| {} | {} | {} |\n", escape_md(m.vm), escape_md(m.planned_host), escape_md(m.host));
    out += "\n";
  }
  if (!sc.errors.empty()) {
    out += "**Scenario errors:**\n\n";
    for (const auto& e : sc.errors) out += "- " + escape_md(e) + "\n";
    out += "\n";
  }
  return out;
}

std::string md_slo(const results::Summary& summary, bool repeats) {
  std::string out;
  if (!summary.slo.empty()) {
    out += "## SLOs\n\n";
    out += "| Scenario | Objective | Value | Verdict |\n| --- | --- | ---: | --- |\n";
    for (const auto& r : summary.slo) {
      out += fmt::format("| {} | {} | {} | {} |\n", escape_md(scenario_label(r.scenario, r.repeat, repeats)),
                         escape_md(detail::slo_name(r)), detail::slo_value(r.stat, r.value),
                         r.pass ? "\u2705 pass" : "\u274c **FAIL**");
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string detail::render_report_md_with(const results::RunRecord& record, const results::Summary& summary,
                                          const std::vector<results::Comparison>& comparisons,
                                          std::string_view generated_at) {
  const bool repeats = detail::several_repeats(summary);
  std::string out = md_header(record, summary);
  for (const auto& sentence : control_plane_sentences(summary))
    out += "> **" + escape_md(sentence) + "**\n\n";
  if (!comparisons.empty()) {
    out += "## Verdict\n\n";
    for (const auto& c : comparisons) out += "- **" + escape_md(c.verdict) + "**\n";
    out += "\n";
  }
  out += md_results(record, summary, comparisons, repeats);
  for (const auto& sc : summary.scenarios)
    out += md_scenario_tables(summary, sc, repeats) + md_scenario_lists(sc);
  out += md_slo(summary, repeats);
  out += fmt::format("---\nGenerated {} by bootstorm from run {}.\n", escape_md(generated_at),
                     escape_md(record.run_id));
  return out;
}

}  // namespace bootstorm::reports
