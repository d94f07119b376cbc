#pragma once
// A fixed RunRecord for the renderer tests: two scenarios in the shape of the Tolly consolidation test,
// small enough for readable golden files, with a failure, a reason that needs CSV quoting and a plan that
// needs HTML escaping.
#include <cmath>
#include <string>
#include <vector>

#include "results/run_record.hpp"

namespace bootstorm::reports::testing {

inline constexpr const char* kGeneratedAt = "2026-11-30T10:30:00.000Z";

inline results::VmRecord make_vm(const std::string& scenario, int index, const std::string& host,
                                 double start, double running, double ready, bool failed) {
  using api::Milestone;
  results::VmRecord v;
  v.scenario = scenario;
  v.repeat = 1;
  v.name = "bs-3f9a2c-" + std::string(scenario[0] == '4' ? "a" : "b") + "-" +
           std::to_string(100 + index).substr(1);
  v.id = "vm-" + std::to_string(1000 + index + (scenario[0] == '4' ? 0 : 100));
  v.host = host;
  v.clone_s = 2.0 + 0.25 * index;
  v.start_requested_unix_s = start;
  v.milestones[Milestone::start_requested] = {0, 0, "client", start, ""};
  v.milestones[Milestone::start_acknowledged] = {0.040 + 0.002 * index, 0, "api", start + 0.04, ""};
  v.milestones[Milestone::running] = {running, 0.5, "poll", start + running, ""};
  if (failed) {
    v.status = "failed";
    v.reason = "timeout waiting for guest_agent after 600 s, \"tools not running\"";
    return v;
  }
  v.milestones[Milestone::guest_agent] = {ready, 1.0, "poll", start + ready, ""};
  v.milestones[Milestone::ip_assigned] = {ready + 0.75, 1.0, "poll", start + ready + 0.75,
                                          "10.0.0." + std::to_string(index)};
  v.ready_s = ready;
  v.status = "ready";
  return v;
}

inline results::RunRecord fixture_record() {
  results::RunRecord r;
  r.run_id = "3f9a2c";
  r.plan_name = "consolidation-4x16g-vs-1x64g";
  r.platform = "vsphere";
  r.lab = "tolly-2024";
  r.simulated = true;
  r.facts.product = "VMware vCenter Server";
  r.facts.version = "7.0.3.0";
  r.facts.build = "lab";
  r.facts.simulator = "bootstorm lab tolly-2024";
  r.facts.hosts = {{"r740-01", "Intel Xeon Gold 6248", "VMware ESXi 8.0.2 build-lab"},
                   {"r7625-01", "AMD EPYC 9354", "VMware ESXi 8.0.2 build-lab"}};
  r.api_budget = results::ApiBudgetRecord{50, 64, 0, 0};
  r.ready_signal = "guest_agent";
  r.started_at = "2026-11-30T10:00:00.000Z";
  r.ended_at = "2026-11-30T10:04:12.345Z";
  r.outcome = "completed";
  r.plan_yaml =
      "apiVersion: bootstorm.io/v1\nkind: StormPlan\nname: consolidation-4x16g-vs-1x64g\n"
      "# note: <script>alert('x')</script> & co\nscenarios:\n  - name: 4x R740 16GFC\n  - name: 1x R7625 "
      "64GFC\n";
  const double t0 = 1795860000.0;  // 2026-11-29T...
  results::ScenarioRecord a{"4x R740 16GFC", 1, 8, 4, 2.125, t0, 412, {}};
  results::ScenarioRecord b{
      "1x R7625 64GFC", 1, 8, 1, 0.875, t0 + 120, 398, {"clone of bs-3f9a2c-b-09 failed: disk full"}};
  r.scenarios = {a, b};
  for (int i = 0; i < 8; ++i) {
    const double start = t0 + 0.0003 * i;
    const double ready = 28.0 + 1.1 * i + 0.35 * std::fmod(i * 7.0, 3.0);
    r.vms.push_back(
        make_vm(a.name, i, "r740-0" + std::to_string(1 + i / 2), start, 3.0 + 0.2 * i, ready, i == 5));
  }
  for (int i = 0; i < 8; ++i) {
    const double start = t0 + 120 + 0.0001 * i;
    const double ready = 6.9 + 0.2 * i + 0.1 * std::fmod(i * 5.0, 4.0);
    r.vms.push_back(make_vm(b.name, i, "r7625-01", start, 1.2 + 0.05 * i, ready, false));
  }
  r.slo = {results::SloRecord{"ready", "p95", 30.0, false},
           results::SloRecord{"ready", "ready_fraction", 1.0, true},
           results::SloRecord{"running", "max", 10.0, false}};
  return r;
}

// How many times `needle` occurs in `haystack` (overlapping occurrences count).
inline std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

// Checks that every element opened in `doc` is closed in order (the page is written XHTML-style, void
// elements self-closed). Returns an empty string when balanced, else a description of the first problem.
inline std::string tag_balance_problem(const std::string& doc) {
  std::vector<std::string> stack;
  std::size_t i = 0;
  while ((i = doc.find('<', i)) != std::string::npos) {
    if (doc.compare(i, 9, "<!DOCTYPE") == 0 || doc.compare(i, 4, "<!--") == 0) {
      i = doc.find('>', i);
      continue;
    }
    const auto end = doc.find('>', i);
    if (end == std::string::npos) return "unterminated tag at offset " + std::to_string(i);
    std::string tag = doc.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) return "empty tag";
    if (tag.front() == '/') {
      const std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name)
        return "</" + name + "> closes <" + (stack.empty() ? std::string("nothing") : stack.back()) + ">";
      stack.pop_back();
      continue;
    }
    if (tag.back() == '/') continue;  // self-closed
    const std::string name = tag.substr(0, tag.find_first_of(" \n\t"));
    if (name == "style") {  // CSS is raw text: skip to its end tag
      const auto close = doc.find("</style>", i);
      if (close == std::string::npos) return "unclosed <style>";
      i = close + 8;
      continue;
    }
    stack.push_back(name);
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  return {};
}

}  // namespace bootstorm::reports::testing
