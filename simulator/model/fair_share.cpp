#include "simulator/model/fair_share.hpp"

#include <algorithm>
#include <cmath>

namespace bootstorm::sim::model {

std::vector<double> max_min_fair_rates(const std::vector<double>& capacities,
                                       const std::vector<ShareDemand>& demands) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::size_t n = demands.size();
  std::vector<double> rate(n, 0.0);
  std::vector<char> frozen(n, 0);
  std::size_t unfrozen = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (demands[i].count <= 0) {
      frozen[i] = 1;
    } else {
      ++unfrozen;
    }
  }
  std::vector<double> frozen_usage(capacities.size(), 0.0);
  std::vector<double> unfrozen_coef(capacities.size(), 0.0);
  double level = 0;
  while (unfrozen > 0) {
    // Sums are rebuilt every round: subtracting would accumulate rounding residue that can make a
    // saturated resource look barely unsaturated.
    std::fill(unfrozen_coef.begin(), unfrozen_coef.end(), 0.0);
    double next = kInf;
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      next = std::min(next, demands[i].cap);
      for (const auto& [r, coef] : demands[i].uses) unfrozen_coef[r] += demands[i].count * coef;
    }
    std::vector<char> saturated(capacities.size(), 0);
    for (std::size_t r = 0; r < capacities.size(); ++r) {
      if (unfrozen_coef[r] <= 0) continue;
      next = std::min(next, std::max(0.0, capacities[r] - frozen_usage[r]) / unfrozen_coef[r]);
    }
    if (next == kInf) {
      // Unconstrained flows: nothing limits them.
      for (std::size_t i = 0; i < n; ++i) {
        if (!frozen[i]) rate[i] = kInf;
      }
      break;
    }
    level = std::max(level, next);
    const double tolerance = 1e-12 * std::max(1.0, std::abs(level));
    for (std::size_t r = 0; r < capacities.size(); ++r) {
      if (unfrozen_coef[r] <= 0) continue;
      const double saturation_level = std::max(0.0, capacities[r] - frozen_usage[r]) / unfrozen_coef[r];
      if (saturation_level <= level + tolerance) saturated[r] = 1;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      bool freeze = demands[i].cap <= level + tolerance;
      for (const auto& [r, coef] : demands[i].uses) {
        if (saturated[r] && coef > 0) freeze = true;
      }
      if (!freeze) continue;
      frozen[i] = 1;
      --unfrozen;
      rate[i] = std::min(level, demands[i].cap);
      for (const auto& [r, coef] : demands[i].uses) frozen_usage[r] += demands[i].count * coef * rate[i];
    }
  }
  return rate;
}

}  // namespace bootstorm::sim::model
