#include "reports/detail/format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/reports.hpp"

namespace bootstorm::reports::detail {

nlohmann::ordered_json number_or_null(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

std::string simulator_source(const results::RunRecord& record) {
  const std::string& simulator = record.facts.simulator;
  if (simulator.empty() || simulator.starts_with(kLabSimulatorPrefix)) return "bootstorm's lab simulator";
  return "the simulator " + simulator;
}

bool predicted(const results::RunRecord& record) {
  return record.source == "predicted";
}

std::string origin_suffix(const results::RunRecord& record) {
  if (predicted(record)) return " \u2014 predicted";
  return record.simulated ? " \u2014 simulated lab" : "";
}

std::string prediction_note(const results::RunRecord& record) {
  std::string model = "the lab model \u201c" + record.lab + "\u201d in virtual time";
  if (record.prediction) {
    model += fmt::format(" (seed {}", record.prediction->seed);
    if (!record.prediction->overrides.empty()) {
      std::string what_if;
      for (const auto& o : record.prediction->overrides) what_if += (what_if.empty() ? "" : ", ") + o;
      model += "; what-if: " + what_if;
    }
    model += ")";
  }
  return "Predicted by " + model +
         ": no VM was started and nothing was measured. Use it to size and to compare layouts; measure on "
         "the "
         "real platform before buying.";
}

std::string api_budget_line(const results::ApiBudgetRecord& budget) {
  std::string burst =
      budget.start_concurrency > 0
          ? fmt::format("{} starts in flight (storm.startConcurrency)", budget.start_concurrency)
          : std::string("every start at once");
  if (budget.starts_per_connection > 0)
    burst += fmt::format(", {} per connection", budget.starts_per_connection);
  return fmt::format("{:g} requests/s, {} calls in flight; start burst: {}", budget.requests_per_second,
                     budget.max_concurrent, burst);
}

std::vector<const results::VmRecord*> ordered_vms(const results::RunRecord& record) {
  auto scenario_rank = [&](const std::string& name) {
    for (std::size_t i = 0; i < record.scenarios.size(); ++i)
      if (record.scenarios[i].name == name) return i;
    return record.scenarios.size();
  };
  std::vector<const results::VmRecord*> vms;
  for (const auto& vm : record.vms) vms.push_back(&vm);
  std::stable_sort(vms.begin(), vms.end(), [&](const results::VmRecord* a, const results::VmRecord* b) {
    const auto ra = scenario_rank(a->scenario), rb = scenario_rank(b->scenario);
    if (ra != rb) return ra < rb;
    if (a->scenario != b->scenario) return a->scenario < b->scenario;
    if (a->repeat != b->repeat) return a->repeat < b->repeat;
    return a->name < b->name;
  });
  return vms;
}

std::vector<const results::VmRecord*> vms_by_start(const results::RunRecord& record,
                                                   std::string_view scenario, int repeat) {
  std::vector<const results::VmRecord*> vms;
  for (const auto& vm : record.vms)
    if (vm.scenario == scenario && vm.repeat == repeat) vms.push_back(&vm);
  std::stable_sort(vms.begin(), vms.end(), [](const results::VmRecord* a, const results::VmRecord* b) {
    // VMs never started sort last.
    const double sa = a->start_requested_unix_s > 0 ? a->start_requested_unix_s : 1e300;
    const double sb = b->start_requested_unix_s > 0 ? b->start_requested_unix_s : 1e300;
    if (sa != sb) return sa < sb;
    return a->name < b->name;
  });
  return vms;
}

namespace {

std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "uid (n answers)" for the most frequent few, most answers first.
std::string uid_counts(const std::map<std::string, std::uint64_t>& counts) {
  std::vector<std::pair<std::string, std::uint64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  constexpr std::size_t kShown = 3;
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < sorted.size() && i < kShown; ++i)
    parts.push_back(fmt::format("{} ({})", sorted[i].first, plural(sorted[i].second, "answer", "answers")));
  if (sorted.size() > kShown) parts.push_back(fmt::format("{} more", sorted.size() - kShown));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::vector<std::string> api_answer_sentences(const http::ApiStats& a) {
  std::vector<std::string> out;
  if (a.answers > 0) {
    std::string s = fmt::format("API answers: {} of {} throttled (429), {} server error{} (5xx)", a.throttled,
                                a.answers, a.server_errors, a.server_errors == 1 ? "" : "s");
    if (a.asked_to_wait > 0) {
      s += fmt::format("; {} asked to wait (Retry-After, {:g} s in all)",
                       plural(a.asked_to_wait, "answer", "answers"), a.retry_after_s);
    }
    out.push_back(s + ".");
  }
  if (!a.priority_levels.empty() || !a.flow_schemas.empty()) {
    std::string s = "API Priority and Fairness:";
    if (!a.priority_levels.empty()) s += " priority level " + uid_counts(a.priority_levels);
    if (!a.flow_schemas.empty())
      s += std::string(a.priority_levels.empty() ? "" : ";") + " flow schema " + uid_counts(a.flow_schemas);
    out.push_back(s +
                  " (by UID; kubectl get prioritylevelconfigurations,flowschemas -o "
                  "custom-columns=NAME:.metadata.name,UID:.metadata.uid names them).");
  }
  if (!a.warnings.empty()) {
    std::string s = "The API server warned:";
    const char* sep = " ";
    for (const auto& [text, n] : a.warnings) {
      s += fmt::format("{}\"{}\" ({})", sep, text, plural(n, "answer", "answers"));
      sep = "; ";
    }
    out.push_back(s + ".");
  }
  if (a.tasks > 0) {
    std::string s =
        fmt::format("vCenter tasks: {} followed, {} waited in vCenter's queue", a.tasks, a.tasks_queued);
    if (a.tasks_queued > 0)
      s += fmt::format(" ({:.1f} s in all, {:.2f} s each on average)", a.task_queue_s,
                       a.task_queue_s / static_cast<double>(a.tasks_queued));
    out.push_back(s + ".");
  }
  return out;
}

std::vector<std::string> platform_sentences(const results::Summary& summary,
                                            const results::ScenarioSummary& sc) {
  std::vector<std::string> out;
  if (sc.provisioning_s) {
    // How the platform made them where it said (one method: "24 csi-clone clones"; several: "24 clones
    // (copy 3, csi-clone 21)"), else the kind the plan asked for.
    std::string kind = summary.run.clone_kind.empty() ? "" : summary.run.clone_kind + " ";
    std::string methods;
    if (sc.clone_methods.size() == 1) {
      kind = sc.clone_methods.begin()->first + " ";
    } else if (sc.clone_methods.size() > 1) {
      kind.clear();
      std::vector<std::string> parts;
      for (const auto& [method, n] : sc.clone_methods) parts.push_back(fmt::format("{} {}", method, n));
      methods = fmt::format(" ({})", fmt::join(parts, ", "));
    }
    out.push_back(fmt::format("Provisioning: {} {}clone{}{} in {} (each clone {} on average).", sc.vms, kind,
                              sc.vms == 1 ? "" : "s", methods, seconds(sc.provisioning_s),
                              seconds(sc.clone_mean_s)));
  }
  if (sc.power_on_calls > 0) {
    std::string s =
        fmt::format("Power-on: {} batched call{} (PowerOnMultiVM_Task), sent with a fire skew of {:.2f} ms",
                    sc.power_on_calls, sc.power_on_calls == 1 ? "" : "s", sc.fire_skew_ms);
    if (sc.power_on_spread_ms)
      s += fmt::format("; vCenter confirmed the VMs' power-ons over {:.2f} ms (its own fan-out)",
                       *sc.power_on_spread_ms);
    s += fmt::format("; {} VM{} not attempted.", sc.not_attempted.size(),
                     sc.not_attempted.size() == 1 ? "" : "s");
    out.push_back(std::move(s));
  } else if (sc.power_on_spread_ms) {
    out.push_back(
        fmt::format("Start: the platform acknowledged the starts over {:.2f} ms (the start calls' fire skew: "
                    "{:.2f} ms).",
                    *sc.power_on_spread_ms, sc.fire_skew_ms));
  }
  if (sc.storm_api_requests && sc.vms > 0) {
    out.push_back(fmt::format("API requests: {} to provision, {} to start and observe ({:.2f} per VM).",
                              sc.api_requests - std::min(sc.api_requests, *sc.storm_api_requests),
                              *sc.storm_api_requests, static_cast<double>(*sc.storm_api_requests) / sc.vms));
  }
  if (sc.api_answers) {
    for (auto& line : api_answer_sentences(*sc.api_answers)) out.push_back(std::move(line));
  }
  if (!sc.moves.empty()) {
    out.push_back(
        fmt::format("Placement: {} VM{} ran on another host than the plan placed {} (vCenter's DRS).",
                    sc.moves.size(), sc.moves.size() == 1 ? "" : "s", sc.moves.size() == 1 ? "it" : "them"));
  }
  return out;
}

std::vector<std::string> storage_sentences(const results::Summary& summary,
                                           const results::ScenarioSummary& sc) {
  std::vector<std::string> out;
  if (!sc.storage) {
    if (!sc.storage_unavailable.empty())
      out.push_back(fmt::format("Storage telemetry: none ({}).", sc.storage_unavailable));
    return out;
  }
  const results::StorageFigures& f = *sc.storage;
  const std::string origin = summary.run.source == "predicted" ? "predicted, "
                             : summary.run.simulated           ? "simulated lab, "
                                                               : "";
  std::string line = fmt::format(
      "Storage ({}{}, {:g} s samples, {} summed): peak {:.0f} MB/s, mean {:.0f} MB/s over {:.1f} s; peak "
      "{:.0f} "
      "IOPS, {:.1f} per desktop at the peak and {:.1f} on average",
      origin, f.source, f.resolution_s,
      f.series == "datastore" ? "the datastore as each host saw it"
      : f.series == "vms"     ? "the desktops"
                              : "the hosts",
      f.peak_bytes_per_s / 1e6, f.mean_bytes_per_s / 1e6, f.window_s, f.peak_iops, f.peak_iops_per_desktop,
      f.mean_iops_per_desktop);
  if (f.read_latency_p50_s && f.read_latency_p95_s) {
    // vCenter reports latency in whole milliseconds: below one it says 0.
    if (f.source == "vsphere-perf") {
      auto ms = [](double s) {
        return s * 1e3 < 0.5 ? std::string("< 1 ms") : fmt::format("{:.0f} ms", s * 1e3);
      };
      line += fmt::format("; read latency P50 {}, P95 {} (vCenter reports whole milliseconds)",
                          ms(*f.read_latency_p50_s), ms(*f.read_latency_p95_s));
    } else {
      line += fmt::format("; read latency P50 {:.2f} ms, P95 {:.2f} ms", *f.read_latency_p50_s * 1e3,
                          *f.read_latency_p95_s * 1e3);
    }
  }
  out.push_back(line + ".");
  std::vector<std::string> links;
  for (const auto& h : f.hosts) {
    if (h.peak_utilisation && h.capacity_bytes_per_s) {
      links.push_back(fmt::format("{} {:.0f} of {:.0f} MB/s ({:.0f} %)", h.host, h.peak_bytes_per_s / 1e6,
                                  *h.capacity_bytes_per_s / 1e6, *h.peak_utilisation * 100));
    } else {
      links.push_back(fmt::format("{} {:.0f} MB/s", h.host, h.peak_bytes_per_s / 1e6));
    }
  }
  if (!links.empty()) out.push_back(fmt::format("Peak per host link: {}.", fmt::join(links, "; ")));
  if (f.resolution_s > 0 && f.window_s > 0 && f.window_s < 3 * f.resolution_s) {
    out.push_back(
        fmt::format("The storm spans {:.1f} samples of {:g} s: peaks are averages over a whole sample "
                    "(the totals are exact).",
                    f.window_s / f.resolution_s, f.resolution_s));
  }
  for (const auto& w : f.warnings) out.push_back("Storage telemetry: " + w);
  return out;
}

bool several_repeats(const results::Summary& summary) {
  return std::any_of(summary.scenarios.begin(), summary.scenarios.end(),
                     [](const results::ScenarioSummary& s) { return s.repeat != 1; });
}

std::string slo_value(std::string_view stat, const std::optional<double>& v) {
  if (!v) return "\u2014";
  if (stat == "ready_fraction") return percent(*v, 1);
  return seconds(v);
}

std::string slo_name(const results::SloResult& r) {
  const std::string threshold =
      r.stat == "ready_fraction" ? percent(r.threshold, 1) : number(r.threshold, 3) + " s";
  const char* op = r.is_min ? "\u2265" : "\u2264";
  // time_to_all_ready and the ready fraction of "ready" read better without the milestone.
  if (r.stat == "time_to_all_ready" || (r.stat == "ready_fraction" && r.milestone == "ready"))
    return fmt::format("{} {} {}", r.stat, op, threshold);
  return fmt::format("{} {} {} {}", r.milestone, r.stat, op, threshold);
}

}  // namespace bootstorm::reports::detail

namespace bootstorm::reports::detail {

std::string html_change_cell(double baseline, double candidate, double rel) {
  return fmt::format(
      "<td class=\"num\">{:.2f} \u2192 {:.2f} s<br/><small class=\"{}\">{:+.1f} %</small></td>", baseline,
      candidate, rel < 0 ? "down" : "up", rel * 100);
}

std::string html_ci_cell(double estimate, double lower, double upper) {
  return fmt::format("<td class=\"num\">{:+.2f} s<br/><small>{:+.2f} to {:+.2f} s</small></td>", estimate,
                     lower, upper);
}

std::string html_comparison_cells(const results::Comparison& c) {
  const std::string ttar = c.time_to_all_ready_diff_s
                               ? html_change_cell(*c.baseline.time_to_all_ready_s,
                                                  *c.candidate.time_to_all_ready_s, *c.time_to_all_ready_rel)
                               : std::string("<td class=\"num\">\u2014</td>");
  return html_change_cell(c.baseline_figures.mean, c.candidate_figures.mean, c.mean_rel) +
         html_change_cell(c.baseline_figures.p50, c.candidate_figures.p50, c.p50_rel) +
         html_change_cell(c.baseline_figures.p95, c.candidate_figures.p95, c.p95_rel) +
         html_change_cell(c.baseline_figures.max, c.candidate_figures.max, c.max_rel) + ttar +
         html_ci_cell(c.bootstrap.mean_diff.estimate, c.bootstrap.mean_diff.lower,
                      c.bootstrap.mean_diff.upper) +
         html_ci_cell(c.bootstrap.median_diff.estimate, c.bootstrap.median_diff.lower,
                      c.bootstrap.median_diff.upper) +
         "<td class=\"num\">" + escape_xml(fmt::format("{:.3g}", c.mann_whitney.p_value)) + "</td>";
}

}  // namespace bootstorm::reports::detail

namespace bootstorm::reports {

std::vector<std::string> control_plane_sentences(const results::Summary& summary) {
  std::vector<std::string> out;
  const bool repeats = detail::several_repeats(summary);
  for (const auto& sc : summary.scenarios) {
    if (!sc.control_plane || !sc.control_plane->delayed) continue;
    const auto& c = *sc.control_plane;
    out.push_back(fmt::format(
        "Delayed by the control plane: in \u201c{}\u201d the median VM waited {} from its start request to "
        "its "
        "scheduling (API and control plane), longer than any other phase ({}: {}); its median boot took {}.",
        scenario_label(sc.name, sc.repeat, repeats), seconds(c.median_s),
        results::phase_info(c.largest_other).label, seconds(c.largest_other_median_s),
        seconds(c.median_boot_s)));
  }
  return out;
}

std::string phase_sentence(const results::ScenarioSummary& scenario) {
  if (scenario.phases.empty()) return {};
  std::string out = "Where the time went (mean per VM): ";
  for (std::size_t i = 0; i < scenario.phases.size(); ++i) {
    const auto& p = scenario.phases[i];
    out += fmt::format("{}{} {}", i == 0 ? "" : ", ", results::phase_info(p.phase).label,
                       seconds(p.mean_part_s));
  }
  return out + ".";
}

}  // namespace bootstorm::reports
