#include "simulator/prometheus/series_store.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <optional>
#include <regex>
#include <string_view>

namespace bootstorm::sim::prometheus {

struct CompiledRegex {
  std::regex re;
};

namespace {

// Limits in the spirit of Go's regexp/syntax (maximum repeat count 1000, bounded nesting and program size).
// They matter more here than in Go: libstdc++ compiles and matches by recursion, so a pattern such as
// "(a?){1000}" nested a few times would otherwise exhaust the stack or the time of the query.
constexpr std::size_t max_repeat = 1000;
constexpr std::size_t max_group_depth = 100;
constexpr std::size_t max_program_size = 5000;

// Estimates the size of the automaton the pattern compiles to (literals, classes, groups, repetitions
// multiplied out). Not a parser: std::regex still rejects whatever is malformed.
std::optional<std::string> check_complexity(std::string_view p) {
  // Back-references (and the octal escapes Go has) are refused before std::regex reads their digits into a
  // long, which overflows on a long run of digits.
  static const std::string digit_escape = "back-references and octal escapes are not supported";
  struct Frame {
    std::size_t total = 0;  // size of the group so far
    std::size_t last = 0;   // size of its last atom, which a quantifier repeats
  };
  std::vector<Frame> stack(1);
  auto atom = [&](std::size_t size) {
    stack.back().total += size;
    stack.back().last = size;
  };
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 < p.size() && std::isdigit(static_cast<unsigned char>(p[i + 1]))) return digit_escape;
      ++i;
      atom(1);
    } else if (c == '[') {
      std::size_t j = i + 1;
      if (j < p.size() && p[j] == '^') ++j;
      if (j < p.size() && p[j] == ']') ++j;
      while (j < p.size() && p[j] != ']') {
        if (p[j] == '\\' && j + 1 < p.size() && std::isdigit(static_cast<unsigned char>(p[j + 1])))
          return digit_escape;
        j += p[j] == '\\' ? 2 : 1;
      }
      i = std::min(j, p.size());
      atom(1);
    } else if (c == '(') {
      if (stack.size() > max_group_depth) return "expression nests too deeply";
      stack.emplace_back();
    } else if (c == ')' && stack.size() > 1) {
      const std::size_t size = stack.back().total + 2;
      stack.pop_back();
      atom(size);
    } else if (c == '|') {
      stack.back().total += 1;
      stack.back().last = 0;
    } else if (c == '*' || c == '+' || c == '?') {
      stack.back().total += 1;
      stack.back().last += 1;
    } else if (c == '{') {
      // {n}, {n,} or {n,m}; anything else is a literal brace in ECMAScript or an error std::regex reports.
      std::size_t j = i + 1, n = 0, m = 0;
      bool digits = false, comma = false, m_digits = false;
      while (j < p.size() && (std::isdigit(static_cast<unsigned char>(p[j])) || p[j] == ',')) {
        if (p[j] == ',') {
          if (comma) break;
          comma = true;
        } else {
          std::size_t& target = comma ? m : n;
          target = std::min<std::size_t>(target * 10 + static_cast<std::size_t>(p[j] - '0'), max_repeat + 1);
          (comma ? m_digits : digits) = true;
        }
        ++j;
      }
      // Checked even when the braces turn out malformed: libstdc++ reads the digits into a long first.
      if (n > max_repeat || m > max_repeat) return "invalid repeat count";
      if (!digits || j >= p.size() || p[j] != '}') {
        atom(1);
        continue;
      }
      const std::size_t count = std::max<std::size_t>(comma ? (m_digits ? m : n + 1) : n, 1);
      Frame& f = stack.back();
      f.total = f.total - f.last + f.last * count + 1;
      f.last = f.last * count + 1;
      i = j;
    } else {
      atom(1);
    }
    if (stack.back().total > max_program_size) return "expression too large";
  }
  std::size_t total = 0;
  for (const Frame& f : stack) total += f.total;
  if (total > max_program_size) return "expression too large";
  return std::nullopt;
}

