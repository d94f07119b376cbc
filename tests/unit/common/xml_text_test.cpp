#include "common/xml_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace bootstorm {
namespace {

TEST(EscapeXml, MarkupAndBothQuotesAreEscaped) {
  EXPECT_EQ(escape_xml("a < b && c > \"d\" 'e'"), "a &lt; b &amp;&amp; c &gt; &quot;d&quot; &#39;e&#39;");
  EXPECT_EQ(escape_xml("caf\xc3\xa9 vm-42"), "caf\xc3\xa9 vm-42");
}

TEST(EscapeXml, ControlsXmlCannotCarryBecomeSpacesAndTabsAndNewlinesStay) {
  EXPECT_EQ(escape_xml(std::string("a\x01"
                                   "b\x1f"
                                   "c\x00"
                                   "d",
                                   7)),
            "a b c d");
  EXPECT_EQ(escape_xml("a\tb\nc\rd"), "a\tb\nc\rd");
}

}  // namespace
}  // namespace bootstorm
