#pragma once
// Internal to bootstorm::sim_model: seeded random draws keyed by what they are for (VM name, boot, purpose).
#include <cstdint>
#include <string_view>

namespace bootstorm::sim::model {

std::uint64_t splitmix64(std::uint64_t x);

// A uniform [0,1) draw that depends only on its inputs, so that jitter and fault draws of one VM do not
// depend on the order in which other VMs were started.
double keyed_uniform(std::uint64_t seed, std::string_view name, std::uint64_t a, std::uint64_t b);

// A standard normal draw keyed like keyed_uniform.
double keyed_normal(std::uint64_t seed, std::string_view name, std::uint64_t a, std::uint64_t b);

}  // namespace bootstorm::sim::model
