#include "common/json_string.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace bootstorm {
namespace {

TEST(JsonQuoted, EscapesAsGoEncodingJsonDoes) {
  const auto go = [](std::string_view s) { return json_quoted(s, JsonHtml::escape); };
  EXPECT_EQ(go("plain"), "\"plain\"");
  EXPECT_EQ(go("a\"b\\c\nd\te\r"), R"("a\"b\\c\nd\te\r")");
  EXPECT_EQ(go("<&>"), R"("\u003c\u0026\u003e")");
  EXPECT_EQ(go(std::string("\x01\x1f", 2)), R"("\u0001\u001f")");
  EXPECT_EQ(go("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(go("bad\xff"), R"("bad\ufffd")");
  EXPECT_EQ(go("\xc3"), R"("\ufffd")");                      // truncated sequence
  EXPECT_EQ(go("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");  // a surrogate is not UTF-8
  EXPECT_EQ(go("\xe2\x80\xa8"), R"("\u2028")");
}

TEST(JsonQuoted, KeepsMarkupForPeopleAndStaysValidJson) {
  EXPECT_EQ(json_quoted("<a & b>"), "\"<a & b>\"");
  // Whatever bytes a log message holds, the line parses, and valid text comes back unchanged.
  const std::string bytes("x\x00y\x7f\xff\xc3\xa9\"\\", 10);
  const auto parsed = nlohmann::json::parse(json_quoted(bytes));
  EXPECT_EQ(parsed.get<std::string>(), std::string("x\x00y\x7f\xef\xbf\xbd\xc3\xa9\"\\", 12));
}

}  // namespace
}  // namespace bootstorm
