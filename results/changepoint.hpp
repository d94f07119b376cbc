#pragma once
// Change points in a series of runs: hierarchical e-divisive (Matteson & James, "A Nonparametric Approach
// for Multiple Change Point Analysis of Multivariate Data", JASA 2014), the method that Hunter and Orion
// build on for performance-test histories, with the original's permutation test for significance.
//
// For a segment [s, e) and a split t, X = x[s..t) (m values) and Y = x[t..e) (k values):
//   E(X, Y) = 2/(m k) sum |x_i - y_j|  -  1/C(m,2) sum_{i<i'} |x_i - x_i'|  -  1/C(k,2) sum_{j<j'} |y_j -
//   y_j'| Q(t)    = m k / (m + k) * E(X, Y)
// (the energy distance with exponent 1: it responds to any change of distribution, a shift of the mean
// first). Each step takes the split with the largest Q over every current segment, then asks how often a
// series permuted within its segments reaches a Q as large: p = (1 + #{permuted max >= observed}) /
// (1 + permutations). A split with p <= significance is a change point and the search goes on in its two
// halves; the first that is not stops it. A permutation test makes no assumption about the distribution of
// the runs: under "no change" the runs of a segment are exchangeable, so the chance of a false change point
// at each step is at most `significance`.
//
// Pure and deterministic: the permutations come from a seeded std::mt19937_64 through
// results/detail/random_index.hpp, so the same series and seed give the same answer everywhere.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bootstorm::results {

struct ChangePointOptions {
  double significance = 0.05;  // largest p-value of a change point, per step
  std::size_t permutations = 1999;
  std::size_t min_segment = 2;  // fewest runs on either side of a change point
  std::uint64_t seed = 0x6564697669736976ULL;
};

struct ChangePoint {
  std::size_t index = 0;  // the first value of the new segment
  double statistic = 0;   // Q at the split
  double p_value = 1;
};

// The change points of `series` (finite values, in time order), ascending by index. A series shorter than
// 2 x min_segment has none.
std::vector<ChangePoint> e_divisive(std::span<const double> series, const ChangePointOptions& options = {});

}  // namespace bootstorm::results
