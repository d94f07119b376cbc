// One-line SLOs for `bootstorm capacity --slo`: what parses, what each bad form says.
#include "results/slo_text.hpp"

#include <gtest/gtest.h>

namespace bootstorm::results {
namespace {

TEST(SloText, TheIssuesExampleAndItsShortForms) {
  for (const char* text : {"ready p95 <= 60s", "p95<=60s", "  ready   p95   <=   1m ", "ready p95 <= 60"}) {
    auto slo = parse_slo_text(text);
    ASSERT_TRUE(slo) << text << ": " << slo.error().what();
    EXPECT_EQ(slo->milestone, "ready") << text;
    EXPECT_EQ(slo->stat, "p95") << text;
    EXPECT_DOUBLE_EQ(slo->max, 60) << text;
    EXPECT_FALSE(slo->is_min) << text;
  }
}

TEST(SloText, OtherMilestonesStatisticsAndUnits) {
  auto slo = parse_slo_text("guest_agent max <= 1m30s");
  ASSERT_TRUE(slo);
  EXPECT_EQ(slo->milestone, "guest_agent");
  EXPECT_EQ(slo->stat, "max");
  EXPECT_DOUBLE_EQ(slo->max, 90);
  slo = parse_slo_text("ready mean <= 1500ms");
  ASSERT_TRUE(slo);
  EXPECT_DOUBLE_EQ(slo->max, 1.5);
}

TEST(SloText, ReadyFractionIsAFloorAsAFractionOrAPercentage) {
  auto slo = parse_slo_text("ready_fraction >= 99%");
  ASSERT_TRUE(slo);
  EXPECT_TRUE(slo->is_min);
  EXPECT_DOUBLE_EQ(slo->max, 0.99);
  slo = parse_slo_text("ready ready_fraction >= 0.95");
  ASSERT_TRUE(slo);
  EXPECT_DOUBLE_EQ(slo->max, 0.95);
}

TEST(SloText, RendersBackAsWritten) {
  EXPECT_EQ(slo_text(*parse_slo_text("p95 <= 60s")), "ready p95 <= 60s");
  EXPECT_EQ(slo_text(*parse_slo_text("ready_fraction >= 99%")), "ready ready_fraction >= 0.99");
  EXPECT_EQ(slo_text(*parse_slo_text("guest_agent p50 <= 2.5s")), "guest_agent p50 <= 2.5s");
  EXPECT_EQ(slo_text(*parse_slo_text("p95 <= 1e7")), "ready p95 <= 1e+07");
  EXPECT_DOUBLE_EQ(parse_slo_text(slo_text(*parse_slo_text("p95 <= 1e7")))->max, 1e7);
}

void expect_error(const char* text, const char* says) {
  auto slo = parse_slo_text(text);
  ASSERT_FALSE(slo) << text;
  EXPECT_EQ(slo.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(slo.error().what().find(says), std::string::npos) << text << " -> " << slo.error().what();
  EXPECT_NE(slo.error().what().find("ready p95 <= 60s"), std::string::npos) << "the example is missing";
}

TEST(SloText, EveryBadFormSaysWhatIsWrong) {
  expect_error("", "no comparison");
  expect_error("ready p95 60s", "no comparison");
  expect_error("ready p97 <= 60s", "'p97' is not a statistic");
  expect_error("booted p95 <= 60s", "'booted' is not a milestone");
  expect_error("ready p95 < 60s", "use <=");
  expect_error("ready p95 >= 60s", "use <=");
  expect_error("ready_fraction <= 0.9", "use >=");
  expect_error("ready p95 <= sixty", "not a duration");
  expect_error("ready p95 <=", "no value");
  expect_error("ready p95 <= 0s", "more than zero");
  expect_error("ready_fraction >= 120%", "not a fraction");
  expect_error("the ready p95 <= 60s", "got 3 word(s)");
  expect_error("ready p95 <= inf", "not a finite time");
  expect_error("ready_fraction >= nan", "not a fraction");
}

}  // namespace
}  // namespace bootstorm::results
