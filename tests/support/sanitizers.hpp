#pragma once
// How much slower this build runs than an optimised one: ASan + UBSan (the asan and fuzz presets) make the
// lab and the orchestrator several times slower. Tests scale their bounds on *speed* (start transit,
// publication lag, sanity limits on fire skew) by it; bounds on *correctness* (an observation within its
// stated resolution, causality) never change.
namespace bootstorm::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr double kSanitizerSlowdown = 4.0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr double kSanitizerSlowdown = 4.0;
#else
inline constexpr double kSanitizerSlowdown = 1.0;
#endif
#else
inline constexpr double kSanitizerSlowdown = 1.0;
#endif

}  // namespace bootstorm::test
