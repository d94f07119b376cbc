// One-line SLOs (see the header).
#include "results/slo_text.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <vector>

#include "common/duration.hpp"
#include "providers/api/milestone.hpp"
#include "results/summary.hpp"

namespace bootstorm::results {

namespace {

constexpr const char* kExample =
    "Write it as [MILESTONE] STAT OP VALUE, e.g. 'ready p95 <= 60s' or "
    "'ready_fraction >= 99%'.";

Error bad(std::string_view text, const std::string& why) {
  return make_error(ErrorKind::invalid_input, fmt::format("The SLO '{}' does not parse: {}", text, why),
                    kExample);
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::string word;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

std::optional<double> number(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Seconds as the user most likely wrote them: "60s", "0.5s", "90s"; a bare number (seconds) where {:g} needs
// an exponent, which a duration cannot carry.
std::string seconds_text(double s) {
  const std::string n = fmt::format("{:g}", s);
  return n.find('e') == std::string::npos ? n + "s" : n;
}

}  // namespace

Expected<SloRecord> parse_slo_text(std::string_view text) {
  // The operator splits the line; anything else (<, >, =, ==) is named, not guessed at.
  const auto at = text.find_first_of("<>=!");
  if (at == std::string_view::npos) return bad(text, "it has no comparison (<= or >=)");
  std::size_t end = at;
  while (end < text.size() && (text[end] == '<' || text[end] == '>' || text[end] == '=' || text[end] == '!'))
    ++end;
  const std::string op(text.substr(at, end - at));
  const std::vector<std::string> left = words(text.substr(0, at));
  const std::string right = trim(text.substr(end));

  SloRecord slo;
  slo.milestone = "ready";
  if (left.empty() || left.size() > 2)
    return bad(text, fmt::format("expected [MILESTONE] STAT before '{}', got {} word(s)", op, left.size()));
  slo.stat = left.back();
  if (left.size() == 2) {
    slo.milestone = left.front();
    if (slo.milestone != "ready" && !api::milestone_from_string(slo.milestone)) {
      std::string names = "ready";
      for (auto m : api::kAllMilestones) names += ", " + std::string(api::to_string(m));
      return bad(text, fmt::format("'{}' is not a milestone ({})", slo.milestone, names));
    }
  }
  if (!is_slo_stat(slo.stat)) {
    std::string names;
    for (auto s : kSloStats) names += (names.empty() ? "" : ", ") + std::string(s);
    return bad(text, fmt::format("'{}' is not a statistic ({})", slo.stat, names));
  }
  slo.is_min = slo.stat == "ready_fraction";
  const std::string wanted = slo.is_min ? ">=" : "<=";
  if (op != wanted) {
    return bad(text, slo.is_min ? fmt::format("ready_fraction is a floor: use >=, not '{}'", op)
                                : fmt::format("{} is a time bound: use <=, not '{}'", slo.stat, op));
  }
  if (right.empty()) return bad(text, "it has no value after " + op);
  if (slo.is_min) {
    std::string value = right;
    double scale = 1;
    if (value.back() == '%') {
      value.pop_back();
      scale = 0.01;
    }
    auto v = number(trim(value));
    if (!v || !std::isfinite(*v) || *v * scale < 0 || *v * scale > 1)
      return bad(text, fmt::format("'{}' is not a fraction between 0 and 1 (or 0% to 100%)", right));
    slo.max = *v * scale;
    return slo;
  }
  if (auto v = number(right)) {
    slo.max = *v;
  } else if (auto d = parse_duration(right)) {
    slo.max = std::chrono::duration<double>(*d).count();
  } else {
    return bad(text, fmt::format("'{}' is not a duration (60s, 1m30s, 1500ms)", right));
  }
  if (!(slo.max > 0)) return bad(text, fmt::format("the bound '{}' must be more than zero", right));
  if (!std::isfinite(slo.max)) return bad(text, fmt::format("the bound '{}' is not a finite time", right));
  return slo;
}

std::string slo_text(const SloRecord& slo) {
  const std::string milestone = slo.milestone.empty() ? "ready" : slo.milestone;
  if (slo.is_min) return fmt::format("{} {} >= {:g}", milestone, slo.stat, slo.max);
  return fmt::format("{} {} <= {}", milestone, slo.stat, seconds_text(slo.max));
}

}  // namespace bootstorm::results
