// Seeded draws keyed by their inputs: splitmix64 over an FNV-1a hash of the name.
#include "simulator/model/detail/keyed_random.hpp"

#include <algorithm>
#include <cmath>

namespace bootstorm::sim::model {

namespace {

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double keyed_uniform(std::uint64_t seed, std::string_view name, std::uint64_t a, std::uint64_t b) {
  std::uint64_t h = splitmix64(seed ^ splitmix64(fnv1a(name) ^ splitmix64(a * 0x100000001b3ULL + b)));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

double keyed_normal(std::uint64_t seed, std::string_view name, std::uint64_t a, std::uint64_t b) {
  // Box-Muller on two keyed uniforms: portable across standard libraries (std::normal_distribution is not).
  const double u1 = std::max(keyed_uniform(seed, name, a, b * 2 + 1), 1e-300);
  const double u2 = keyed_uniform(seed, name, a, b * 2 + 2);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace bootstorm::sim::model
