#pragma once
// What the lab model can represent, checked before it allocates: a command that models or serves more is
// refused with a message instead of running the machine out of memory.
#include <cstddef>

namespace bootstorm::sim::model {

// VMs in one lab at once (golden VMs and clones together). A VM of the model with its boot, flows and
// journal of milestones holds a few KB; a million of them is far beyond any storm a plan can ask for
// (plan::kMaxScenarioVms) and still fits in a jump host's memory.
constexpr std::size_t kMaxLabVms = 1'000'000;

}  // namespace bootstorm::sim::model
