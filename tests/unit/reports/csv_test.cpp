#include "reports/csv.hpp"

#include <gtest/gtest.h>

namespace bootstorm::reports {
namespace {

TEST(Csv, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(" padded"), "\" padded\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(Csv, ParsesQuotedFieldsAndLineEnds) {
  auto rows = parse_csv("a,b,c\r\n\"x,1\",\"he said \"\"no\"\"\",\"multi\nline\"\n,,\nlast,row,");
  ASSERT_TRUE(rows.has_value()) << rows.error().what();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0], (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ((*rows)[1], (std::vector<std::string>{"x,1", "he said \"no\"", "multi\nline"}));
  EXPECT_EQ((*rows)[2], (std::vector<std::string>{"", "", ""}));
  EXPECT_EQ((*rows)[3], (std::vector<std::string>{"last", "row", ""}));
}

TEST(Csv, RoundTripsWhatItWrites) {
  const std::vector<std::string> fields = {"4x R740, 16GFC", "\"quoted\"", "", " lead", "plain"};
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_field(fields[i]);
  auto rows = parse_csv(line + "\n");
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front(), fields);
}

TEST(Csv, RejectsMalformedInput) {
  auto unterminated = parse_csv("a,\"open\nb,c\n");
  ASSERT_FALSE(unterminated.has_value());
  EXPECT_NE(unterminated.error().message.find("unterminated"), std::string::npos);
  auto stray = parse_csv("a,b\"c\n");
  ASSERT_FALSE(stray.has_value());
  EXPECT_NE(stray.error().message.find("line 1"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm::reports
