#include "common/duration.hpp"

#include <gtest/gtest.h>

namespace bootstorm {
namespace {

using namespace std::chrono_literals;

TEST(ParseDuration, AcceptsGoStyleDurations) {
  EXPECT_EQ(parse_duration("10m"), std::chrono::nanoseconds(10min));
  EXPECT_EQ(parse_duration("30s"), std::chrono::nanoseconds(30s));
  EXPECT_EQ(parse_duration("1500ms"), std::chrono::nanoseconds(1500ms));
  EXPECT_EQ(parse_duration("1h30m"), std::chrono::nanoseconds(90min));
  EXPECT_EQ(parse_duration("0s"), std::chrono::nanoseconds(0));
  EXPECT_EQ(parse_duration("0"), std::chrono::nanoseconds(0));
  EXPECT_EQ(parse_duration("2.5s"), std::chrono::nanoseconds(2500ms));
  EXPECT_EQ(parse_duration("1h2m3s4ms"), std::chrono::nanoseconds(1h + 2min + 3s + 4ms));
  EXPECT_EQ(parse_duration("250us"), std::chrono::nanoseconds(250us));
  EXPECT_EQ(parse_duration("7ns"), std::chrono::nanoseconds(7));
}

TEST(ParseDuration, RejectsEverythingElse) {
  for (const char* bad : {"", "ten minutes", "10", "10 m", "m", "-5s", "+5s", "1d", "1.s.5", ".s", "5S",
                          "1h 30m", "10m ", " 10m", "1..5s"}) {
    EXPECT_FALSE(parse_duration(bad).has_value()) << '"' << bad << '"';
  }
}

TEST(FormatDuration, ShortestExactRendering) {
  EXPECT_EQ(format_duration(10min), "10m");
  EXPECT_EQ(format_duration(5400s), "1h30m");
  EXPECT_EQ(format_duration(1500ms), "1500ms");
  EXPECT_EQ(format_duration(0s), "0s");
  EXPECT_EQ(format_duration(61s), "1m1s");
  EXPECT_EQ(format_duration(3h), "3h");
  EXPECT_EQ(format_duration(250us), "250us");
  EXPECT_EQ(format_duration(std::chrono::nanoseconds(7)), "7ns");
}

TEST(FormatDuration, RoundTripsThroughParse) {
  for (auto d :
       {std::chrono::nanoseconds(1), std::chrono::nanoseconds(999'999), std::chrono::nanoseconds(1500ms),
        std::chrono::nanoseconds(3723s), std::chrono::nanoseconds(86400s + 1ms)}) {
    auto text = format_duration(d);
    EXPECT_EQ(parse_duration(text), d) << text;
  }
}

}  // namespace
}  // namespace bootstorm
