#include "common/rfc3339.hpp"

#include <cctype>

namespace bootstorm {
namespace {

// Days from 1970-01-01 for a civil date (Howard Hinnant's algorithm).
long days_from_civil(long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long>(doe) - 719468;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm)
  if (text.size() < 20) return std::nullopt;
  auto digits = [&](std::size_t pos, std::size_t n, long& out) {
    out = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  long year, month, day, hour, minute, second;
  if (!digits(0, 4, year) || text[4] != '-' || !digits(5, 2, month) || text[7] != '-' || !digits(8, 2, day) ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !digits(11, 2, hour) || text[13] != ':' ||
      !digits(14, 2, minute) || text[16] != ':' || !digits(17, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return std::nullopt;
  std::size_t pos = 19;
  long nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    long scale = 100000000;
    bool any = false;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      nanos += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
      any = true;
    }
    if (!any) return std::nullopt;
  }
  long offset_s = 0;
  if (pos >= text.size()) return std::nullopt;
  if (text[pos] == 'Z' || text[pos] == 'z') {
    ++pos;
  } else if (text[pos] == '+' || text[pos] == '-') {
    long oh, om;
    if (!digits(pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !digits(pos + 4, 2, om)) {
      return std::nullopt;
    }
    offset_s = (oh * 3600 + om * 60) * (text[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  long days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  long long secs = static_cast<long long>(days) * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  // system_clock counts nanoseconds in 64 bits (years 1678 to 2261): a time outside would overflow the
  // conversion below (found by tests/fuzz/kubeconfig with year 4052).
  constexpr long long representable_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::duration::max()).count();
  if (secs >= representable_seconds || secs <= -representable_seconds) return std::nullopt;
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(secs) +
                                                                      std::chrono::nanoseconds(nanos)));
}

}  // namespace bootstorm
