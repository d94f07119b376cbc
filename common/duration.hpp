#pragma once
// Durations as written in plans: "10m", "30s", "1500ms", "1h30m", "0s", "2.5s".
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace bootstorm {

using Millis = std::chrono::milliseconds;

// Parses a Go-style duration (units h, m, s, ms, us, ns; fractions allowed; no sign). nullopt when invalid.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);

// The shortest exact rendering: 600s -> "10m", 5400s -> "1h30m", 1.5s -> "1500ms".
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace bootstorm
