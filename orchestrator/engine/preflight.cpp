#include "orchestrator/engine/preflight.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "orchestrator/engine/barrier.hpp"
#include "orchestrator/engine/journal_events.hpp"

namespace bootstorm::engine {

namespace {

std::string thousands(std::size_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

api::CheckRequest check_request(const plan::StormPlan& plan,
                                const std::vector<const plan::Scenario*>& scenarios) {
  api::CheckRequest request;
  for (const auto* s : scenarios) {
    for (const auto& p : s->placement) {
      int& most = request.vms_per_host[p.host];
      most = std::max(most, p.vms);
    }
    request.largest_storm = std::max(request.largest_storm, static_cast<std::size_t>(s->total_vms()));
    request.total_vms += static_cast<std::size_t>(s->total_vms());
  }
  request.storm_timeout = plan.storm.timeout;
  request.ready_signal = plan.ready.signal;
  return request;
}

api::CheckResult start_burst_check(const plan::StormPlan& plan, const api::Capabilities& caps,
                                   std::size_t largest_storm) {
  api::CheckResult r;
  r.name = "start burst";
  const std::size_t n = std::max<std::size_t>(1, largest_storm);
  const std::size_t at_once = burst_concurrency(plan.storm.start_concurrency, caps, n);
  if (plan.storm.mode == "ramp") {
    r.finding = fmt::format(
        "ramp: {} starts at {:g} per second, over {:.1f} s", thousands(n), plan.storm.ramp_per_second,
        plan.storm.ramp_per_second > 0 ? static_cast<double>(n) / plan.storm.ramp_per_second : 0.0);
    return r;
  }
  if (at_once >= n) {
    r.finding = caps.starts_batched
                    ? fmt::format("the {} starts of the largest storm go out together, as one batched call",
                                  thousands(n))
                    : fmt::format("the {} starts of the largest storm go out at once", thousands(n));
    return r;
  }
  const std::size_t waves = (n + at_once - 1) / at_once;
  if (plan.storm.start_concurrency > 0) {
    r.status = api::CheckStatus::warn;
    r.finding = fmt::format(
        "storm.startConcurrency {} holds the burst to {} starts in flight: the {} starts of the largest "
        "storm go "
        "out in about {} waves, each after earlier starts were answered",
        plan.storm.start_concurrency, thousands(at_once), thousands(n), waves);
    r.advice =
        "leave storm.startConcurrency out to fire every start at once (keep it only to feed the platform as "
        "a "
        "broker does); the fire skew will show the waves";
    return r;
  }
  r.finding = fmt::format(
      "{} of the {} starts of the largest storm in flight at once: the platform runs that many and queues "
      "the "
      "rest itself (each start holds its connection until the VM is on)",
      thousands(at_once), thousands(n));
  return r;
}

std::string check_table(const std::vector<api::CheckResult>& results) {
  std::size_t width = 5;
  for (const auto& r : results) width = std::max(width, r.name.size());
  std::string out;
  for (const auto& r : results) {
    std::string status(api::to_string(r.status));
    for (auto& c : status) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out += fmt::format("{:<7} {:<{}}  {}\n", status, r.name, width, r.finding);
    if (r.status != api::CheckStatus::pass && !r.advice.empty())
      out += fmt::format("{:<7} {:<{}}  \u2192 {}\n", "", "", width, r.advice);
  }
  return out;
}

nlohmann::json checks_json(const std::vector<api::CheckResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : results) {
    nlohmann::json one = {{fields::name, c.name},
                          {fields::status, std::string(api::to_string(c.status))},
                          {fields::finding, c.finding}};
    if (!c.advice.empty()) one[fields::advice] = c.advice;
    out.push_back(std::move(one));
  }
  return out;
}

std::optional<Error> first_failure(const std::vector<api::CheckResult>& results) {
  const api::CheckResult* first = nullptr;
  std::vector<std::string> others;
  for (const auto& r : results) {
    if (r.status != api::CheckStatus::fail) continue;
    if (!first)
      first = &r;
    else
      others.push_back(r.name);
  }
  if (!first) return std::nullopt;
  std::string message = "check " + first->name + " failed: " + first->finding;
  if (!others.empty()) message += fmt::format(" (also failed: {})", fmt::join(others, ", "));
  // Not a usage error (exit 2): the plan is valid, the platform cannot take it as it is (exit 1).
  return make_error(ErrorKind::conflict, message, first->advice);
}

}  // namespace bootstorm::engine
