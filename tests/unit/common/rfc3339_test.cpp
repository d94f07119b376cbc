// The one RFC 3339 parser and formatter (common/rfc3339.hpp).
#include "common/rfc3339.hpp"

#include <gtest/gtest.h>

using namespace bootstorm;
using std::chrono::system_clock;

namespace {

long long unix_of(system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

TEST(Rfc3339, ParsesZonesAndFractions) {
  auto z = parse_rfc3339("2026-11-30T10:00:00Z");
  ASSERT_TRUE(z) << z.error().what();
  EXPECT_EQ(format_rfc3339(*z), "2026-11-30T10:00:00.000Z");
  auto offset = parse_rfc3339("2026-11-30T11:30:00.250+01:30");
  ASSERT_TRUE(offset) << offset.error().what();
  EXPECT_EQ(format_rfc3339(*offset), "2026-11-30T10:00:00.250Z");
  auto west = parse_rfc3339("2026-11-29T23:00:00-11:00");
  ASSERT_TRUE(west);
  EXPECT_EQ(format_rfc3339(*west), "2026-11-30T10:00:00.000Z");
  for (const char* bad :
       {"2026-11-30 10:00", "2026-11-30T10:00:00", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
        "2026-11-30T10:00:00.Z", "2026-11-30T10:00:00+0100", "tomorrow", "2026-11-30T10:00:00Zjunk"}) {
    auto t = parse_rfc3339(bad);
    EXPECT_FALSE(t) << bad;
    if (!t) {
      EXPECT_NE(t.error().what().find("RFC 3339"), std::string::npos);
    }
  }
}

TEST(Rfc3339, ParsesKnownInstantsAndLeapDays) {
  auto t = parse_rfc3339("1970-01-02T00:00:01Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(unix_of(*t), 86401);
  auto leap = parse_rfc3339("2024-02-29T12:00:00Z");
  ASSERT_TRUE(leap);
  EXPECT_EQ(unix_of(*leap), 1709208000);
  EXPECT_FALSE(parse_rfc3339("2023-02-29T12:00:00Z"));  // 2023 is not a leap year
  EXPECT_FALSE(parse_rfc3339("2100-02-29T00:00:00Z"));  // nor is 2100
  EXPECT_TRUE(parse_rfc3339("2000-02-29T00:00:00Z"));   // but 2000 is
  EXPECT_FALSE(parse_rfc3339("2026-04-31T00:00:00Z"));
  EXPECT_FALSE(parse_rfc3339("2024-02-29 12:00"));
  EXPECT_FALSE(parse_rfc3339("2024-13-01T00:00:00Z"));
  auto lower = parse_rfc3339("2026-11-30t10:00:00.5z");
  ASSERT_TRUE(lower);
  EXPECT_EQ(format_rfc3339(*lower), "2026-11-30T10:00:00.500Z");
}

TEST(Rfc3339, NanosecondFractionsAndYearsOutsideTheClock) {
  auto t = parse_rfc3339("2026-11-30T10:00:00.123456789123Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::nanoseconds>(t->time_since_epoch()).count() % 1000000000,
            123456789);
  auto far = parse_rfc3339("4052-01-01T00:00:00Z");
  ASSERT_FALSE(far);
  EXPECT_NE(far.error().what().find("1678 to 2261"), std::string::npos);
}

TEST(Rfc3339, FormatTruncatesAndHandlesTimesBefore1970) {
  const system_clock::time_point t{std::chrono::microseconds(1796032800123999LL)};
  EXPECT_EQ(format_rfc3339(t), "2026-11-30T10:00:00.123Z");
  EXPECT_EQ(format_rfc3339(t, Rfc3339Fraction::seconds), "2026-11-30T10:00:00Z");
  EXPECT_EQ(format_rfc3339(t, Rfc3339Fraction::micros), "2026-11-30T10:00:00.123999Z");
  const system_clock::time_point before{std::chrono::milliseconds(-1)};
  EXPECT_EQ(format_rfc3339(before), "1969-12-31T23:59:59.999Z");
  const system_clock::time_point leap_day{std::chrono::seconds(951782400)};
  EXPECT_EQ(format_rfc3339(leap_day, Rfc3339Fraction::seconds), "2000-02-29T00:00:00Z");
}

TEST(Rfc3339, FormatThenParseIsTheIdentityAtMilliseconds) {
  for (long long ms :
       {0LL, 1LL, 999LL, 86399999LL, 951782399999LL, 1796032800123LL, -86400001LL, 7258118399999LL}) {
    const system_clock::time_point t{std::chrono::milliseconds(ms)};
    auto back = parse_rfc3339(format_rfc3339(t));
    ASSERT_TRUE(back) << ms;
    EXPECT_EQ(*back, t) << format_rfc3339(t);
  }
}

TEST(Rfc3339, FromUnixSeconds) {
  EXPECT_EQ(format_rfc3339(from_unix_seconds(1796032800.25)), "2026-11-30T10:00:00.250Z");
  EXPECT_EQ(format_rfc3339(from_unix_seconds(0)), "1970-01-01T00:00:00.000Z");
}

TEST(Rfc3339, UnixSecondsKeepTheFractionBothWays) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(1796032800123LL));
  EXPECT_DOUBLE_EQ(unix_seconds(t), 1796032800.123);
  // A fraction a double holds exactly comes back to the nanosecond.
  const auto quarter = std::chrono::system_clock::time_point(std::chrono::milliseconds(1796032800250LL));
  EXPECT_EQ(from_unix_seconds(unix_seconds(quarter)), quarter);
  EXPECT_DOUBLE_EQ(unix_seconds(std::chrono::system_clock::time_point{}), 0.0);
}

}  // namespace
