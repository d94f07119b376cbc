#include "reports/text.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/rfc3339.hpp"

namespace bootstorm::reports {

namespace {

// <, > and &: what both HTML and Markdown (whose renderers pass HTML through) must not see raw.
bool append_markup_escape(std::string& out, char c) {
  switch (c) {
    case '&':
      out += "&amp;";
      return true;
    case '<':
      out += "&lt;";
      return true;
    case '>':
      out += "&gt;";
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string escape_md(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (append_markup_escape(out, c)) continue;
    switch (c) {
      case '|':
      case '`':
      case '*':
      case '_':
        out += '\\';
        out += c;
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string seconds(const std::optional<double>& v, int decimals) {
  if (!v) return "\u2014";
  return fmt::format("{:.{}f} s", *v, decimals);
}

std::string percent(double fraction, int decimals) {
  return fmt::format("{:.{}f} %", fraction * 100, decimals);
}

std::string number(double v, int decimals) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string utc_iso(double unix_s) {
  if (unix_s <= 0) return {};
  // Rounded to the millisecond it is written with.
  return format_rfc3339(
      std::chrono::system_clock::time_point(std::chrono::milliseconds(std::llround(unix_s * 1000.0))));
}

std::string scenario_label(std::string_view name, int repeat, bool several_repeats) {
  return several_repeats ? fmt::format("{} #{}", name, repeat) : std::string(name);
}

}  // namespace bootstorm::reports