Expected<std::shared_ptr<const CompiledRegex>> compile(const std::string& pattern) {
  std::string_view body = pattern;
  auto flags = std::regex::ECMAScript;
  if (body.substr(0, 4) == "(?i)") {
    body.remove_prefix(4);
    flags |= std::regex::icase;
  }
#ifdef __GLIBCXX__
  // libstdc++'s breadth-first executor: polynomial matching time, and back-references become compile errors.
  flags |= std::regex_constants::__polynomial;
#endif
  if (auto why = check_complexity(body)) {
    return make_error(ErrorKind::invalid_input, "invalid regular expression \"" + pattern + "\": " + *why);
  }
  try {
    // std::regex_match matches the whole value: the anchoring of Prometheus' "^(?:re)$" without pasting
    // the pattern into another one (where "a)|(b" would become valid).
    return std::make_shared<const CompiledRegex>(CompiledRegex{std::regex(body.begin(), body.end(), flags)});
  } catch (const std::regex_error& e) {
    return make_error(ErrorKind::invalid_input,
                      "invalid regular expression \"" + pattern + "\": " + e.what());
  }
}

bool regex_matches(const Matcher& m, const std::string& v) {
  if (m.compiled) return std::regex_match(v, m.compiled->re);
  auto compiled = compile(m.value);
  return compiled && std::regex_match(v, (*compiled)->re);
}

}  // namespace

const char* to_string(MatchOp op) noexcept {
  switch (op) {
    case MatchOp::equal:
      return "=";
    case MatchOp::not_equal:
      return "!=";
    case MatchOp::regex:
      return "=~";
    case MatchOp::not_regex:
      return "!~";
  }
  return "?";
}

bool Matcher::matches(const std::string& v) const {
  switch (op) {
    case MatchOp::equal:
      return v == value;
    case MatchOp::not_equal:
      return v != value;
    case MatchOp::regex:
      return regex_matches(*this, v);
    case MatchOp::not_regex:
      return !regex_matches(*this, v);
  }
  return false;
}

Expected<Matcher> make_matcher(std::string label, MatchOp op, std::string value) {
  Matcher m{std::move(label), op, std::move(value), nullptr};
  if (op == MatchOp::regex || op == MatchOp::not_regex) {
    auto compiled = compile(m.value);
    if (!compiled) return compiled.error();
    m.compiled = std::move(*compiled);
  }
  return m;
}

bool matches_all(const std::vector<Matcher>& matchers, const Labels& labels) {
  static const std::string empty;
  return std::all_of(matchers.begin(), matchers.end(), [&](const Matcher& m) {
    auto it = labels.find(m.label);
    return m.matches(it == labels.end() ? empty : it->second);
  });
}

void MemorySeriesStore::add(const Labels& labels, double at, double value) {
  auto& samples = series_[labels];
  if (!samples.empty() && !(at > samples.back().at)) return;
  samples.push_back({at, value});
}

void MemorySeriesStore::add(Series series) {
  for (const Sample& s : series.samples) add(series.labels, s.at, s.value);
  series_.try_emplace(std::move(series.labels));
}

std::vector<Series> MemorySeriesStore::select(const std::vector<Matcher>& matchers, double from,
                                              double to) const {
  std::vector<Series> out;
  for (const auto& [labels, samples] : series_) {
    if (!matches_all(matchers, labels)) continue;
    auto first = std::lower_bound(samples.begin(), samples.end(), from,
                                  [](const Sample& s, double t) { return s.at < t; });
    auto last = std::upper_bound(samples.begin(), samples.end(), to,
                                 [](double t, const Sample& s) { return t < s.at; });
    if (first >= last) continue;
    out.push_back(Series{labels, std::vector<Sample>(first, last)});
  }
  return out;
}

}  // namespace bootstorm::sim::prometheus
