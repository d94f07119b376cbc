#pragma once
// Reproducible draws for the resampling statistics (bootstrap, permutation tests): the same seed gives the
// same draws on every standard library, which std::uniform_int_distribution and std::shuffle do not promise.
#include <cstddef>
#include <random>
#include <span>
#include <utility>

namespace bootstorm::results::detail {

// Uniform index in [0, n) from one 64-bit draw (Lemire's multiply-shift; the bias is < n / 2^64).
inline std::size_t draw_index(std::mt19937_64& rng, std::size_t n) {
  __extension__ typedef unsigned __int128 Uint128;
  const Uint128 product = static_cast<Uint128>(rng()) * n;
  return static_cast<std::size_t>(product >> 64);
}

// Fisher–Yates shuffle on draw_index.
template <class T>
void shuffle(std::span<T> values, std::mt19937_64& rng) {
  for (std::size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[draw_index(rng, i)]);
}

}  // namespace bootstorm::results::detail
