#pragma once
// Normal values from a fixed seed for the statistics tests: Box–Muller on std::mt19937_64, written out so
// that the values are the same on every standard library and independent of the code under test.
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

namespace bootstorm::test_support {

inline std::vector<double> normal_sample(std::mt19937_64& rng, std::size_t n, double mu, double sigma) {
  std::vector<double> v;
  const double two_pi = 2 * std::acos(-1.0);
  while (v.size() < n) {
    const double u1 = (static_cast<double>(rng() >> 11) + 1.0) / 9007199254740993.0;
    const double u2 = static_cast<double>(rng() >> 11) / 9007199254740992.0;
    v.push_back(mu + sigma * std::sqrt(-2 * std::log(u1)) * std::cos(two_pi * u2));
  }
  return v;
}

}  // namespace bootstorm::test_support
