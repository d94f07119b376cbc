#include "reports/format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

namespace bootstorm::reports::detail {

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Control characters other than tab/newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::string escape_md(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '`':
        out += "\\`";
        break;
      case '*':
        out += "\\*";
        break;
      case '_':
        out += "\\_";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string seconds(const std::optional<double>& v, int decimals) {
  if (!v) return "\u2014";
  return fmt::format("{:.{}f} s", *v, decimals);
}

std::string percent(double fraction, int decimals) {
  return fmt::format("{:.{}f} %", fraction * 100, decimals);
}

std::string number(double v, int decimals) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string utc_iso(double unix_s) {
  if (unix_s <= 0) return {};
  const auto total_ms = static_cast<long long>(std::llround(unix_s * 1000.0));
  const std::time_t secs = static_cast<std::time_t>(total_ms / 1000);
  const int ms = static_cast<int>(total_ms % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

std::string scenario_label(std::string_view name, int repeat, bool several_repeats) {
  return several_repeats ? fmt::format("{} #{}", name, repeat) : std::string(name);
}

}  // namespace bootstorm::reports::detail

#include <algorithm>

namespace bootstorm::reports::detail {

std::vector<const stats::VmRecord*> ordered_vms(const stats::RunRecord& record) {
  auto scenario_rank = [&](const std::string& name) {
    for (std::size_t i = 0; i < record.scenarios.size(); ++i)
      if (record.scenarios[i].name == name) return i;
    return record.scenarios.size();
  };
  std::vector<const stats::VmRecord*> vms;
  for (const auto& vm : record.vms) vms.push_back(&vm);
  std::stable_sort(vms.begin(), vms.end(), [&](const stats::VmRecord* a, const stats::VmRecord* b) {
    const auto ra = scenario_rank(a->scenario), rb = scenario_rank(b->scenario);
    if (ra != rb) return ra < rb;
    if (a->scenario != b->scenario) return a->scenario < b->scenario;
    if (a->repeat != b->repeat) return a->repeat < b->repeat;
    return a->name < b->name;
  });
  return vms;
}

std::vector<const stats::VmRecord*> vms_by_start(const stats::RunRecord& record, std::string_view scenario,
                                                 int repeat) {
  std::vector<const stats::VmRecord*> vms;
  for (const auto& vm : record.vms)
    if (vm.scenario == scenario && vm.repeat == repeat) vms.push_back(&vm);
  std::stable_sort(vms.begin(), vms.end(), [](const stats::VmRecord* a, const stats::VmRecord* b) {
    // VMs never started sort last.
    const double sa = a->start_requested_unix_s > 0 ? a->start_requested_unix_s : 1e300;
    const double sb = b->start_requested_unix_s > 0 ? b->start_requested_unix_s : 1e300;
    if (sa != sb) return sa < sb;
    return a->name < b->name;
  });
  return vms;
}

bool several_repeats(const stats::Summary& summary) {
  return std::any_of(summary.scenarios.begin(), summary.scenarios.end(),
                     [](const stats::ScenarioSummary& s) { return s.repeat != 1; });
}

std::string slo_value(std::string_view stat, const std::optional<double>& v) {
  if (!v) return "\u2014";
  if (stat == "ready_fraction") return percent(*v, 1);
  return seconds(v);
}

std::string slo_name(const stats::SloResult& r) {
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

}  // namespace bootstorm::reports::detail
