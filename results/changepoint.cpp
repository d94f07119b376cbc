#include "results/changepoint.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>

#include "results/detail/random_index.hpp"

namespace bootstorm::results {
namespace {

struct Segment {
  std::size_t begin = 0, end = 0;  // [begin, end)
};

struct Split {
  std::size_t segment = 0;  // into the segment list
  std::size_t at = 0;
  double q = 0;
};

// The series as it is looked at: value order[i] stands at position i (the identity, or a permutation within
// segments), so one distance table serves every permutation.
class Scanner {
 public:
  explicit Scanner(std::span<const double> series) : n_(series.size()), distance_(n_ * n_) {
    for (std::size_t i = 0; i < n_; ++i)
      for (std::size_t j = 0; j < n_; ++j) distance_[i * n_ + j] = std::abs(series[i] - series[j]);
  }

  // The split of [seg.begin, seg.end) with the largest Q, positions mapped through `order`; nullopt when the
  // segment is too short for two sides of min_segment.
  std::optional<Split> best_split(const Segment& seg, std::span<const std::size_t> order,
                                  std::size_t min_segment) const {
    const std::size_t n = seg.end - seg.begin;
    if (n < 2 * min_segment) return std::nullopt;
    const auto d = [&](std::size_t a, std::size_t b) { return distance_[order[a] * n_ + order[b]]; };
    // Start with X = the first min_segment values and Y = the rest, then move one value at a time.
    double within_x = 0, within_y = 0, between = 0;
    const std::size_t first = seg.begin + min_segment;
    for (std::size_t i = seg.begin; i < first; ++i)
      for (std::size_t j = i + 1; j < first; ++j) within_x += d(i, j);
    for (std::size_t i = first; i < seg.end; ++i)
      for (std::size_t j = i + 1; j < seg.end; ++j) within_y += d(i, j);
    for (std::size_t i = seg.begin; i < first; ++i)
      for (std::size_t j = first; j < seg.end; ++j) between += d(i, j);
    std::optional<Split> best;
    for (std::size_t t = first;; ++t) {
      const double m = static_cast<double>(t - seg.begin), k = static_cast<double>(seg.end - t);
      const double e = 2 * between / (m * k) - (m > 1 ? within_x / (m * (m - 1) / 2) : 0) -
                       (k > 1 ? within_y / (k * (k - 1) / 2) : 0);
      const double q = m * k / (m + k) * e;
      if (!best || q > best->q) best = Split{0, t, q};
      if (t + min_segment >= seg.end) break;
      // Position t moves from Y to X.
      double to_x = 0, to_y = 0;
      for (std::size_t i = seg.begin; i < t; ++i) to_x += d(i, t);
      for (std::size_t j = t + 1; j < seg.end; ++j) to_y += d(t, j);
      within_x += to_x;
      within_y -= to_y;
      between += to_y - to_x;
    }
    return best;
  }

  std::optional<Split> best_over(const std::vector<Segment>& segments, std::span<const std::size_t> order,
                                 std::size_t min_segment) const {
    std::optional<Split> best;
    for (std::size_t s = 0; s < segments.size(); ++s) {
      auto split = best_split(segments[s], order, min_segment);
      if (split && (!best || split->q > best->q)) {
        split->segment = s;
        best = split;
      }
    }
    return best;
  }

 private:
  std::size_t n_;
  std::vector<double> distance_;
};

}  // namespace

std::vector<ChangePoint> e_divisive(std::span<const double> series, const ChangePointOptions& options) {
  std::vector<ChangePoint> found;
  const std::size_t min_segment = std::max<std::size_t>(options.min_segment, 1);
  if (series.size() < 2 * min_segment) return found;
  const Scanner scanner(series);
  std::vector<std::size_t> identity(series.size());
  std::iota(identity.begin(), identity.end(), std::size_t{0});
  std::vector<Segment> segments{{0, series.size()}};
  std::mt19937_64 rng(options.seed);
  std::vector<std::size_t> order(series.size());
  while (true) {
    const auto observed = scanner.best_over(segments, identity, min_segment);
    if (!observed || !(observed->q > 0)) break;
    // Ties within rounding count as reaching the observed statistic.
    const double reach = observed->q * (1 - 1e-12);
    std::size_t as_large = 0;
    for (std::size_t p = 0; p < options.permutations; ++p) {
      order = identity;
      for (const Segment& seg : segments)
        detail::shuffle(std::span<std::size_t>(order).subspan(seg.begin, seg.end - seg.begin), rng);
      const auto permuted = scanner.best_over(segments, order, min_segment);
      if (permuted && permuted->q >= reach) ++as_large;
    }
    const double p_value = static_cast<double>(1 + as_large) / static_cast<double>(1 + options.permutations);
    if (p_value > options.significance) break;
    found.push_back(ChangePoint{observed->at, observed->q, p_value});
    const Segment split = segments[observed->segment];
    segments[observed->segment] = Segment{split.begin, observed->at};
    segments.insert(segments.begin() + static_cast<std::ptrdiff_t>(observed->segment) + 1,
                    Segment{observed->at, split.end});
  }
  std::sort(found.begin(), found.end(),
            [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  return found;
}

}  // namespace bootstorm::results
