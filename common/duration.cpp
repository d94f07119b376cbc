#include "common/duration.hpp"

#include <cctype>
#include <cmath>

namespace bootstorm {

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text == "0") return std::chrono::nanoseconds{0};
  long double total_ns = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    // number: digits with at most one '.'
    std::size_t start = i;
    bool dot = false;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) || (text[i] == '.' && !dot))) {
      if (text[i] == '.') dot = true;
      ++i;
    }
    if (i == start || (i - start == 1 && dot)) return std::nullopt;
    long double number = std::stold(std::string(text.substr(start, i - start)));
    std::size_t ustart = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(ustart, i - ustart);
    long double scale = 0;
    if (unit == "h")
      scale = 3600e9L;
    else if (unit == "m")
      scale = 60e9L;
    else if (unit == "s")
      scale = 1e9L;
    else if (unit == "ms")
      scale = 1e6L;
    else if (unit == "us" || unit == "µs")
      scale = 1e3L;
    else if (unit == "ns")
      scale = 1;
    else
      return std::nullopt;
    total_ns += number * scale;
  }
  if (total_ns > 1e18L) return std::nullopt;
  return std::chrono::nanoseconds{static_cast<long long>(std::llround(total_ns))};
}

std::string format_duration(std::chrono::nanoseconds d) {
  long long ns = d.count();
  if (ns == 0) return "0s";
  std::string out;
  if (ns % 1'000'000 != 0) {
    if (ns % 1000 == 0) return std::to_string(ns / 1000) + "us";
    return std::to_string(ns) + "ns";
  }
  long long ms = ns / 1'000'000;
  if (ms % 1000 != 0) return std::to_string(ms) + "ms";
  long long s = ms / 1000;
  long long h = s / 3600, m = (s % 3600) / 60, sec = s % 60;
  if (h) out += std::to_string(h) + "h";
  if (m) out += std::to_string(m) + "m";
  if (sec) out += std::to_string(sec) + "s";
  return out;
}

}  // namespace bootstorm
