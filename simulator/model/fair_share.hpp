#pragma once
// Max-min fair sharing of capacitated resources by progressive filling (water-filling). Used by the lab model
// for CPU, HBA links, host buses and datastores; public so that its fairness can be tested on small,
// hand-computed cases.
//
// Every demand stands for `count` identical flows. Each flow of a demand consumes `coefficient` units of
// resource r per unit of its rate, for every (r, coefficient) in `uses`, and its rate never exceeds `cap`.
// All unfrozen flows rise at the same rate until a resource saturates (its flows freeze) or a flow reaches
// its cap (it freezes); repeat until every flow is frozen. The result is the max-min fair allocation.
#include <limits>
#include <utility>
#include <vector>

namespace bootstorm::sim::model {

struct ShareDemand {
  std::vector<std::pair<int, double>> uses;  // (resource index, units consumed per unit of rate)
  double cap = std::numeric_limits<double>::infinity();
  double count = 1;  // number of identical flows (0: ignored, rate 0)
};

// Returns the rate of one flow of each demand. A demand with no resource and no cap gets +infinity.
std::vector<double> max_min_fair_rates(const std::vector<double>& capacities,
                                       const std::vector<ShareDemand>& demands);

}  // namespace bootstorm::sim::model
