#pragma once
// The data seam of the lab's Prometheus query engine: time series as the engine reads them (label sets with
// "__name__", samples in unix seconds) and the store that selects them by label matchers. The lab's scraper
// fills a store from the counters its physical model integrates; the engine (evaluate.hpp) only reads.
//
// Matchers follow Prometheus: `=` and `!=` compare strings, `=~` and `!~` match a regular expression against
// the whole value (fully anchored), and a label a series does not have has the value "".
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::sim::prometheus {

using Labels = std::map<std::string, std::string>;  // includes "__name__"

inline constexpr const char* metric_name_label = "__name__";

struct Sample {
  double at = 0;  // unix seconds
  double value = 0;
};

struct Series {
  Labels labels;
  std::vector<Sample> samples;  // in time order
};

enum class MatchOp { equal, not_equal, regex, not_regex };

const char* to_string(MatchOp op) noexcept;  // "=", "!=", "=~", "!~"

// A compiled regular expression (std::regex, ECMAScript); opaque so that this header stays light.
struct CompiledRegex;

struct Matcher {
  std::string label;
  MatchOp op = MatchOp::equal;
  std::string value;
  // The compiled form of `value` for =~ and !~, set by make_matcher. A Matcher built by hand compiles its
  // pattern on every call instead (and an invalid pattern then matches nothing).
  std::shared_ptr<const CompiledRegex> compiled;

  // `v` is the series' value of `label`, "" when the series does not have it.
  bool matches(const std::string& v) const;
};

// Checks and compiles a regex matcher's pattern up front, so that an invalid pattern is an error where the
// query is parsed. The pattern is ECMAScript (std::regex) with a leading "(?i)" accepted for case-insensitive
// matching as Prometheus' Go regexps write it; back-references are rejected (Go's RE2 syntax has none) and so
// are patterns whose automaton would be huge (more than 1000 repetitions, deep nesting), which keeps the cost
// of matching bounded. Errors are invalid_input and say why the pattern is invalid.
Expected<Matcher> make_matcher(std::string label, MatchOp op, std::string value);

// True when every matcher accepts the series' labels (absent labels compare as "").
bool matches_all(const std::vector<Matcher>& matchers, const Labels& labels);

// What the engine reads. Implementations must be safe to call from the thread that evaluates the query only.
class SeriesStore {
 public:
  virtual ~SeriesStore() = default;
  // The series matching every matcher, with their samples at times in [from, to] (unix seconds, inclusive).
  // Series without a sample in the window may be returned or left out: the engine treats both alike.
  virtual std::vector<Series> select(const std::vector<Matcher>& matchers, double from, double to) const = 0;
};

// A store held in memory: what tests, the fuzz target and a small scraper need.
class MemorySeriesStore : public SeriesStore {
 public:
  // Appends samples to the series with exactly these labels (created on first use). Samples must come in time
  // order per series; one at or before the series' last sample is dropped, as Prometheus drops out-of-order
  // samples.
  void add(const Labels& labels, double at, double value);
  void add(Series series);

  std::vector<Series> select(const std::vector<Matcher>& matchers, double from, double to) const override;
  std::size_t series_count() const { return series_.size(); }

 private:
  std::map<Labels, std::vector<Sample>> series_;
};

}  // namespace bootstorm::sim::prometheus
