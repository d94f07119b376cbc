#include "common/rfc3339.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

namespace bootstorm {
namespace {

// Days from 1970-01-01 for a civil date, and back (Howard Hinnant's algorithms): no time zone database and
// no libc calls, so every year system_clock can hold works the same everywhere.
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

struct Civil {
  long long year;
  unsigned month;
  unsigned day;
};

Civil civil_from_days(long long z) {
  z += 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<long long>(yoe) + era * 400 + (m <= 2), m, d};
}

bool leap(long long y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned days_in_month(long long y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : kDays[m - 1];
}

}  // namespace

Expected<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return make_error(ErrorKind::invalid_input, fmt::format("'{}' is not an RFC 3339 time: {}", text, why),
                      "write it as e.g. 2026-11-30T10:00:00Z (UTC) or 2026-11-30T11:00:00+01:00");
  };
  if (text.size() < 20) return bad("too short");
  auto digits = [&](std::size_t pos, std::size_t n, long long& out) {
    out = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  long long year, month, day, hour, minute, second;
  if (!digits(0, 4, year) || text[4] != '-' || !digits(5, 2, month) || text[7] != '-' || !digits(8, 2, day) ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !digits(11, 2, hour) || text[13] != ':' ||
      !digits(14, 2, minute) || text[16] != ':' || !digits(17, 2, second))
    return bad("expected YYYY-MM-DDTHH:MM:SS");
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return bad("a date or time field is out of range");
  if (day > days_in_month(year, static_cast<unsigned>(month)))
    return bad("the day does not exist in that month");
  std::size_t pos = 19;
  long long nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const std::size_t begin = pos;
    long long scale = 100000000;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      nanos += (text[pos] - '0') * scale;  // digits past nanoseconds add nothing (scale reaches 0)
      scale /= 10;
      ++pos;
    }
    if (pos == begin) return bad("no digits after the decimal point");
  }
  long long offset_s = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    long long oh, om;
    if (pos + 6 != text.size() || !digits(pos + 1, 2, oh) || text[pos + 3] != ':' ||
        !digits(pos + 4, 2, om) || oh > 23 || om > 59)
      return bad("the UTC offset must be Z or +HH:MM / -HH:MM");
    offset_s = (oh * 3600 + om * 60) * (text[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return bad("a time zone is required (Z or +HH:MM)");
  }
  if (pos != text.size()) return bad("unexpected characters at the end");
  const long long days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const long long secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  // system_clock counts nanoseconds in 64 bits (years 1678 to 2261): a time outside would overflow the
  // conversion below (found by tests/fuzz/kubeconfig with year 4052).
  constexpr long long representable_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::duration::max()).count();
  if (secs >= representable_seconds || secs <= -representable_seconds)
    return bad("the year is outside 1678 to 2261");
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(secs) +
                                                                      std::chrono::nanoseconds(nanos)));
}

std::string format_rfc3339(std::chrono::system_clock::time_point t, Rfc3339Fraction fraction) {
  const auto us = std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch()).count();
  const long long secs = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
  const long long days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  const long long of_day = secs - days * 86400;
  const Civil c = civil_from_days(days);
  const auto hms = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", c.year, c.month, c.day, of_day / 3600,
                               of_day / 60 % 60, of_day % 60);
  const long long sub_us = us - secs * 1000000;
  switch (fraction) {
    case Rfc3339Fraction::seconds:
      return hms + "Z";
    case Rfc3339Fraction::millis:
      return fmt::format("{}.{:03}Z", hms, sub_us / 1000);
    case Rfc3339Fraction::micros:
      break;
  }
  return fmt::format("{}.{:06}Z", hms, sub_us);
}

std::chrono::system_clock::time_point from_unix_seconds(double unix_seconds) {
  // Whole seconds and the fraction apart: 1.8e18 nanoseconds is beyond a double's 53 bits, so scaling the
  // whole value would lose the fraction's last digits (…00.25 would come out as …00.249999872).
  const double whole = std::floor(unix_seconds);
  const auto nanos = std::llround((unix_seconds - whole) * 1e9);
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(static_cast<long long>(whole)) + std::chrono::nanoseconds(nanos)));
}

double unix_seconds(std::chrono::system_clock::time_point t) {
  // Whole seconds and the fraction apart, as from_unix_seconds: the nanosecond count of today (1.8e18) is
  // beyond a double's 53 bits, and converting it whole would be up to 128 ns off before the division.
  const auto since = t.time_since_epoch();
  const auto whole = std::chrono::floor<std::chrono::seconds>(since);
  return static_cast<double>(whole.count()) + std::chrono::duration<double>(since - whole).count();
}

}  // namespace bootstorm
